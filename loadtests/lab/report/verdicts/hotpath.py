"""The hot-path benchmark's verdict: per operation and rate, the server CPU per request against the
no-op route GET /v0/status measured at the same rate (a GET's target: at most max_ratio times it;
a PUT's cost is shown, not held to it, as a write always goes to a storage thread), and whether
the operation held its rate within the p99 limit (run.json's "hotpath": its rows, each operation
after its no-op baseline)."""

from __future__ import annotations

from ... import hotpath as bench
from .. import fmt, headline, runs, views
from ..fmt import listing
from . import fill, phases
from .rows import Part, row

# The operations held to the CPU target.
HELD_TO_RATIO = ("get",)


def settings(run: dict) -> dict:
    """The benchmark's targets: as the run recorded them, else the benchmark's defaults."""
    cfg = run.get("config", {}).get("hotpath") or {}
    d = bench.HotpathConfig
    return {
        "max_ratio": cfg.get("max_ratio", d.max_ratio),
        "min_rate_share": cfg.get("min_rate_share", d.min_rate_share),
        "slo_p99_ms": cfg.get("slo_p99_ms", d.slo_p99_ms),
    }


def pairs(run: dict) -> list[tuple[dict, dict]]:
    """Each measured operation with the no-op baseline before it."""
    rows = (run.get("hotpath") or {}).get("rows") or []
    out, base = [], None
    for r in rows:
        if r["label"].startswith("status@"):
            base = r
        elif base is not None:
            out.append((base, r))
    return out


def what(r: dict) -> str:
    """"GET at 10 000/s"."""
    op, _, rate = r["label"].partition("@")
    return f"{op.upper()} at {fmt.rate(float(rate))}/s" if rate.isdigit() else r["label"]


def held_to_ratio(r: dict) -> bool:
    return r["label"].partition("@")[0] in HELD_TO_RATIO


def cpu_row(base: dict, r: dict, t: dict) -> dict:
    held = held_to_ratio(r)
    target = f"≤ {t['max_ratio']:g}× the no-op route's" if held else "none (shown beside GET's)"
    observed = f"{r['server_us']:.1f} µs, {r['ratio']:.2f}× the no-op route's {base['server_us']:.1f} µs"
    ok = None if fmt.missing(r.get("ratio")) or not held else r["ratio"] <= t["max_ratio"]
    if base["achieved"] < base["requested"] * t["min_rate_share"]:
        observed += f"; the no-op route achieved only {fmt.rate(base['achieved'])}/s: not comparable"
        ok = None
    return row(f"{what(r)}: server CPU per request", observed, target, ok, "performance" if held else "none")


def load_row(run: dict, r: dict, t: dict) -> dict:
    phase = next((p for p in run.get("phases", []) if p["label"] == r["label"]), None)
    sent = " (from the send)" if phase and views.uncorrected(phase.get("result", {})) else ""
    errors = phases.max_error_rate(run)
    observed = (
        f"{fmt.rate(r['achieved'])} of {fmt.rate(r['requested'])}/s ({fmt.pct(r['achieved'] / r['requested'], 1)}), "
        f"p99 {fmt.ms(r['p99'])} ms{sent}, {fmt.pct(r.get('error_rate', 0.0))} failed"
    )
    ok = (
        r["achieved"] >= r["requested"] * t["min_rate_share"]
        and r["p99"] < t["slo_p99_ms"]
        and r.get("error_rate", 0.0) <= errors
    )
    target = f"≥ {fmt.pct(t['min_rate_share'], 0)} of the rate, p99 < {t['slo_p99_ms']:g} ms, ≤ {fmt.pct(errors, 0)} failed"
    return row(f"{what(r)}: rate, p99, failed", observed, target, ok, "performance")


def title(run: dict) -> str:
    hp = run.get("config", {}).get("hotpath", {})
    gets = " and ".join(fmt.rate(r) for r in hp.get("get_rates") or [hp.get("get_rate")])
    return (
        f"kvlab hot path: {headline.nodes(run)}, {' and '.join(runs.tools_used(run))}, GET at {gets}/s "
        f"and PUT at {fmt.rate(hp.get('put_rate'))}/s"
    )


def build(run: dict) -> Part:
    t = settings(run)
    question = (
        "How much server CPU does a GET cost, and a PUT, against the no-op route GET /v0/status at the same "
        f"rate (a GET's target: at most {t['max_ratio']:g}×), with each rate held?"
    )
    out = fill.rows(run)
    measured = []
    for base, r in pairs(run):
        out += [cpu_row(base, r, t), load_row(run, r, t)]
        if not fmt.missing(r.get("ratio")):
            measured.append(r)
    if not measured:
        return Part(title(run), question, "No operation was measured against the no-op route.", out, [])
    held = [r for r in measured if held_to_ratio(r)]
    over = [r for r in held if r["ratio"] > t["max_ratio"]]
    costs = listing([f"{what(r)} {r['ratio']:.2f}×" for r in measured])
    answer = f"Server CPU per request against the no-op route's: {costs}"
    if held:
        answer += (
            f"; {listing([what(r) for r in over])} over the {t['max_ratio']:g}× target."
            if over
            else f"; {'every GET' if len(held) > 1 else 'GET'} within the {t['max_ratio']:g}× target."
        )
    else:
        answer += "."
    slow = [r for r in out if r["status"] == "fail" and r["check"].endswith("rate, p99, failed")]
    if slow:
        answer += f" {listing([r['check'].split(':')[0] for r in slow])} missed {'its' if len(slow) == 1 else 'their'} rate or p99."
    return Part(title(run), question, answer, out, [])
