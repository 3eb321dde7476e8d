"""A soak's report: its verdict (the shared verdict's rows, lab.report.verdicts' schema) and the
section that shows the drift, figure by figure and node by node, from lab.soakdrift."""

from __future__ import annotations

from .. import defaults, results, soakdrift
from . import fmt, runs

# How far the achieved rate may fall behind the soak's, as a saturation step may (the run's search's, else the default).
RATE_TOLERANCE = defaults.number("TOLERANCE")


def rate_origin(soak: dict) -> str:
    """Where the soak's rate came from, in words."""
    share = f"{soak.get('share', 0) * 100:g} %"
    best = soak.get("highest_rate")
    if soak.get("from") == "search":
        if best is None:
            return "no rate of the mixed search at its start was sustained within the SLO"
        return f"{share} of {fmt.rate(best)}/s, the highest mixed rate the search at its start sustained within the SLO"
    if soak.get("from") == "report":
        return f"{share} of {fmt.rate(best)}/s, the highest {soak.get('scenario', '?')} rate the search of {soak.get('run')} sustained"
    return "as given by SOAK_RATE"


def title(run: dict) -> str:
    soak = run.get("soak") or {}
    n = runs.node_count(run)
    k8s = run.get("executor") == "k8s"
    where = "kvlab soak on Kubernetes" if k8s else "kvlab soak"
    nodes = f"{n} {'pod' if k8s else 'node'}{'' if n == 1 else 's'}"
    duration = fmt.duration(run["config"]["soak"]["duration_s"])
    head = f"{where}: {nodes}, replicas {runs.replicas(run)}, mixed"
    if not soak.get("rate"):
        return f"{head} for {duration}: no rate to soak at"
    return f"{head} at {fmt.rate(soak['rate'])}/s for {duration}"


def _change(j: dict, unit: str) -> str:
    if j["first"] is None or j["last"] is None:
        return "–"
    growth = j["last"] - j["first"]
    sign = "+" if growth >= 0 else "−"
    pct = f" ({sign}{abs(growth) / j['first'] * 100:.1f} %)" if j["first"] else ""
    return f"{sign}{soakdrift.show(abs(growth), unit)} {unit}{pct}"


def _level(value: float | None, unit: str) -> str:
    return "–" if value is None else f"{soakdrift.show(value, unit)} {unit}"


def drift_rows(d: dict) -> list[dict]:
    """The drift table: a row per figure and node (the whole load for p99)."""
    rows = []
    for f in d["figures"]:
        tol = f["tolerance"]
        if not f["nodes"] or all(j["ok"] is None for j in f["nodes"].values()):
            rows.append({"figure": tol.title, "node": "–", "first": "–", "last": "–", "change": "–",
                         "limit": "–", "status": f"not measured: {f['why']}"})
            continue
        for node, j in sorted(f["nodes"].items()):
            rows.append({
                "figure": tol.title,
                "node": "every request" if node == "all" else node,
                "first": _level(j["first"], tol.unit),
                "last": _level(j["last"], tol.unit),
                "change": _change(j, tol.unit),
                "limit": _level(j["limit"], tol.unit),
                "status": "–" if j["ok"] is None else ("within" if j["ok"] else f"**{tol.drift}**"),
            })
    return rows


def _drift_row(f: dict, window: str) -> dict:
    """The verdict's row of one figure: its worst node against its limit."""
    tol = f["tolerance"]
    check = f"{tol.title}: the last {window} against the first"
    found = soakdrift.worst(f)
    if found is None:
        return {"check": check, "observed": f"not measured: {f['why']}", "target": tol.rule(),
                "status": "info", "gate": "none"}
    node, j = found
    who = "" if node == "all" else f"{node}{' (nearest its limit)' if len(f['nodes']) > 1 else ''}: "
    return {
        "check": check,
        "observed": f"{who}{_level(j['first'], tol.unit)} → {_level(j['last'], tol.unit)}, {_change(j, tol.unit)}",
        "target": f"≤ {_level(j['limit'], tol.unit)} ({tol.rule()})",
        "status": "pass" if j["ok"] else "fail",
        "gate": "performance",
    }


