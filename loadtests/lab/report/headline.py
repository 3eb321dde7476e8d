"""The first screen of a report: a title that names the configuration, and a verdict box that
answers what a reader asks first: did each phase get the rate it asked for within the SLO, and how
much can the cluster take (the highest rate a saturation search sustained)."""

from __future__ import annotations

import math

from ..results import is_measured, worst
from . import fmt, runs, views


def title(run: dict) -> str:
    """"kvlab: 3 nodes, replicas 2/3, k6 at 500/s"; a search, a hot-path run and a run in
    Kubernetes say so."""
    cfg = run.get("config", {})
    n = runs.node_count(run)
    k8s = run.get("executor") == "k8s"
    where = "kvlab on Kubernetes" if k8s else "kvlab"
    nodes = f"{n} {'pod' if k8s else 'node'}{'' if n == 1 else 's'}"
    tools = " and ".join(runs.tools_used(run))
    if run.get("kind") == "hotpath":
        hp = cfg.get("hotpath", {})
        return (
            f"kvlab hot path: {nodes}, {tools}, GET at "
            f"{' and '.join(fmt.rate(r) for r in hp.get('get_rates') or [hp.get('get_rate')])}/s "
            f"and PUT at {fmt.rate(hp.get('put_rate'))}/s"
        )
    if run.get("kind") == "scale":
        sc = run.get("scale") or {}
        sizes = sc.get("sizes") or [0]
        limit = (sc.get("memory") or {}).get("limit", "?")
        enforced = "enforced" if (sc.get("memory") or {}).get("enforced") else "not enforced"
        return (
            f"kvlab scale: {nodes}, {fmt.rate(sizes[0])} to {fmt.rate(sizes[-1])} keys of {sc.get('value_size', '?')} "
            f"bytes, {tools} at {fmt.rate(sc.get('rate'))}/s, memory limit {limit} ({enforced})"
        )
    head = f"{where}: {nodes}, replicas {runs.replicas(run)}, {tools}"
    if run.get("kind") == "saturation":
        sat = run.get("saturation") or cfg.get("saturation", {})
        return f"{head}, {sat.get('scenario', '?')} from {fmt.rate(sat.get('start_rate'))}/s up (saturation search)"
    return f"{head} at {rates(run)}"


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
    when the run has it, else the search's p99) for the saturation curve."""
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
            }
        )
    return points


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


def verdict(run: dict, phase_views: list[dict]) -> dict:
    """Per measured fixed-rate phase: rate achieved of asked, p99 against the SLO, errors; and the
    saturation search's highest sustained rate when one ran."""
    slo = run.get("config", {}).get("slo_p99_ms")
    rows = []
    for v in phase_views:
        if not v["measured"] or v["step"]:
            continue
        rows.append(
            {
                "label": v["label"] + {0: "", 1: " (with a fault)"}.get(len(v["fault_records"]), " (with faults)"),
                "rate": (
                    f"{fmt.rate(v['achieved'])} of {fmt.rate(v['requested'])}/s ({fmt.pct(v['achieved_share'], 1)})"
                    if v["requested"]
                    else f"{fmt.rate(v['achieved'])}/s"
                ),
                "p99": f"{fmt.ms(v['p99'])} ms" + (" (from the send)" if v["uncorrected"] else ""),
                "slo": "–" if slo is None or v["p99"] is None else ("met" if v["slo_met"] else "**missed**"),
                "errors": fmt.pct(v["error_rate"]),
            }
        )
    sat = run.get("saturation")
    return {
        "slo": slo,
        "rows": rows,
        "uncorrected": any(v["uncorrected"] for v in phase_views if v["measured"]),
        "saturation": sustained(sat) if sat and sat.get("steps") else None,
    }
