"""The replication-cost benchmark's verdict: does a cluster serve a share of one
node's rate within the SLO?

`scripts/replication-cost.sh` runs, per scenario, one node's saturation search and then several
fixed-rate runs of the cluster at `share` of the rate that search found. This module reads those
runs' `run.json` files, whatever their order, and writes `summary.json` and `summary.md`: one
node's rate, the cluster's target, every cluster run's achieved rate and p99, and how many met it.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from . import defaults
from .results import is_measured, worst

# The benchmark's knobs (scripts/replication-cost.sh reads the same file).
KNOBS = defaults.read(Path(__file__).resolve().with_name("replication-cost.env"))
SHARE = float(KNOBS["SHARE"])


def load(run_dir: Path) -> dict:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise SystemExit(f"{run_dir}: no run.json (not a lab run directory)")
    doc = json.loads(path.read_text())
    doc["_dir"] = Path(run_dir)
    return doc


def one_node_rate(doc: dict) -> int | None:
    """The highest rate a one-node saturation search sustained, or None when no step passed."""
    if doc.get("kind") != "saturation" or len(doc.get("nodes", [])) != 1:
        raise SystemExit(f"{doc['_dir']}: not a saturation search on one node")
    return doc["saturation"].get("max_sustainable_rate")


def target_rate(rate: int, share_percent: float) -> int:
    """The cluster's rate: share_percent of one node's, rounded up so the target is never softened."""
    return math.ceil(rate * share_percent / 100)


def cluster_runs(doc: dict) -> list[dict]:
    """Every measured phase of a fixed-rate run: its scenario, rate, achieved rate, p99, failures."""
    out = []
    for phase in doc.get("phases", []):
        if not is_measured(phase) or "result" not in phase:
            continue
        r = phase["result"]
        out.append({
            "run": doc["_dir"].name,
            "scenario": phase["scenario"],
            "nodes": len(doc.get("nodes", [])),
            "replicas": r.get("replicas"),
            "rate": r["requested_rate"],
            "achieved_rate": r["achieved_rate"],
            "p99_ms": worst(r, "p99"),
            # Shown, not judged: with one wrk per node, each measured only its node's share.
            "slowest_target_p99_ms": max(
                (t["percentiles"]["p99"] for t in r.get("latency_by_target", {}).values()), default=None
            ),
            "error_rate": r.get("error_rate", 0),
        })
    return out


def meets(run: dict, tolerance: float, slo_p99_ms: float, max_error_rate: float) -> bool:
    return (run["achieved_rate"] >= run["rate"] * (1 - tolerance)
            and run["p99_ms"] <= slo_p99_ms
            and run["error_rate"] <= max_error_rate)


def summarize(run_dirs: list[Path], share_percent: float) -> dict:
    """Pairs each scenario's one-node search with the cluster runs of that scenario."""
    searches: dict[str, tuple[dict, int | None]] = {}  # scenario -> (the search, the rate it found)
    runs: dict[str, list[dict]] = {}
    for doc in map(load, run_dirs):
        if doc.get("kind") == "saturation":
            scenario = doc["saturation"]["scenario"]
            if scenario in searches:
                raise SystemExit(f"two one-node searches for {scenario}: {searches[scenario][0]['_dir']} and {doc['_dir']}")
            searches[scenario] = (doc, one_node_rate(doc))
        else:
            for run in cluster_runs(doc):
                runs.setdefault(run["scenario"], []).append(run)
    scenarios = []
    for scenario, (search, rate) in searches.items():
        # The cluster is held to the rules each step of the one-node search was: the rate within
        # its tolerance, the SLO, the failure limit.
        tolerance = search["saturation"]["tolerance"]
        slo = search["saturation"]["slo_p99_ms"]
        max_error_rate = search["config"]["max_error_rate"]
        entry = {
            "scenario": scenario,
            "one_node_run": search["_dir"].name,
            "one_node_rate": rate,
            "share_percent": share_percent,
            "slo_p99_ms": slo,
            "tolerance": tolerance,
            "target_rate": None if rate is None else target_rate(rate, share_percent),
            "runs": [],
        }
        for run in runs.pop(scenario, []):
            if run["rate"] != entry["target_rate"]:
                raise SystemExit(f"{run['run']}: {scenario} ran at {run['rate']}/s, not the target {entry['target_rate']}/s")
            entry["runs"].append({**run, "met": meets(run, tolerance, slo, max_error_rate)})
        p99s = [r["p99_ms"] for r in entry["runs"]]
        entry["met_runs"] = sum(r["met"] for r in entry["runs"])
        entry["median_p99_ms"] = statistics.median(p99s) if p99s else None
        entry["met"] = bool(entry["runs"]) and entry["met_runs"] == len(entry["runs"])
        scenarios.append(entry)
    if runs:
        raise SystemExit(f"cluster runs without a one-node search: {', '.join(sorted(runs))}")
    return {"share_percent": share_percent, "scenarios": scenarios}


def render(summary: dict) -> str:
    lines = [
        "# Replication cost",
        "",
        f"Does the cluster serve {summary['share_percent']:g} % of one node's rate within the SLO? One node's "
        "rate is the highest step of its saturation search that met the SLO; the cluster ran at the "
        "target several times, and a scenario is met only when every run met it as a step of the "
        "search must: its rate, p99 within the SLO, no failures beyond the limit.",
        "",
        "| scenario | one node | target | runs met | median p99, ms | verdict |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in summary["scenarios"]:
        one = "none within the SLO" if s["one_node_rate"] is None else f"{s['one_node_rate']}/s"
        target = "–" if s["target_rate"] is None else f"{s['target_rate']}/s"
        median = "–" if s["median_p99_ms"] is None else f"{s['median_p99_ms']:.1f}"
        verdict = "**met**" if s["met"] else "not met"
        lines.append(f"| {s['scenario']} | {one} | {target} | {s['met_runs']} of {len(s['runs'])} | {median} | {verdict} |")
    for s in summary["scenarios"]:
        lines += [
            "",
            f"## {s['scenario']}",
            "",
            f"One node's search: `{s['one_node_run']}`. SLO: p99 within {s['slo_p99_ms']:g} ms; "
            f"a run meets its rate within {s['tolerance'] * 100:g} %.",
            "",
            "p99 is of every request of the run. Where one wrk per node sent the load, the p99 of the "
            "slowest node's share (the requests its own wrk sent it) is shown next to it.",
            "",
            "| run | nodes | ack/from | requested | achieved | p99, ms | slowest node's p99, ms | failed | met |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in s["runs"]:
            slowest = r.get("slowest_target_p99_ms")
            lines.append(
                f"| `{r['run']}` | {r['nodes']} | {r['replicas'] or 'default'} | {r['rate']}/s | "
                f"{r['achieved_rate']:.0f}/s | {r['p99_ms']:.2f} | {'–' if slowest is None else f'{slowest:.2f}'} | "
                f"{r['error_rate'] * 100:.2f}% | {'yes' if r['met'] else 'no'} |"
            )
    return "\n".join(lines) + "\n"


def write(summary: dict, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "summary.md").write_text(render(summary))
    return out