def verdict(run: dict) -> dict:
    """The soak's verdict: did it hold its rate within the SLO, and did its latency, memory, open
    files and disk stay within their tolerances from the first window to the last."""
    soak = run.get("soak") or {}
    cfg = run["config"]
    duration = fmt.duration(cfg["soak"]["duration_s"])
    rate = soak.get("rate")
    base = {"kind": "soak", "executor": run.get("executor", "local"), "title": title(run)}
    question = (
        f"Does the cluster hold {f'{fmt.rate(rate)}/s' if rate else 'a steady rate'} of the mixed load for {duration} "
        "without its latency, memory, open files or disk drifting?"
    )
    phase = soakdrift.soak_phase(run)
    if not rate or phase is None:
        why = rate_origin(soak) if not rate else "the soak phase did not run"
        row = {"check": "the soak's rate", "observed": f"none: {why}",
               "target": f"{soak.get('share', 0) * 100:g} % of the highest rate within the SLO",
               "status": "fail", "gate": "performance"}
        return base | {"question": question, "answer": f"No soak: {why}.", "rows": [row], "passed": False}
    r = phase["result"]
    achieved, p99, errors = r.get("achieved_rate"), results.p99(r), r.get("error_rate", 0.0)
    slo, max_errors = cfg.get("slo_p99_ms"), cfg.get("max_error_rate")
    behind = (cfg.get("saturation") or {}).get("tolerance", RATE_TOLERANCE)
    rows = [{
        "check": "rate achieved of the soak's",
        "observed": f"{fmt.rate(achieved)} of {fmt.rate(rate)}/s ({fmt.pct(achieved / rate, 1)})",
        "target": f"≥ {fmt.pct(1 - behind, 0)} of {fmt.rate(rate)}/s: {rate_origin(soak)}",
        "status": "pass" if achieved >= rate * (1 - behind) else "fail",
        "gate": "performance",
    }]
    rows.append({"check": f"p99 over the {duration}", "observed": f"{fmt.ms(p99)} ms{fmt.each_operation(results.op_p99s(r))}", "target": f"≤ {slo:g} ms (SLO)",
                 "status": "pass" if p99 <= slo else "fail", "gate": "performance"})
    rows.append({"check": "requests failed", "observed": fmt.pct(errors), "target": f"≤ {fmt.pct(max_errors)}",
                 "status": "pass" if errors <= max_errors else "fail", "gate": "performance"})
    d = soakdrift.drift(run)
    window = fmt.duration(d["window_s"])
    drifts = [_drift_row(f, window) for f in d["figures"]]
    rows += drifts
    failed = [row for row in rows if row["status"] == "fail" and row["gate"] != "none"]
    if failed:
        answer = "No: " + "; ".join(f"{row['check']}: {row['observed']} (target {row['target']})" for row in failed) + "."
    else:
        held = [f["tolerance"].title for f, row in zip(d["figures"], drifts) if row["status"] == "pass"]
        answer = (
            f"Yes: {fmt.rate(achieved)}/s for {duration} at p99 {fmt.ms(p99)} ms, and from the first {window} to the "
            f"last {', '.join(held) or 'nothing measured'} stayed within {'its' if len(held) == 1 else 'their'} tolerance."
        )
    return base | {"question": question, "answer": answer, "rows": rows, "passed": not failed}


def view(run: dict) -> dict | None:
    """The soak section of the report; None for a run without a soak phase."""
    d = soakdrift.drift(run)
    if d is None:
        return None
    soak = run["soak"]
    window = fmt.duration(d["window_s"])
    scaled = (
        f" (a sixth of the {fmt.duration(d['duration_s'])} soak: {fmt.duration(run['config']['soak']['window_s'])} from a "
        f"{fmt.duration(run['config']['soak']['window_s'] * soakdrift.WINDOWS_PER_SOAK)} soak on)"
        if d["scaled"]
        else ""
    )
    return {
        "rate": f"{fmt.rate(soak['rate'])}/s",
        "origin": rate_origin(soak),
        "duration": fmt.duration(d["duration_s"]),
        "window": window,
        "windows": f"the first {window} of the load (seconds 0–{d['first'][1]:g}) against the last "
        f"(seconds {d['last'][0]:g}–{d['last'][1]:g}){scaled}",
        "rules": [{"figure": f["tolerance"].title, "rule": f["tolerance"].rule(), "drift": f["tolerance"].drift}
                  for f in d["figures"]],
        "rows": drift_rows(d),
        "drift": d,
        "plots": [],  # soakplots.write fills it
    }
