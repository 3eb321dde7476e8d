"""A Prometheus histogram on a node's page (its `<name>_bucket{le=...}` series: cumulative counts
by upper bound): what a scrape added to its buckets since the previous one, and quantiles of that,
interpolated within a bucket as PromQL's histogram_quantile does.

kvlab's request timer (kvlab_requests_seconds) exports Micrometer's percentile-histogram buckets
from 50 µs to 10 s, each at most a third wider than the one below: a quantile read from them is
within that bucket, so it may be off by up to a third of its value, never more."""

from __future__ import annotations

import math

from . import promtext


def cumulative(page: dict[str, float], name: str) -> dict[float, float] | None:
    """The cumulative counts of a histogram by upper bound (le, +inf included), its series (every
    label but le: operation, status) added up; None when the page has no such histogram."""
    out: dict[float, float] = {}
    series = f"{name}_bucket"
    for key, value in page.items():
        if not key.startswith(series + "{"):
            continue
        _, labels = promtext.labels(key)
        try:
            le = float(labels["le"])
        except (KeyError, ValueError):
            continue
        out[le] = out.get(le, 0.0) + value
    return out or None


Buckets = dict[tuple[float, float], float]  # (lower bound, upper bound] -> observations in it


def increase(before: dict[float, float] | None, after: dict[float, float] | None) -> Buckets | None:
    """What after (cumulative counts) added to before, bucket by bucket, only the buckets that
    gained. A bucket that went down means the node started again: its counts since then are after's."""
    if before is None or after is None:
        return None
    restarted = any(after.get(le, 0.0) < n for le, n in before.items())
    out: Buckets = {}
    lower, below = 0.0, 0.0
    for le in sorted(after):
        grown = after[le] - (0.0 if restarted else before.get(le, 0.0))
        if grown - below > 0:
            out[(lower, le)] = grown - below
        lower, below = le, max(below, grown)
    return out


def add(parts: list[Buckets]) -> Buckets:
    out: Buckets = {}
    for part in parts:
        for bounds, n in part.items():
            out[bounds] = out.get(bounds, 0.0) + n
    return out


def quantile(buckets: Buckets, q: float) -> float | None:
    """The q-quantile (0 < q < 1) of observations in buckets, in the unit of their bounds: linear
    within the bucket it falls in, as PromQL's histogram_quantile; in the +inf bucket, its lower
    bound (a value beyond the largest bound has no known size). None when the buckets are empty."""
    total = sum(buckets.values())
    if total <= 0:
        return None
    rank = q * total
    seen = 0.0
    for lower, upper in sorted(buckets):
        n = buckets[(lower, upper)]
        if seen + n >= rank:
            if math.isinf(upper):
                return lower
            return lower + (upper - lower) * (rank - seen) / n
        seen += n
    return max(lower for lower, _ in buckets)
