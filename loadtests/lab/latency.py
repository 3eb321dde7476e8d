"""One latency distribution from several load generators that shared a phase: the wrk processes of
a local run (one per node) or the k6 pods of a Kubernetes one. Percentiles of separate processes
cannot be averaged; the whole phase's are read off the sum of their distributions.

- add_histograms: exact, from wrk's latency histograms (kvlab.lua's histogram_us), by the rank wrk
  itself uses for a percentile.
- mix_spectra: approximate, from percentile spectra alone (k6, wrk2), as the mixture of the parts.

HdrHistogram (lab.hdr, for the .hgrm files) would not give the same figures: it takes the rank of a
percentile as round(p * count) and reads a value as the top of its bucket, so a phase's percentiles
would move away from the ones wrk prints for itself (p99 6.611 against 6.651 ms on the self-test's
15 000 requests).

A series is the lab's usual latency dict: unit (ms), min, mean, max, percentiles (p50 ... p100)
and spectrum [[p, ms], ...].
"""

from __future__ import annotations

import bisect
import math


def percentile_rank(p: float, count: int) -> int:
    """The 1-based rank of the p-quantile (0 < p < 1) among count sorted values, as wrk's
    stats_percentile takes it: round(p * count + 0.5), rounding half up."""
    return max(1, min(count, math.floor(p * count + 1)))


def add_histograms(parts: list[tuple[dict, list[list[int]]]]) -> dict:
    """The series of every request of the parts, from each part's (series, histogram) pair: the
    histogram counts requests by latency bucket, [[upper edge in µs, count], ...] ascending.
    Percentiles and spectrum are exact up to the buckets (each read as its upper edge, so never
    below the latency it stands for); min and max are the parts' own, the mean is weighted by
    their counts. The table and spectrum have the first part's percentiles."""
    counts: dict[int, int] = {}
    for _, histogram in parts:
        for edge, n in histogram:
            counts[edge] = counts.get(edge, 0) + n
    edges = sorted(counts)
    cumulative = []
    total = 0
    for edge in edges:
        total += counts[edge]
        cumulative.append(total)
    if total == 0:
        raise ValueError("the histograms hold no requests")
    lowest = min(series["min"] for series, _ in parts)
    highest = max(series["max"] for series, _ in parts)

    def quantile(p: float) -> float:
        if p <= 0:
            return lowest
        if p >= 1:
            return highest
        edge = edges[bisect.bisect_left(cumulative, percentile_rank(p, total))]
        return min(edge / 1000, highest)

    first = parts[0][0]
    weights = [sum(n for _, n in histogram) for _, histogram in parts]
    return {
        "unit": "ms",
        "min": lowest,
        "mean": sum(w * series["mean"] for w, (series, _) in zip(weights, parts)) / total,
        "max": highest,
        "percentiles": {name: quantile(_share(name)) for name in first["percentiles"]},
        "spectrum": [[p, quantile(p)] for p, _ in first["spectrum"]],
        "merged_from": len(parts),
    }


def _share(name: str) -> float:
    """The share a percentile's name stands for: p99.9 -> 0.999, p100 -> 1."""
    return float(name[1:]) / 100


def _cdf(spectrum: list, x: float) -> float:
    """The share of requests at most x ms, interpolated from a spectrum [[p, ms], ...]."""
    ps = [p for p, v in spectrum if v is not None]
    vs = [v for p, v in spectrum if v is not None]
    k = bisect.bisect_right(vs, x)
    if k == 0:
        return 0.0
    if k == len(vs):
        return 1.0
    (x0, p0), (x1, p1) = (vs[k - 1], ps[k - 1]), (vs[k], ps[k])
    return p0 + (p1 - p0) * (x - x0) / (x1 - x0)


def mix_spectra(parts: list[tuple[float, dict]]) -> dict | None:
    """One latency distribution from several load generators' (weight = requests, latency) pairs.
    Every part sends a random share of the same workload, so the whole is their mixture:
    F(x) = sum w_i F_i(x) / sum w_i, each F_i interpolated from the part's percentile spectrum
    (about 90 points down to 99.999 %). Its percentiles are read off F; min, max and mean are exact."""
    parts = [(w, lat) for w, lat in parts if lat and w > 0]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0][1]
    total = sum(w for w, _ in parts)
    xs = sorted({v for _, lat in parts for _, v in lat["spectrum"] if v is not None})
    fs = [sum(w * _cdf(lat["spectrum"], x) for w, lat in parts) / total for x in xs]

    def quantile(p: float) -> float:
        if p <= 0:
            return min(lat["min"] for _, lat in parts)
        if p >= 1:
            return max(lat["max"] for _, lat in parts)
        k = bisect.bisect_left(fs, p)
        if k == 0:
            return xs[0]
        if k == len(fs):
            return xs[-1]
        f0, f1 = fs[k - 1], fs[k]
        return xs[k - 1] + (xs[k] - xs[k - 1]) * ((p - f0) / (f1 - f0) if f1 > f0 else 1.0)

    first = parts[0][1]
    return {
        "unit": first.get("unit", "ms"),
        "min": quantile(0),
        "mean": sum(w * lat["mean"] for w, lat in parts) / total,
        "max": quantile(1),
        "percentiles": {name: quantile(_share(name)) for name in first["percentiles"]},
        "spectrum": [[p, quantile(p)] for p, _ in first["spectrum"]],
        "merged_from": len(parts),
    }
