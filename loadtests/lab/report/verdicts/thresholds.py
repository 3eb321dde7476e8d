"""k6's thresholds in a verdict: a table of each threshold of the measured phases that k6 ran, its
observed value and whether it held; and one row that fails the run when a threshold of a phase held
to the SLO was crossed, as k6 itself fails it (exit 99). A search's steps are left out (their top
step crosses them by design); any other phase is listed, gated only when its kind's builder holds
it to the SLO (not a phase with faults, which crosses them by design, nor a benchmark's phase,
which its own targets judge)."""

from __future__ import annotations

import re

from ...results import is_measured
from .. import fmt, views
from ..fmt import listing
from . import phases
from .rows import row

# Thresholds loadtests/k6/lib/kvlab.js sets only to keep a submetric in the summary: always true.
BOOKKEEPING = {"count>=0", "max>=0"}
# k6's built-in trends of time, in ms.
TIMES = {"http_req_duration", "http_req_waiting", "http_req_blocked", "http_req_connecting", "http_req_sending",
         "http_req_receiving", "http_req_tls_handshaking", "iteration_duration"}
DURATION = re.compile(r"http_req_duration(?:\{op:(\w+)\})?")


def expressions(run: dict, result: dict) -> dict[str, dict[str, float | None]]:
    """Each threshold's metric, its expressions and the value k6 observed for each (None when the
    summary did not record it: then it is computed from the result where it can be)."""
    recorded = result.get("threshold_values")
    if recorded:
        return {
            metric: {e: v.get("observed") for e, v in exprs.items() if e not in BOOKKEEPING}
            for metric, exprs in recorded.items()
            if any(e not in BOOKKEEPING for e in exprs)
        }
    # A summary with each metric's verdict only: the expressions as kvlab.js writes them.
    slo = result.get("slo_p99_ms", run.get("config", {}).get("slo_p99_ms"))
    names = result.get("thresholds") or {}
    out = {}
    for metric in names:
        if metric == "http_req_failed":
            out[metric] = {f"rate<{phases.max_error_rate(run):g}": None}
        elif DURATION.fullmatch(metric) and "http_req_duration" in names and slo is not None:
            out[metric] = {f"p(99)<{slo:g}": None}
    return out


def observed(result: dict, metric: str, expression: str, recorded: float | None) -> tuple[float | None, str]:
    """The value a threshold was held to, and its unit: the result's own figures for the failed
    share and p99 (right for a phase whose k6 pods' summaries were merged), else k6's record of it
    (for one k6 process only)."""
    aggregation = re.split(r"[<>=!]", expression, maxsplit=1)[0].strip()
    m = DURATION.fullmatch(metric)
    if metric == "http_req_failed" and aggregation == "rate":
        return result.get("error_rate"), "share"
    if m and aggregation == "p(99)":
        latency = result.get("latency") or {}
        series = latency.get(m.group(1) or "all") or latency.get("all")
        return (series["percentiles"].get("p99") if series else None), "ms"
    if len(result.get("pods") or []) > 1:
        return None, ""
    if aggregation == "rate":
        return recorded, "share"
    timed = aggregation != "count" and metric.split("{")[0] in TIMES
    return recorded, "ms" if timed else ""


def _text(value: float | None, unit: str) -> str:
    if fmt.missing(value):
        return "–"
    if unit == "share":
        return fmt.pct(value)
    if unit == "ms":
        return f"{fmt.ms(value)} ms"
    return f"{value:g}"


def table(run: dict, held_to_slo: list[str]) -> list[dict]:
    out = []
    for phase in run.get("phases", []):
        r = phase.get("result", {})
        if r.get("tool") != "k6" or not is_measured(phase) or views.is_step(run, phase):
            continue
        oks = r.get("thresholds") or {}
        for metric, exprs in sorted(expressions(run, r).items()):
            for expression, recorded in exprs.items():
                value, unit = observed(r, metric, expression, recorded)
                out.append(
                    {
                        "phase": phase["label"],
                        "threshold": f"{metric} {expression}",
                        "observed": _text(value, unit),
                        "ok": bool(oks.get(metric, True)),
                        "gated": phase["label"] in held_to_slo,
                    }
                )
    return out


def rows(table: list[dict]) -> list[dict]:
    """One row over the table's gated thresholds: none crossed."""
    gated = [t for t in table if t["gated"]]
    if not gated:
        return []
    crossed = [t for t in gated if not t["ok"]]
    observed_text = f"{len(crossed)} of {len(gated)} crossed"
    if crossed:
        # The phases only: the table below names each threshold and its value, and a short cell
        # leaves the verdict's other columns room on the first screen.
        where = list(dict.fromkeys(t["phase"] for t in crossed))
        observed_text += f", in {listing(where)} (the table below)"
    return [row("k6 thresholds of the phases held to the SLO", observed_text, "none crossed", not crossed, "performance")]
