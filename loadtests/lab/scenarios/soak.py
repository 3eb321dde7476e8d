"""The soak (make lab SCENARIO=soak): does the cluster hold a steady load for a long time without
its latency, memory, open files or disk drifting?

Fill, warm up, then one mixed phase of SOAK_DURATION at SOAK_SHARE of the highest rate the cluster
sustains within the SLO. That rate comes from SOAK_RATE: "search" runs a short saturation search of
the mixed load first (the SEARCH_* knobs but SEARCH, its steps not profiled); a number is the soak's
rate itself; a run directory takes the highest rate that run's saturation search sustained. During
the soak the nodes' resources are sampled every SOAK_SAMPLE (lab.resources) beside the phase's time
series; the report compares its first window with its last (lab.soakdrift). The soak is measured,
not profiled: profiling windows one after another would load its first and last minutes differently.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .. import defaults, nodeseries, options, resources, tools
from ..executor import Executor
from ..load import log
from ..runrecord import Run, checked
from ..settings import RunConfig, Saturation
from ..warmup import warm_up
from .saturation import add_search_options, saturation_of, search
from .scenario import Scenario

LABEL = "soak"
MIN_DURATION_S = 60


@dataclass
class SoakPlan:
    """The soak's settings; every default comes from defaults.env (lab.defaults)."""

    duration_s: int = defaults.seconds("SOAK_DURATION")
    rate: str = defaults.text("SOAK_RATE")  # search | requests/s | a run directory
    share: float = defaults.number("SOAK_SHARE")
    window_s: int = defaults.seconds("SOAK_WINDOW")
    sample_s: int = defaults.seconds("SOAK_SAMPLE")
    p99_drift: float = defaults.number("SOAK_P99_DRIFT")

    def check(self) -> None:
        """SystemExit, saying why, for settings the soak cannot run with."""
        longest = int(nodeseries.MAX_SAMPLES * nodeseries.INTERVAL_S)
        if not MIN_DURATION_S <= self.duration_s <= longest:
            raise SystemExit(
                f"--soak-duration {self.duration_s}s: a soak lasts from {MIN_DURATION_S} s (its first and last "
                f"windows need seconds to compare) to {longest // 3600} h (what the node sampler holds)"
            )
        if not 0 < self.share <= 1:
            raise SystemExit(f"--soak-share {self.share:g}: a share of the highest rate, above 0 and at most 1")
        if self.window_s < 1 or self.sample_s < 1 or self.p99_drift < 0:
            raise SystemExit("--soak-window and --soak-sample are at least 1 s, --soak-p99-drift at least 0")
        source(self.rate)


def source(text: str) -> int | Path | None:
    """What --soak-rate names: None for a search, a rate, or a run directory with a saturation search."""
    text = text.strip()
    if text == "search":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    for path in (Path(text), tools.ROOT / text):
        if (path / "run.json").is_file():
            return path
    raise SystemExit(f"--soak-rate {text!r}: search, a rate in requests/s, or a run directory with a saturation search")


def searched_rate(run_dir: Path) -> tuple[int, dict]:
    """The highest rate a run's saturation search sustained, and that search."""
    sat = json.loads((run_dir / "run.json").read_text()).get("saturation") or {}
    best = sat.get("max_sustainable_rate")
    if not best:
        raise SystemExit(f"{tools.rel(run_dir)}: its saturation search sustained no rate within the SLO; give SOAK_RATE")
    if sat.get("scenario") != "mixed":
        log(f"soak: {tools.rel(run_dir)}'s search loaded {sat.get('scenario')}, not the soak's mixed load")
    return best, sat


