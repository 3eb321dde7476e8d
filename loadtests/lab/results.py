"""What a phase's result says, read the same way by the runner, the report and the benchmarks."""

from __future__ import annotations

import math


def is_measured(phase: dict) -> bool:
    """A phase whose numbers count: not the fill, not a warm-up."""
    return phase.get("scenario") != "fill" and not phase.get("warmup")


def worst(result: dict, percentile: str) -> float:
    """The largest value of a percentile over the result's latency series: all requests, or each operation's
    (never a single target's share: those are in latency_by_target)."""
    values = [s["percentiles"].get(percentile) for s in result["latency"].values() if s]
    values = [v for v in values if v is not None]
    return max(values) if values else math.nan


def p99(result: dict) -> float:
    """The phase's p99, the one the SLO is held to: of all its requests (a mixed phase's GETs and
    PUTs together), else of its worst operation when the tool gave no series of all requests."""
    every = (result.get("latency") or {}).get("all")
    if every:
        value = every["percentiles"].get("p99")
        return math.nan if value is None else value
    return worst(result, "p99") if result.get("latency") else math.nan


def op_p99s(result: dict) -> dict[str, float]:
    """Each operation's own p99 when the phase mixed operations ({"get": 3.36, "put": 3.30}), beside
    the phase's p99 of all its requests."""
    return {
        name: s["percentiles"]["p99"]
        for name, s in (result.get("latency") or {}).items()
        if name != "all" and s and s["percentiles"].get("p99") is not None and not math.isnan(s["percentiles"]["p99"])
    }
