"""The parts of a report's first screen that its verdict (lab.report.verdicts) and figures share:
the words of a title that name the configuration, and the steps of a saturation search."""

from __future__ import annotations

import math

from ..results import is_measured, worst
from . import fmt, runs, views


def where(run: dict, kind: str) -> str:
    """"kvlab fixed-rate phases", "kvlab saturation search on Kubernetes": the title's opening,
    which names the kind of run."""
    return f"kvlab {kind}" + (" on Kubernetes" if run.get("executor") == "k8s" else "")


def nodes(run: dict) -> str:
    """"3 nodes", "3 pods", "1 node"."""
    n = runs.node_count(run)
    return f"{n} {'pod' if run.get('executor') == 'k8s' else 'node'}{'' if n == 1 else 's'}"


def cluster(run: dict) -> str:
    """"3 nodes, replicas 2/3, k6 and wrk": the cluster and the load tools of a title."""
    return f"{nodes(run)}, replicas {runs.replicas(run)}, {' and '.join(runs.tools_used(run))}"


def rates(run: dict) -> str:
    """The rate the run asked for: its --rate, else the one its measured phases asked for (or
    their range)."""
    if run.get("config", {}).get("rate"):
        return f"{fmt.rate(run['config']['rate'])}/s"
    asked = sorted(
        {
            p["result"]["requested_rate"]
            for p in run.get("phases", [])
            if is_measured(p) and p.get("result", {}).get("requested_rate")
        }
    )
    if not asked:
        return "full speed"
    return f"{fmt.rate(asked[0])}/s" if len(asked) == 1 else f"{fmt.rate(asked[0])}–{fmt.rate(asked[-1])}/s"


def saturation_points(run: dict) -> list[dict]:
    """Every step of the run's search with its latency (p50, p99, p99.9 of the step's own phase
    when the run has it, else the search's p99) and its failed requests, for the saturation curve
    and table: in order of rate, as the bisection runs its steps between others."""
    sat = run.get("saturation") or {}
    phases = {p["label"]: p for p in run.get("phases", []) if views.is_step(run, p)}
    points = []
    for s in sat.get("steps", []):
        phase = phases.get(f"{sat.get('scenario')}@{s['rate']}")
        latency = (phase or {}).get("result", {}).get("latency")
        points.append(
            {
                "rate": s["rate"],
                "achieved": s["achieved_rate"],
                "ok": s.get("ok"),
                "p50": _worst(latency, "p50"),
                "p99": _worst(latency, "p99") if latency else s.get("p99_ms"),
                "p99_9": _worst(latency, "p99.9"),
                "error_rate": s.get("error_rate"),
            }
        )
    return sorted(points, key=lambda p: p["rate"])


def _worst(latency: dict | None, key: str) -> float | None:
    if not latency:
        return None
    v = worst({"latency": latency}, key)
    return None if math.isnan(v) else v


def sustained(sat: dict) -> dict:
    """The search's answer: the highest rate that met every condition, its step, and why the
    search stopped."""
    best_rate = sat.get("max_sustainable_rate")
    best = next((s for s in sat.get("steps", []) if s["rate"] == best_rate), None)
    return {
        "rate": best_rate,
        "step": best,
        "scenario": sat.get("scenario", "?"),
        "stop_reason": sat.get("stop_reason", ""),
    }
