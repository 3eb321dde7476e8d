"""A fixed-rate phase against the SLO: the rate it achieved of the rate it asked for, its p99 (of
all its requests) and its failed requests, each against the run's limits."""

from __future__ import annotations

from ... import defaults, results
from ...results import is_measured
from .. import fmt, views
from .rows import row


def p99(result: dict) -> float | None:
    """The phase's p99 (lab.results.p99), None when it has none."""
    value = results.p99(result)
    return None if fmt.missing(value) else value


def tolerance(run: dict) -> float:
    """How far the achieved rate may fall behind the requested one: the search's setting, which
    the run recorded, else the lab's default."""
    cfg = run.get("config", {})
    for key in ("search", "saturation"):
        if isinstance(cfg.get(key), dict) and cfg[key].get("tolerance") is not None:
            return cfg[key]["tolerance"]
    return defaults.number("TOLERANCE")


def max_error_rate(run: dict) -> float:
    return run.get("config", {}).get("max_error_rate", defaults.number("MAX_ERROR_RATE"))


def has_faults(phase: dict) -> bool:
    return bool(phase.get("fault") or phase.get("faults"))


def fixed_rate(run: dict) -> list[dict]:
    """The measured phases a verdict holds to the SLO: not the fill, warm-ups, a search's steps, or
    a phase that breaks something on purpose."""
    return [p for p in run.get("phases", []) if is_measured(p) and not views.is_step(run, p) and not has_faults(p)]


def uncorrected(phase: dict) -> bool:
    return views.uncorrected(phase.get("result", {}))


def load_text(phase: dict) -> str:
    """"500 of 500/s (100.0%), p99 3.31 ms (get 3.36 ms, put 3.30 ms), 0.00% failed"."""
    r = phase["result"]
    asked, achieved = r.get("requested_rate"), r.get("achieved_rate")
    text = (
        f"{fmt.rate(achieved)} of {fmt.rate(asked)}/s ({fmt.pct(achieved / asked, 1)})"
        if asked and achieved is not None
        else f"{fmt.rate(achieved)}/s"
    )
    text += f", p99 {fmt.ms(p99(r))} ms"
    text += fmt.each_operation(results.op_p99s(r))
    if uncorrected(phase):
        text += " (from the send)"
    return text + f", {fmt.pct(r.get('error_rate', 0.0))} failed"


def misses(run: dict, phase: dict) -> list[str]:
    """What of the phase missed the SLO: "996 of 1 000/s", "p99 32.8 ms", "2.10% failed"; empty
    when the asked rate was achieved within the tolerance, p99 was at most the SLO and failed
    requests at most the share allowed."""
    r = phase["result"]
    slo = run.get("config", {}).get("slo_p99_ms")
    asked, achieved = r.get("requested_rate"), r.get("achieved_rate")
    out = []
    if asked and achieved is not None and achieved < asked * (1 - tolerance(run)):
        out.append(f"{fmt.rate(achieved)} of {fmt.rate(asked)}/s")
    value = p99(r)
    if slo is not None and value is not None and value > slo:
        out.append(f"p99 {fmt.ms(value)} ms")
    if r.get("error_rate", 0.0) > max_error_rate(run):
        out.append(f"{fmt.pct(r['error_rate'])} failed")
    return out


def target(run: dict, phase: dict) -> str:
    """"≥ 98% of 500/s, p99 ≤ 10 ms, ≤ 1% failed"."""
    asked = phase["result"].get("requested_rate")
    slo = run.get("config", {}).get("slo_p99_ms")
    parts = [f"≥ {fmt.pct(1 - tolerance(run), 0)} of {fmt.rate(asked)}/s"] if asked else []
    if slo is not None:
        parts.append(f"p99 ≤ {slo:g} ms")
    return ", ".join(parts + [f"≤ {fmt.pct(max_error_rate(run), 0)} failed"])


def slo_row(run: dict, phase: dict) -> dict:
    """The phase against the SLO (gates performance)."""
    return row(phase["label"], load_text(phase), target(run, phase), not misses(run, phase), "performance")


def fastest(phases: list[dict]) -> tuple[float, float] | None:
    """The range of the phases' p99s, for an answer."""
    values = [v for v in (p99(p["result"]) for p in phases) if v is not None]
    return (min(values), max(values)) if values else None
