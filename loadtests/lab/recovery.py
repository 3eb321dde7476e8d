"""How the cluster went through each fault of a phase and came back, from the phase's time series
(timeseries.json: per second of the load the requests, errors and latency percentiles, of the
seconds the load ran for whole; per node its samples of hints and repair). Pure functions of the
series and the faults' records; all times are seconds since the phase's load began, the faults'
and the series' alike.

Per fault:
  errors_during     failed requests in the seconds the fault lasted
  p99_before_ms     the median per-second p99 before it (BASELINE_S at most, after the previous fault)
  p99_during_ms     the worst per-second p99 while it lasted
  p99_after_ms      the median per-second p99 from its end to the next fault (or the end of the load)
  rate_recovered_s  seconds from its end until the rate served (requests that did not fail) was back
                    at RATE_BAND of the requested rate for STEADY_S seconds in a row
  p99_recovered_s   the same for p99 back under P99_BAND times p99_before_ms
  hints_replayed    hints the nodes replayed from its beginning to the next fault (or, for the
                    last fault, until the cluster had healed after the load: add_to takes that
                    from the phase's healing counters, which the per-second series does not cover)
  records_repaired  records repair copied over the same time
A figure the series cannot give (no latency over time, no node samples, never back in the band
before the next fault or the end) is None."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from . import healing

RATE_BAND = 0.95
P99_BAND = 2.0
STEADY_S = 3
BASELINE_S = 20.0


def load_series(run_dir: Path, record: dict) -> tuple[dict | None, str]:
    """The phase's time series, or None and why not."""
    path = run_dir / record["timeseries"] if record.get("timeseries") else run_dir / record["dir"] / "timeseries.json"
    if not path.exists():
        return None, "the phase has no time series (timeseries.json)"
    try:
        return json.loads(path.read_text()), ""
    except (OSError, ValueError) as e:
        return None, f"{path.name} could not be read: {e}"


def of_phase(series: dict, faults: list[dict], requested_rate: float | None) -> list[dict | None]:
    """The recovery figures of each fault (in the order given); None for a fault that never began."""
    began = sorted((f["began_at_s"], f["ended_at_s"]) for f in faults if f.get("began_at_s") is not None)
    out = []
    for f in faults:
        if f.get("began_at_s") is None:
            out.append(None)
            continue
        start = f["began_at_s"]
        end = f["ended_at_s"] if f.get("ended_at_s") is not None else start
        previous = max((e for b, e in began if b < start), default=0.0)
        following = min((b for b, _ in began if b > start), default=None)
        out.append(figures(series, start, end, previous, following, requested_rate))
    return out


def figures(
    series: dict, began: float, ended: float, previous_end: float, next_began: float | None, requested_rate: float | None
) -> dict:
    """The figures of one fault that lasted from began to ended, with the previous fault ended at
    previous_end (0: none) and the next beginning at next_began (None: none)."""
    load = series.get("load") or {}
    step = float(series.get("interval_s") or 1.0)
    # A second the load ran for part of (its first and last) holds no rate and only the stragglers' latency.
    rows = sorted((r for r in load.get("seconds") or [] if not r.get("partial")), key=lambda r: r["t"])
    latency = load.get("latency", True)
    horizon = next_began if next_began is not None else float("inf")

    during = [r for r in rows if r["t"] < ended and r["t"] + step > began]
    before = [r for r in rows if r["t"] >= max(previous_end, began - BASELINE_S) and r["t"] + step <= began]
    after = [r for r in rows if r["t"] >= ended and r["t"] + step <= horizon]

    p99_before = _median(_values(before, "p99_ms")) if latency else None
    errors = _values(during, "errors")
    worst = _values(during, "p99_ms") if latency else []

    def served_enough(r: dict) -> bool:
        if r.get("requests") is None or requested_rate is None:
            return False
        return (r["requests"] - (r.get("errors") or 0)) / step >= RATE_BAND * requested_rate

    def fast_enough(r: dict) -> bool:
        return r.get("p99_ms") is not None and r["p99_ms"] <= P99_BAND * p99_before

    return {
        "errors_during": sum(errors) if errors else None,
        "p99_before_ms": p99_before,
        "p99_during_ms": max(worst) if worst else None,
        "p99_after_ms": _median(_values(after, "p99_ms")) if latency else None,
        "rate_recovered_s": _recovered(after, ended, step, served_enough) if requested_rate else None,
        "p99_recovered_s": _recovered(after, ended, step, fast_enough) if p99_before is not None else None,
        "hints_replayed": _node_sum(series, "hints_replayed", began, horizon),
        "records_repaired": _node_sum(series, "records_repaired", began, horizon),
    }


def _values(rows: list[dict], key: str) -> list[float]:
    return [r[key] for r in rows if r.get(key) is not None]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _recovered(rows: list[dict], ended: float, step: float, ok) -> float | None:
    """Seconds from ended to the first of STEADY_S consecutive intervals that are all ok."""
    run = []
    for r in rows:
        if run and abs(r["t"] - run[-1]["t"] - step) > 1e-6:
            run = []  # a gap in the series: the seconds are no longer consecutive
        run = run + [r] if ok(r) else []
        if len(run) == STEADY_S:
            return round(max(0.0, run[0]["t"] - ended), 1)
    return None


def _node_sum(series: dict, key: str, start: float, end: float) -> float | None:
    values = [
        s[key]
        for samples in (series.get("nodes") or {}).values()
        for s in samples
        if start <= s["t"] < end and s.get(key) is not None
    ]
    return sum(values) if values else None


def add_to(run_dir: Path, record: dict) -> None:
    """Each fault record of a phase (its faults, or the outage's fault) gets "recovery" (its
    figures), or None and "recovery_why"."""
    made = record.get("faults") or ([record["fault"]] if record.get("fault") else [])
    if not made:
        return
    series, why = load_series(run_dir, record)
    figures = of_phase(series, made, record["spec"].get("rate")) if series else []
    _after_the_load(figures, record.get("healing"))
    for i, f in enumerate(made):
        f["recovery"] = figures[i] if series else None
        if f["recovery"] is None:
            f["recovery_why"] = why or "the fault did not begin"


def _after_the_load(figures: list[dict | None], healing_delta: dict | None) -> None:
    """The last fault's hints replayed and records repaired, with what the nodes did after the load
    ended, while the lab waited for the cluster to heal: the phase's healing counters (lab.healing,
    over the phase and that wait) less what the series gave the faults before it."""
    began = [f for f in figures if f is not None]
    total = (healing_delta or {}).get("total")
    if not began or not total:
        return
    last, earlier = began[-1], began[:-1]
    whole = {"hints_replayed": total.get("hints_replayed"), "records_repaired": healing.repaired(healing_delta)}
    for key, value in whole.items():
        if value is None:
            continue
        before = sum(f.get(key) or 0 for f in earlier)
        last[key] = max(last.get(key) or 0, value - before)
