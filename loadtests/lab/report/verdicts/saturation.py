"""The saturation search's verdict: the highest rate sustained within the SLO, and how closely the
search bracketed the limit (the last rate that held and the first that failed, bisected to within
lab.search.PRECISION). A fixed-rate run's short search gives the same rows, for information."""

from __future__ import annotations

from ... import search
from .. import fmt, headline
from . import fill, phases
from .rows import Part, row


def _why(sat: dict, step: dict) -> str:
    """What failed at a step: its own record, else the search's stop reason when it names it."""
    if step.get("why"):
        return step["why"]
    prefix = f"at {step['rate']}/s: "
    reason = sat.get("stop_reason", "")
    return reason[len(prefix):].split(";")[0] if reason.startswith(prefix) else "failed"


def limits(run: dict) -> str:
    """"p99 ≤ 10 ms, ≥ 98% of the rate, ≤ 1% failed": the conditions of a step."""
    sat = run.get("saturation") or {}
    slo = sat.get("slo_p99_ms", run.get("config", {}).get("slo_p99_ms"))
    tol = sat.get("tolerance", phases.tolerance(run))
    return f"p99 ≤ {slo:g} ms, ≥ {fmt.pct(1 - tol, 0)} of the rate, ≤ {fmt.pct(phases.max_error_rate(run), 0)} failed"


def bracket(run: dict) -> tuple[dict | None, dict | None]:
    """The step of the highest rate that held below the lowest that failed, and that failed step."""
    steps = (run.get("saturation") or {}).get("steps", [])
    held, failed = search.bracket(steps)
    by_rate = {s["rate"]: s for s in steps}
    return by_rate.get(held), by_rate.get(failed)


def rows(run: dict, gated: bool) -> list[dict]:
    """The highest rate sustained (gates performance when gated: a search where no rate held
    fails) and the bracket around the limit (information)."""
    sat = run.get("saturation") or {}
    if not sat.get("steps"):
        # A search asked for that ran no step (cut short): it answered nothing.
        missing = row("highest rate sustained within the SLO", "no step of the search ran", limits(run), False, "performance")
        return [missing] if gated else []
    scenario = sat.get("scenario", "?")
    held, failed = bracket(run)
    precision = sat.get("precision", search.PRECISION)
    if held:
        observed = (
            f"{fmt.rate(held['rate'])}/s of {scenario} (p99 {fmt.ms(held.get('p99_ms'))} ms, "
            f"{fmt.rate(held.get('achieved_rate'))}/s achieved, {fmt.pct(held.get('error_rate'))} failed)"
        )
    else:
        lowest = min(sat["steps"], key=lambda s: s["rate"])
        observed = f"none: not even {fmt.rate(lowest['rate'])}/s ({_why(sat, lowest)})"
    out = [
        row(
            "highest rate sustained within the SLO" + ("" if gated else " (the short search)"),
            observed,
            limits(run),
            bool(held) if gated else None,
            "performance" if gated else "none",
        )
    ]
    if held and failed:
        apart = failed["rate"] / held["rate"] - 1
        observed = (
            f"between {fmt.rate(held['rate'])}/s (held) and {fmt.rate(failed['rate'])}/s "
            f"({_why(sat, failed)}): {fmt.pct(apart, 0)} apart"
        )
        ok = apart <= precision + 1e-9
    elif held:
        observed = f"above {fmt.rate(held['rate'])}/s: no rate tried failed (the search stopped {sat.get('stop_reason', '')})"
        ok = None
    else:
        observed = f"below {fmt.rate(min(s['rate'] for s in sat['steps']))}/s: no rate tried held"
        ok = None
    out.append(row("the limit, bracketed", observed, f"within {fmt.pct(precision, 0)}", ok, "none"))
    return out


def answer(run: dict) -> str:
    """The search's answer in a sentence."""
    sat = run["saturation"]
    scenario, slo = sat.get("scenario", "?"), sat.get("slo_p99_ms", run.get("config", {}).get("slo_p99_ms"))
    held, failed = bracket(run)
    if not held:
        return f"No rate of {scenario} tried was sustained within the SLO; the search stopped {sat.get('stop_reason', '')}."
    text = f"The cluster sustained {fmt.rate(held['rate'])}/s of {scenario} within the SLO (p99 {fmt.ms(held.get('p99_ms'))} ms ≤ {slo:g} ms)"
    if not failed:
        return text + f"; no rate tried failed, so its limit is higher (the search stopped {sat.get('stop_reason', '')})."
    apart = failed["rate"] / held["rate"] - 1
    text += f"; {fmt.rate(failed['rate'])}/s failed ({_why(sat, failed)}), so the limit lies between the two, {fmt.pct(apart, 0)} apart"
    precision = sat.get("precision", search.PRECISION)
    return text + ("." if apart <= precision + 1e-9 else f": the search did not bisect it to within {fmt.pct(precision, 0)}.")


def build(run: dict) -> Part:
    sat = run.get("saturation") or run.get("config", {}).get("saturation") or {}
    scenario = sat.get("scenario", "?")
    title = f"{headline.where(run, 'saturation search')}: {headline.cluster(run)}, {scenario} from {fmt.rate(sat.get('start_rate'))}/s up"
    question = f"What is the highest rate of {scenario} the cluster sustains within the SLO ({limits(run)})?"
    if not (run.get("saturation") or {}).get("steps"):
        return Part(title, question, "The search ran no step.", fill.rows(run) + rows(run, gated=True), [])
    return Part(title, question, answer(run), fill.rows(run) + rows(run, gated=True), [])
