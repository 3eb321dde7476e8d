"""The fixed-rate run's verdict: every measured phase against the SLO (the asked rate achieved, p99,
failed requests) and its ledger when it kept one, an outage phase by its recovery, healing and
ledger instead, and the highest rate the short search after the phases sustained."""

from __future__ import annotations

from .. import fmt, headline
from ..fmt import listing
from . import faults, fill, ledger, phases, saturation
from .rows import Part


def question(run: dict) -> str:
    slo = run.get("config", {}).get("slo_p99_ms")
    parts = [
        f"Does the cluster serve each phase at the rate it asks for within the SLO (p99 ≤ {slo:g} ms, "
        f"≤ {fmt.pct(phases.max_error_rate(run), 0)} failed)"
    ]
    if (run.get("saturation") or {}).get("steps"):
        parts.append(f"how much {run['saturation'].get('scenario', '?')} can it take")
    if any(phases.has_faults(p) for p in run.get("phases", [])):
        parts.append("does it lose anything when a node stops")
    return (", ".join(parts[:-1]) + ", and " + parts[-1] if len(parts) > 1 else parts[0]) + "?"


def phases_clause(run: dict, fixed: list[dict]) -> str:
    """"All 3 phases met the SLO at 500/s (p99 2.63–4.12 ms)", or which missed it and how."""
    if not fixed:
        return "No fixed-rate phase was measured"
    count = {1: "The phase", 2: "Both phases"}.get(len(fixed), f"All {len(fixed)} phases")
    missed = [(p["label"], phases.misses(run, p)) for p in fixed]
    missed = [(label, why) for label, why in missed if why]
    if missed:
        named = listing([f"{label} ({', '.join(why)})" for label, why in missed])
        return f"{len(missed)} of {len(fixed)} phases missed the SLO: {named}" if len(fixed) > 1 else (
            f"The phase missed the SLO: {named}"
        )
    text = f"{count} met the SLO"
    asked = {p["result"].get("requested_rate") for p in fixed}
    if len(asked) == 1 and None not in asked:
        text += f" at {fmt.rate(asked.pop())}/s"
    low, high = phases.fastest(fixed) or (None, None)
    if low is not None:
        text += f" (p99 {fmt.ms(low)} ms)" if low == high else f" (p99 {fmt.ms(low)}–{fmt.ms(high)} ms)"
    return text


def answer(run: dict, fixed: list[dict], faulty: list[dict]) -> str:
    parts = [phases_clause(run, fixed)]
    parts += [f"{p['label']}: {faults.summary(p)}; {faults.consequences(p)}" for p in faulty]
    sat = run.get("saturation") or {}
    if sat.get("steps"):
        held, _ = saturation.bracket(run)
        scenario = sat.get("scenario", "?")
        parts.append(
            f"the short search sustained {fmt.rate(held['rate'])}/s of {scenario}"
            if held
            else f"the short search sustained no rate of {scenario} it tried"
        )
    return "; ".join(parts) + "."


def build(run: dict) -> Part:
    title = f"{headline.where(run, 'fixed-rate phases')}: {headline.cluster(run)} at {headline.rates(run)}"
    fixed = phases.fixed_rate(run)
    faulty = [p for p in run.get("phases", []) if phases.has_faults(p) and not p.get("warmup")]
    out = fill.rows(run)
    notes = []
    for p in run.get("phases", []):
        if p in fixed:
            out += [phases.slo_row(run, p), *ledger.rows(p)]
        elif p in faulty:
            out += faults.rows(run, p)
    if any(phases.uncorrected(p) for p in fixed):
        notes.append(
            "A p99 marked \"from the send\" is Debian's wrk's: it times each request from its send, so a "
            "stall's queueing is not in it (see the tool notes)."
        )
    if faulty:
        notes.append(faults.note(run))
    out += saturation.rows(run, gated=False)
    return Part(title, question(run), answer(run, fixed, faulty), out, notes, [p["label"] for p in fixed])
