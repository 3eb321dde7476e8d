"""Faults on a schedule (python -m lab faults, make lab SCENARIO=faults): the fill, a warm-up, then
one measured mixed phase during which nodes are killed, paused and cut off (lab.faults), the wait
for the cluster to heal, and per fault the figures of its recovery (lab.recovery)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import faults, options
from ..executor import CleansFaults, Executor, MakesFaults
from ..load import log
from ..runrecord import Run, checked
from ..settings import FaultPlan, RunConfig
from ..warmup import warm_up
from .scenario import Scenario


def run_faults(cfg: RunConfig, plan: FaultPlan, executor: Executor | None = None) -> Path:
    """Fill, warm up, then one measured mixed phase at the rate asked for, during which the faults
    of the schedule kill, pause or cut off nodes; then the wait for the cluster to heal, and per
    fault the figures of its recovery from the phase's time series."""
    with checked(cfg, executor) as executor:
        if isinstance(executor, CleansFaults):
            executor.clean_faults()
        made, left_out = make_faults(executor, plan)
        kept = [p for p, _ in made]
        duration = faults.phase_seconds(kept, plan.duration_s)
        if duration != plan.duration_s:
            log(
                f"faults: the phase runs {duration} s, until {faults.RECOVERY_S} s after the last fault "
                f"({plan.duration_s} s is too short)"
            )
        extra = {
            "faults": ",".join(p.text() for p in kept),
            "faults_left_out": left_out,
            "faults_phase_s": duration,
        }
        run = Run(cfg, "faults", extra, executor=executor)
        for item in left_out:
            log(f"fault {item['fault']} left out: {item['why']}")
        spec = cfg.spec("mixed", duration_s=duration)
        run.phase(cfg.spec("fill"), "fill", [])
        warm_up(run, spec, "mixed")
        log(f"faults: {', '.join(f.describe() + f' at {p.at_s:g} s for {p.for_s:g} s' for p, f in made)}")
        # Faulty nodes cannot be profiled: the phase is measured, not profiled.
        run.phase(spec, "faults", [], with_faults=[f for _, f in made])
        return run.finish()


def make_faults(executor: Executor, plan: FaultPlan) -> tuple[list[tuple[faults.Planned, faults.ScheduledFault]], list[dict]]:
    """The schedule's faults, made by the executor before any phase runs (not started); a fault the
    executor cannot make stops the run, or, in the default schedule, is left out with why."""
    if not isinstance(executor, MakesFaults):
        raise SystemExit(f"the {executor.name} executor cannot make faults")
    made, left_out = [], []
    for p, index in faults.place(plan.schedule, [n.name for n in executor.nodes]):
        try:
            made.append((p, executor.fault(p.kind, index, p.at_s, p.for_s)))
        except SystemExit as e:
            if plan.given:
                raise
            left_out.append({"fault": p.text(), "why": str(e)})
    if not made:
        raise SystemExit("no fault of the schedule can be made here: " + "; ".join(x["why"] for x in left_out))
    return made, left_out


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--faults",
        type=schedule,
        default=faults.DEFAULT_SCHEDULE,
        help="kind@at+for in seconds from the start of the phase's load, comma-separated; kinds "
        f"{', '.join(faults.KINDS)}; on the last node unless named (kill:n1@20+15). This default "
        f"({faults.DEFAULT_SCHEDULE}) leaves out a fault this machine cannot make (a cutoff needs "
        "root) and says why; another schedule that asks for one stops the run",
    )
    p.add_argument(
        "--pid-files",
        type=lambda s: [Path(x) for x in options.items(s)],
        default=[],
        help="files holding the nodes' PIDs, in --pids' order: a node killed and started again gets its "
        "new PID written there (scripts/local-cluster.sh's, so `down` stops it)",
    )


def schedule(text: str) -> list[faults.Planned]:
    """--faults' schedule (argparse's usage error, with how to write it, when it cannot be read)."""
    try:
        return faults.parse_schedule(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _main(a: argparse.Namespace) -> Path:
    plan = FaultPlan(a.faults, a.faults != faults.parse_schedule(faults.DEFAULT_SCHEDULE), a.duration)
    cfg = options.run_config(a, ["fill", "mixed"])
    return run_faults(cfg, plan, options.executor_of(a, cfg))


SCENARIO = Scenario(
    name="faults",
    command="faults",
    help="fill, warm up, then one mixed phase during which nodes are killed, paused and cut off on a schedule",
    add_options=_add_options,
    main=_main,
    epilog="--duration is the faulty phase's, lengthened to end "
    f"{faults.RECOVERY_S} s after the last fault when it leaves less than {faults.MIN_RECOVERY_S} s",
)
