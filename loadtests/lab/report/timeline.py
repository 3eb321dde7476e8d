"""A phase along its time axis: the per-second series the run recorded (timeseries.json: the load
tool's requests, errors and latency per second, each node's CPU and GC pauses, the latency the
nodes measured, the RocksDB flushes and compactions), when the load ran, the windows the profiler
ran in, and the faults the phase carried, with how the cluster recovered from each."""

from __future__ import annotations

import json
import math
from pathlib import Path

from .. import loadseries
from . import fmt


def load(run_dir: Path, phase: dict) -> dict | None:
    """The phase's time series, or None when it has none (older runs, other executors) or the file
    cannot be read: the report then shows the phase without it."""
    rel = phase.get("timeseries")
    if not rel:
        return None
    try:
        doc = json.loads((run_dir / rel).read_text())
    except (OSError, ValueError):
        return None
    return doc if (doc.get("load") or {}).get("seconds") or doc.get("nodes") else None


def values(rows: list[dict], key: str) -> list[float]:
    """One field of a series, null as NaN (a gap in a plot, never a zero)."""
    return [math.nan if r.get(key) is None else float(r[key]) for r in rows]


def load_span(ts: dict, phase: dict) -> tuple[float, float] | None:
    """When the load ran, in seconds since its start: as the series recorded it; for a series
    without (an older run, a pod that sent no samples) the phase's duration, or for a fill, which
    ends when its keys are written, up to its last second. None when nothing tells."""
    load = ts.get("load") or {}
    if load.get("began_s") is not None and load.get("ended_s") is not None:
        return load["began_s"], load["ended_s"]
    if phase.get("scenario") != "fill":
        duration = (phase.get("result") or {}).get("duration_s") or (phase.get("spec") or {}).get("duration_s")
        if duration:
            return 0.0, float(duration)
    seconds = load.get("seconds") or []
    return (0.0, float(seconds[-1]["t"])) if seconds else None


def whole(rows: list[dict], span: tuple[float, float] | None, step: float) -> list[dict]:
    """The rows (intervals from their "t", span_s or step long) the load ran for whole; every row
    when the span is unknown."""
    return rows if span is None else [r for r in rows if loadseries.covered(r["t"], r.get("span_s", step), *span)]


def profile_windows(phase: dict) -> list[tuple[str, float, float]]:
    """The profiler's windows, (event, from, to) in seconds since the load's start: one per window
    whatever the number of nodes profiled in it, and only those in which a profile was taken."""
    windows = {
        (p["event"], float(p["offset_s"]), float(p["offset_s"]) + float(p["seconds"]))
        for p in phase.get("profiles") or []
        if p.get("ok") and p.get("seconds") and p.get("offset_s") is not None
    }
    return sorted(windows, key=lambda w: (w[1], w[0]))


def faults(phase: dict) -> list[dict]:
    """The phase's faults: a fault scenario's list, or the outage phase's single one."""
    if phase.get("faults"):
        return list(phase["faults"])
    return [phase["fault"]] if phase.get("fault") else []


def window(fault: dict) -> tuple[float, float] | None:
    """Seconds of the load during which the fault held; None when it never began."""
    began = fault.get("began_at_s")
    if began is None:
        return None
    ended = fault.get("ended_at_s")
    return began, ended if ended is not None else began + (fault.get("for_s") or 0)


def describe(fault: dict) -> str:
    return fault.get("what") or f"{fault.get('kind', 'fault')} of node {fault.get('node', '?')}"


def short(fault: dict) -> str:
    """A fault's label on a plot: "n2 pause"."""
    return f"{fault.get('node', '?')} {fault.get('kind', 'fault')}"


def _back(s) -> str:
    return "not within the phase" if s is None else f"{s:.1f} s after"


def fault_rows(phase: dict) -> list[dict]:
    """One row per fault for the report's table: when it was planned and when it held, and its
    recovery figures (empty cells when the run did not measure them)."""
    rows = []
    for f in faults(phase):
        w = window(f)
        rec = f.get("recovery") or {}
        rows.append(
            {
                "what": describe(f),
                "node": f.get("node", "?"),
                "planned": f"second {f.get('at_s', 0):.1f} for {f.get('for_s', 0):.1f} s",
                "held": f"{w[0]:.1f}–{w[1]:.1f} s"
                if w
                else f"did not happen: {f.get('error') or 'the phase ended first'}",
                "error": f.get("error") or "",
                "recovery": rec,
                "errors_during": rec.get("errors_during"),
                "p99": " / ".join(fmt.ms(rec.get(k)) for k in ("p99_before_ms", "p99_during_ms", "p99_after_ms")),
                "rate_back": _back(rec.get("rate_recovered_s")) if "rate_recovered_s" in rec else "–",
                "p99_back": _back(rec.get("p99_recovered_s")) if "p99_recovered_s" in rec else "–",
                "hints_replayed": rec.get("hints_replayed"),
                "records_repaired": rec.get("records_repaired"),
            }
        )
    return rows


def fault_sentence(label: str, f: dict) -> str:
    """A fault and its aftermath in one sentence, for the findings."""
    w = window(f)
    if not w:
        return f"{label}: {describe(f)} did not happen ({f.get('error') or 'the phase ended first'})."
    text = f"{label}: {describe(f)} from second {w[0]:.1f} to {w[1]:.1f} of the load"
    rec = f.get("recovery")
    if not rec:
        why = f.get("recovery_why")
        return text + (f"; no recovery figures: {why}." if why else ".")
    parts = []
    if rec.get("errors_during") is not None:
        parts.append(f"{fmt.rate(rec['errors_during'])} requests failed meanwhile")
    if rec.get("p99_during_ms") is not None:
        parts.append(
            f"p99 went from {fmt.ms(rec.get('p99_before_ms'))} ms before to {fmt.ms(rec['p99_during_ms'])} ms "
            f"during and {fmt.ms(rec.get('p99_after_ms'))} ms after"
        )
    back = []
    for key, what in (("rate_recovered_s", "the rate"), ("p99_recovered_s", "p99")):
        if key in rec:
            s = rec[key]
            when = "never recovered within the phase" if s is None else f"was back {s:.1f} s after it ended"
            back.append(f"{what} {when}")
    if back:
        parts.append(" and ".join(back))
    heal = [
        f"{fmt.rate(rec[k])} {what}"
        for k, what in (("hints_replayed", "hints replayed"), ("records_repaired", "records repaired"))
        if rec.get(k) is not None
    ]
    if heal:
        parts.append(", ".join(heal))
    return text + (": " + "; ".join(parts) if parts else "") + "."
