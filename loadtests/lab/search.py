"""The saturation search's rule: from the steps run so far, the rate of the next step, or why the
search stops. A pure function of the steps, so the loop that runs them (lab.scenarios.saturation.search) only
asks it.

The search steps the rate up by its factor until a step fails (p99 over the SLO, the achieved rate
behind, requests failing), or down by it while not even the first rate holds. Once one rate held
and a higher one failed, the limit lies between them: the search then bisects that bracket until
the failing rate is within PRECISION of the one that held. SEARCH_STEPS bounds the steps up or
down; the bisection adds a few more (log2 of the bracket's width over PRECISION: 3 for a factor
of 1.5)."""

from __future__ import annotations

from dataclasses import dataclass

# The limit is known when the lowest failing rate is at most this much above the highest that held.
PRECISION = 0.10
# The lowest rate a search steps down to when its first step fails.
MIN_RATE = 50


@dataclass(frozen=True)
class Next:
    """The next step's rate, or None and why the search stops; bisect says the step narrows the
    bracket between a rate that held and one that failed."""

    rate: int | None
    reason: str = ""
    bisect: bool = False


def bracket(steps: list[dict]) -> tuple[int | None, int | None]:
    """The lowest rate that failed and the highest rate below it that held (None for either the
    steps do not have)."""
    failed = min((s["rate"] for s in steps if not s["ok"]), default=None)
    held = max((s["rate"] for s in steps if s["ok"] and (failed is None or s["rate"] < failed)), default=None)
    return held, failed


def coarse_steps(steps: list[dict]) -> int:
    """The steps up or down by the factor: those until the first step that closed a bracket."""
    for i in range(len(steps)):
        held, failed = bracket(steps[: i + 1])
        if held is not None and failed is not None:
            return i + 1
    return len(steps)


def next_rate(
    steps: list[dict],
    start_rate: int,
    factor: float,
    max_rate: int,
    max_steps: int,
    precision: float = PRECISION,
) -> Next:
    """steps: [{"rate", "ok", "why"}] in the order run ("why": what failed, for a failed step)."""
    if not steps:
        if start_rate > max_rate:
            return Next(None, f"before its first step: {start_rate}/s is above the highest rate allowed ({max_rate}/s)")
        return Next(start_rate) if max_steps > 0 else Next(None, "with no step to run")
    held, failed = bracket(steps)
    if held is not None and failed is not None:
        why = _why(steps, failed)
        if failed <= held * (1 + precision):
            return Next(
                None,
                f"at {failed}/s: {why}; the limit lies between {held}/s, which held, and {failed}/s "
                f"(within {precision * 100:g} %)",
            )
        middle = round((held + failed) / 2)
        if not held < middle < failed:
            return Next(None, f"at {failed}/s: {why}; no whole rate lies between {held}/s and {failed}/s")
        return Next(middle, bisect=True)
    if coarse_steps(steps) >= max_steps:
        reason = f"reached the step limit ({max_steps} steps)"
        if failed is not None:
            reason = f"at {failed}/s: {_why(steps, failed)}; {reason} before a rate held"
        return Next(None, reason)
    if failed is not None:
        # Not even the first rate held: step down until one does, so the search still answers.
        lower = int(failed / factor)
        if lower < MIN_RATE:
            return Next(None, f"at {failed}/s: {_why(steps, failed)}; not stepping below {MIN_RATE}/s")
        return Next(lower)
    last = steps[-1]["rate"]
    up = int(round(last * factor))
    up = up if up > last else last + 1
    if up > max_rate:
        return Next(None, f"reached the highest rate allowed ({max_rate}/s)")
    return Next(up)


def _why(steps: list[dict], rate: int) -> str:
    return next((s.get("why") or "failed" for s in steps if s["rate"] == rate and not s["ok"]), "failed")
