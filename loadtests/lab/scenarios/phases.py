"""Phases at a fixed rate (python -m lab run, make lab): the fill, then each phase of --phases at
its rate, warmed up first and profiled on every node, then a short saturation search."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import options
from ..executor import Executor
from ..runrecord import Run, checked
from ..settings import RunConfig
from ..warmup import reconnect, warm_up, warmed_by
from .saturation import add_search_options, saturation_of, search
from .scenario import Scenario

PHASES = ("fill", "put", "get", "mixed", "range", "conditional", "multiget", "status", "ttl", "outage")
# Loads only a k6 script sends here: a mix of requests (a wrk process sends one kind), and the fill
# (below).
K6_ONLY = ("fill", "mixed")
# The outage phase: the mixed load, during which the last node is frozen for the middle third.
OUTAGE_SCENARIO = "mixed"


def phase_spec(text: str) -> tuple[str, str | None]:
    """A phase of --phases: a scenario, or scenario@tool to run it with another load generator
    than --tool in the same run (get@wrk next to get compares k6 and wrk on one workload)."""
    scenario, _, tool = text.partition("@")
    if scenario == "outage" and tool:
        raise SystemExit(f"phase {text!r}: the outage phase runs the mixed load on k6")
    if scenario not in PHASES:
        raise SystemExit(f"unknown phase {text!r}: {', '.join(PHASES)}, optionally @k6 or @wrk")
    if tool and tool not in ("k6", "wrk"):
        raise SystemExit(f"unknown tool in phase {text!r}: @k6 or @wrk")
    if tool == "wrk" and scenario in K6_ONLY:
        # wrk's fill (loadtests/wrk2/fill.lua) marks its end in files on this machine, which a load
        # generator in Kubernetes cannot: only the scale benchmark, on a node of its own, uses it.
        # The mixed load is GETs and PUTs at READ_SHARE, and a wrk process sends one kind of
        # request. (Conditional updates and multi-gets have wrk scripts: wrk's Lua formats
        # bodies and headers, and reads an answer's headers in response().)
        raise SystemExit(f"phase {text!r}: the {scenario} phase runs on k6 only")
    return scenario, tool or None


def run_phases(cfg: RunConfig, executor: Executor | None = None) -> Path:
    phases = [phase_spec(p) for p in cfg.phases]
    with checked(cfg, executor) as executor:
        run = Run(cfg, "phases", executor=executor)
        if any(phase == "outage" for phase, _ in phases):
            run.outage(0, 0)  # refused before the first phase, not after the fill
        warm = set()
        previous = None
        for text, (phase, tool) in zip(cfg.phases, phases):
            outage = phase == "outage"
            scenario = OUTAGE_SCENARIO if outage else phase
            spec = cfg.spec(scenario, tool=tool)
            if scenario != "fill" and scenario not in warm:
                warm_up(run, spec, text)
            elif scenario != "fill" and previous == "fill":
                reconnect(run, spec, text)  # the fill warmed it, on the fill's connections
            # A frozen node cannot be profiled: the outage phase is measured, not profiled.
            run.phase(spec, text, [] if outage else cfg.events, outage=outage)
            warm |= warmed_by(scenario, warm)
            previous = scenario
        if cfg.search:
            # How much can it take: a short search after the fixed rates, its steps not profiled.
            sat = cfg.search
            if sat.scenario not in warm:
                warm_up(run, cfg.spec(sat.scenario, sat.start_rate), f"{sat.scenario}@{sat.start_rate}")
            search(run, sat, [])
        return run.finish()


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--phases",
        type=options.items,
        default=options.D.phases,
        help=f"in order, from {', '.join(PHASES)}; get@wrk runs one with another tool than --tool; "
        "outage runs the mixed load with the last node paused for its middle third, then waits for the "
        f"cluster to heal ({','.join(options.D.phases)})",
    )
    add_search_options(p, "after the phases, how much can it take: a short saturation search of this load, or none")


def _main(a: argparse.Namespace) -> Path:
    cfg = options.run_config(a, a.phases)
    if a.search != "none" and a.search_steps > 0:
        cfg.search = saturation_of(a, fill=False)
    return run_phases(cfg, options.executor_of(a, cfg))


SCENARIO = Scenario(
    name="phases",
    command="run",
    help="phases at a fixed rate, profiled, then a short saturation search, then the report",
    add_options=_add_options,
    main=_main,
)