def run_soak(cfg: RunConfig, plan: SoakPlan, sat: Saturation, executor: Executor | None = None) -> Path:
    """Fill, warm-up, the rate (a search, given, or an earlier search's), then the soak with its
    resources sampled; run.json's "soak" says where its rate came from and what was sampled."""
    plan.check()
    given = source(plan.rate)
    sat = replace(sat, scenario="mixed", fill=False)
    if cfg.events:
        log("soak: not profiled (profiling windows would load its first and last minutes differently)")
        cfg = replace(cfg, events=[])
    with checked(cfg, executor) as executor:
        extra = {"soak": asdict(plan)} | ({"saturation": asdict(sat)} if given is None else {})
        run = Run(cfg, "soak", extra, executor=executor)
        run.phase(cfg.spec("fill"), "fill", [])
        if given is None:
            warm_up(run, cfg.spec("mixed", sat.start_rate), f"mixed@{sat.start_rate}")
            found = search(run, sat, [])
            best, origin = found.get("max_sustainable_rate"), {"from": "search", "scenario": "mixed"}
        elif isinstance(given, Path):
            best, found = searched_rate(given)
            origin = {"from": "report", "run": tools.rel(given), "scenario": found.get("scenario")}
        else:
            best, origin = None, {"from": "given"}
        rate = given if isinstance(given, int) else (max(1, round(best * plan.share)) if best else None)
        run.doc["soak"] = {"phase": LABEL, "rate": rate, "highest_rate": best, "share": plan.share} | origin
        if rate is None:
            log("soak: no rate of the search was sustained within the SLO: nothing to soak at")
            run.save()
            return run.finish()
        run.doc["config"]["rate"] = rate
        spec = cfg.spec("mixed", rate, plan.duration_s)
        if given is not None:
            warm_up(run, spec, "mixed")
        log(f"soak: mixed at {rate}/s for {plan.duration_s} s, the nodes' resources every {plan.sample_s} s")
        sampler = resources.Sampler(resources.page_reader(executor), resources.process_reader(executor),
                                    plan.sample_s, log=log)
        with sampler:
            record = run.phase(spec, LABEL, [])
        record["resources"] = str(sampler.write(run.dir / record["dir"], t0_of(run.dir, record, sampler)).relative_to(run.dir))
        run.save()
        return run.finish()


def t0_of(run_dir: Path, record: dict, sampler: resources.Sampler) -> float:
    """The phase's second 0 (its time series'), else the first resource sample's time."""
    if record.get("timeseries"):
        return json.loads((run_dir / record["timeseries"]).read_text())["t0_epoch"]
    first = [rows[0]["t"] for rows in sampler.samples.values() if rows]
    return min(first, default=0.0)


def add_soak_options(p: argparse.ArgumentParser) -> None:
    """The soak's own options; the search's too, for SOAK_RATE=search (all but --search: it loads
    the soak's mixed load)."""
    d = SoakPlan()
    add_search_options(p, "not used: the search of --soak-rate search loads the soak's mixed load")
    p.add_argument("--soak-duration", type=options.duration, default=d.duration_s, help=f"the soak's load ({d.duration_s} s)")
    p.add_argument(
        "--soak-rate",
        default=d.rate,
        help="search: a short saturation search of the mixed load first (the search options but --search); "
        f"a number: the soak's rate; a run directory: its search's highest rate ({d.rate})",
    )
    p.add_argument("--soak-share", type=float, default=d.share,
                   help=f"of the highest rate within the SLO, the soak's rate ({d.share:g})")
    p.add_argument("--soak-window", type=options.duration, default=d.window_s,
                   help=f"the first and the last this long are compared; a sixth of a soak shorter than six ({d.window_s} s)")
    p.add_argument("--soak-sample", type=options.duration, default=d.sample_s,
                   help=f"the nodes' memory, files and disk read every ({d.sample_s} s)")
    p.add_argument("--soak-p99-drift", type=float, default=d.p99_drift,
                   help=f"the last window's p99 may be this share above the first's ({d.p99_drift:g})")


def plan_of(a: argparse.Namespace) -> SoakPlan:
    return SoakPlan(a.soak_duration, a.soak_rate, a.soak_share, a.soak_window, a.soak_sample, a.soak_p99_drift)


def _main(a: argparse.Namespace) -> Path:
    cfg = options.run_config(a, ["fill", "mixed"])
    return run_soak(cfg, plan_of(a), saturation_of(a, fill=False), options.executor_of(a, cfg))


SCENARIO = Scenario(
    name="soak",
    command="soak",
    help="fill, warm up, then the mixed load for a long time at a share of the highest rate within the SLO: drift",
    add_options=add_soak_options,
    main=_main,
)
