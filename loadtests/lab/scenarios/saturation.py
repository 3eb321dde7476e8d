"""The saturation search: the rate stepped up (by FACTOR a step) until p99 passes the SLO, the
achieved rate falls behind or requests fail, then bisected between the last rate that held and the
first that failed (lab.search); the highest rate sustained. Alone (python -m lab
saturate: a fill, a warm-up, every step profiled), or short after a fixed-rate run's phases."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from .. import options
from .. import search as search_rule
from ..executor import Executor
from ..load import log
from ..results import worst
from ..runrecord import Run, checked
from ..settings import RunConfig, Saturation
from ..warmup import warm_up
from .scenario import Scenario

SEARCHES = ["get", "put", "mixed", "range", "multiget", "status"]


def run_saturation(cfg: RunConfig, sat: Saturation, executor: Executor | None = None) -> Path:
    """A saturation search alone: the fill (for reads), a warm-up, the steps, each profiled."""
    with checked(cfg, executor) as executor:
        run = Run(cfg, "saturation", {"saturation": asdict(sat)}, executor=executor)
        if sat.fill and sat.scenario in ("get", "mixed", "range", "multiget"):
            run.phase(cfg.spec("fill"), "fill", [])
        warm_up(run, cfg.spec(sat.scenario, sat.start_rate), f"{sat.scenario}@{sat.start_rate}")
        search(run, sat, cfg.events)
        return run.finish()


def search(run: Run, sat: Saturation, events: list[str]) -> dict:
    """Steps the rate up until p99 passes the SLO, the achieved rate falls behind or requests fail
    (down, when the first step fails already, until a rate holds), then bisects between the last
    rate that held and the first that failed (lab.search); run.json's "saturation" holds the steps
    and the highest rate sustained, and each step's phase record is marked saturation_step."""
    cfg = run.cfg
    steps = []
    while (nxt := search_rule.next_rate(steps, sat.start_rate, sat.factor, sat.max_rate, sat.max_steps)).rate:
        step, why = measure(run, sat, nxt.rate, events)
        step["bisect"] = nxt.bisect
        if why:
            step["why"] = why
        steps.append(step)
        run.doc["saturation"] = {**asdict(sat), "slo_p99_ms": cfg.slo_p99_ms, "steps": steps}
        run.save()
    reason = nxt.reason
    passed = [s["rate"] for s in steps if s["ok"]]
    run.doc["saturation"] = {
        **asdict(sat),
        "slo_p99_ms": cfg.slo_p99_ms,
        "steps": steps,
        "precision": search_rule.PRECISION,
        "max_sustainable_rate": max(passed) if passed else None,
        "stop_reason": reason,
    }
    run.save()
    best = f"{max(passed)}/s" if passed else f"none (no step met the SLO, the first at {sat.start_rate}/s)"
    log(f"saturation: highest sustained rate {best}; stopped {reason}")
    return run.doc["saturation"]


def measure(run: Run, sat: Saturation, rate: int, events: list[str]) -> tuple[dict, str]:
    """One step at rate: its figures and whether it held, and why not when it did not."""
    cfg = run.cfg
    label = f"{sat.scenario}@{rate}"
    rec = run.phase(cfg.spec(sat.scenario, rate, sat.step_duration_s), label, events)
    rec["saturation_step"] = True
    r = rec["result"]
    p99 = worst(r, "p99")
    why = []
    if not p99 <= cfg.slo_p99_ms:
        why.append(f"p99 {p99:.2f} ms > SLO {cfg.slo_p99_ms:g} ms")
    if r["achieved_rate"] < rate * (1 - sat.tolerance):
        why.append(f"achieved {r['achieved_rate']:.0f}/s < {rate}/s - {sat.tolerance * 100:g}%")
    if r.get("error_rate", 0) > cfg.max_error_rate:
        why.append(f"{r['error_rate'] * 100:.2f}% of requests failed")
    step = {
        "label": label,
        "rate": rate,
        "achieved_rate": r["achieved_rate"],
        "p99_ms": p99,
        "error_rate": r.get("error_rate", 0),
        "ok": not why,
    }
    return step, "; ".join(why)


def add_search_options(p: argparse.ArgumentParser, what: str) -> None:
    """What a saturation search loads (what: its help) and how it steps the rate."""
    S = Saturation()
    p.add_argument("--search", "--scenario", choices=[*SEARCHES, "none"], default=S.scenario, help=f"{what} ({S.scenario})")
    p.add_argument("--search-steps", type=int, default=S.max_steps, help=f"steps at most ({S.max_steps})")
    p.add_argument("--search-step", type=options.duration, default=S.step_duration_s, help=f"each step ({S.step_duration_s}s)")
    p.add_argument("--start-rate", type=int, default=S.start_rate, help=f"the first step's rate ({S.start_rate}/s)")
    p.add_argument("--factor", type=float, default=S.factor, help=f"rate multiplier per step ({S.factor:g})")
    p.add_argument("--max-rate", type=int, default=S.max_rate, help=f"the highest rate tried ({S.max_rate}/s)")
    p.add_argument("--tolerance", type=float, default=S.tolerance,
                   help=f"how far the achieved rate may fall behind the requested one ({S.tolerance:g})")


def saturation_of(a: argparse.Namespace, fill: bool) -> Saturation:
    return Saturation(
        scenario=a.search,
        start_rate=a.start_rate,
        factor=a.factor,
        max_rate=a.max_rate,
        max_steps=a.search_steps,
        step_duration_s=a.search_step,
        tolerance=a.tolerance,
        fill=fill,
    )


def _add_options(p: argparse.ArgumentParser) -> None:
    add_search_options(p, "the load stepped up")
    p.add_argument("--no-fill", action="store_true", help="the key space is filled already")


def _main(a: argparse.Namespace) -> Path:
    if a.search == "none":
        raise SystemExit("a saturation search needs a load to step up: --search get, put, mixed, range or status")
    cfg = options.run_config(a, [a.search])
    return run_saturation(cfg, saturation_of(a, fill=not a.no_fill), options.executor_of(a, cfg))


SCENARIO = Scenario(
    name="saturation",
    command="saturate",
    help="step the rate up until the SLO breaks; report the maximum",
    add_options=_add_options,
    main=_main,
)
