"""Drift over a soak: its first window against its last, per figure and node, against stated
tolerances. Computed from the soak phase's files, whenever its report is written:

- p99: every request's latency in the window, from the phase's interval log (latency.hlog), so a
  window's p99 is the p99 of its requests, not an average of seconds';
- the resources (lab.resources, resources.json): the median of the window's samples, so one
  sample caught mid-GC or mid-compaction does not move it.

A window is SOAK_WINDOW long, or a sixth of a soak shorter than six windows (a 4-minute soak
compares its first and last 40 s); the first starts with the load, the last ends with it.

The figure of the last window may exceed the first's by the larger of a share of the first and a
floor (the heap's floor is a share of its maximum): p99 by SOAK_P99_DRIFT, the rest as TOLERANCES
says. More is drift: for the memory figures and open files, a leak.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from . import hdr
from .report import fmt

MIB = 1 << 20
WINDOWS_PER_SOAK = 6  # a window is at most this part of the soak


@dataclass(frozen=True)
class Tolerance:
    """How much a figure may grow from the first window to the last: the larger of share × its
    first level, floor, and of_max × the figure's maximum (the heap's)."""

    figure: str
    title: str
    unit: str  # ms | MiB | files
    share: float
    floor: float = 0.0
    of_max: float = 0.0
    drift: str = "drift"  # what growth beyond it is

    def allowed(self, first: float, maximum: float | None = None) -> float:
        return max(self.share * first, self.floor, self.of_max * (maximum or 0.0))

    def rule(self) -> str:
        """The tolerance in words, for the report."""
        parts = [f"+{self.share * 100:g} % of the first window"]
        if self.floor:
            parts.append(f"+{show(self.floor, self.unit)} {self.unit}")
        if self.of_max:
            parts.append(f"+{self.of_max * 100:g} % of the heap's maximum")
        return parts[0] + (f", at least {' and '.join(parts[1:])}" if len(parts) > 1 else "")


def p99_tolerance(share: float) -> Tolerance:
    return Tolerance("p99_ms", "p99", "ms", share, drift="latency drift")


# The resources' tolerances. Memory and files that keep growing under a steady load are a leak;
# RocksDB's disk and pending compaction bytes that keep growing under a fixed key space are
# compaction falling behind. A cache filling up (the block cache, the JVM's code cache) shows as
# growth that levels off, well within these.
TOLERANCES = (
    Tolerance("rss_bytes", "RSS", "MiB", 0.20, floor=32 * MIB, drift="a leak"),
    Tolerance("heap_after_gc_bytes", "heap after GC", "MiB", 0.25, of_max=0.10, drift="a leak"),
    Tolerance("open_files", "open files", "files", 0.20, floor=16, drift="a leak"),
    Tolerance("sst_bytes", "RocksDB disk (SST files)", "MiB", 1.0, floor=64 * MIB, drift="compaction falling behind"),
    Tolerance("pending_compaction_bytes", "pending compaction", "MiB", 1.0, floor=64 * MIB,
              drift="compaction falling behind"),
)


def show(value: float, unit: str) -> str:
    """A figure in its unit: bytes as MiB, the others as they are."""
    if unit == "MiB":
        return f"{value / MIB:,.0f}".replace(",", " ") if value >= 10 * MIB else f"{value / MIB:.1f}"
    if unit == "ms":
        return fmt.ms(value)
    return f"{value:,.0f}".replace(",", " ")


def window_length(duration_s: float, window_s: float) -> int:
    """SOAK_WINDOW, or a sixth of a soak shorter than six windows; a second at least."""
    return max(1, int(min(window_s, duration_s / WINDOWS_PER_SOAK)))


def windows(duration_s: float, window_s: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The first and the last window, [start, end) in seconds of the load."""
    w = window_length(duration_s, window_s)
    return (0.0, float(w)), (float(duration_s - w), float(duration_s))


def latency_windows(hlog: Path, spans: tuple[tuple[float, float], ...]) -> list[dict | None]:
    """Per span, the requests whose second starts in it: their count, p50 and p99 (ms); None for
    a span without requests."""
    merged = [hdr.histogram(hdr.SECOND_DIGITS) for _ in spans]
    for start, h in hdr.read_log(hlog):
        for i, (a, b) in enumerate(spans):
            if a <= start < b:
                merged[i].add(h)
    out = []
    for h in merged:
        n = h.get_total_count()
        p = hdr.percentiles_ms(h, [50, 99]) if n else {}
        out.append({"requests": n, "p50_ms": p[50], "p99_ms": p[99]} if n else None)
    return out


def level(rows: list[dict], figure: str, span: tuple[float, float]) -> float | None:
    """The median of a node's samples of figure in [start, end); None without one."""
    values = [r[figure] for r in rows if span[0] <= r["t"] < span[1] and r.get(figure) is not None]
    return statistics.median(values) if values else None


def judged(tol: Tolerance, first: float | None, last: float | None, maximum: float | None = None) -> dict:
    """One node's (or the whole load's) figure: first and last level, the limit, within it or not."""
    if first is None or last is None:
        return {"first": first, "last": last, "limit": None, "ok": None}
    limit = first + tol.allowed(first, maximum)
    return {"first": first, "last": last, "limit": limit, "ok": last <= limit, "growth": last - first}


def soak_phase(run: dict) -> dict | None:
    label = (run.get("soak") or {}).get("phase")
    return next((p for p in run.get("phases", []) if p.get("label") == label), None) if label else None


def drift(run: dict) -> dict | None:
    """The soak's drift, figure by figure: {duration_s, window_s, scaled, first, last, figures:
    [{tolerance, nodes: {node | "all": judged(...)}, why}]}; None when the run has no soak phase."""
    phase = soak_phase(run)
    if phase is None:
        return None
    plan = run["config"]["soak"]
    run_dir = Path(run["dir"])
    duration = phase["spec"]["duration_s"]
    first, last = windows(duration, plan["window_s"])
    out = {
        "duration_s": duration,
        "window_s": first[1] - first[0],
        "scaled": first[1] - first[0] < plan["window_s"],
        "first": first,
        "last": last,
        "figures": [],
    }
    p99 = p99_tolerance(plan["p99_drift"])
    if phase.get("hlog") and (run_dir / phase["hlog"]).is_file():
        a, b = latency_windows(run_dir / phase["hlog"], (first, last))
        out["latency"] = {"first": a, "last": b}
        out["figures"].append({"tolerance": p99, "why": "",
                               "nodes": {"all": judged(p99, a and a["p99_ms"], b and b["p99_ms"])}})
    else:
        out["latency"] = None
        out["figures"].append({"tolerance": p99, "nodes": {},
                               "why": "the load generator's per-request latency was not collected for this phase"})
    series = load_resources(run_dir, phase)
    for tol in TOLERANCES:
        nodes, why = {}, ""
        if series is None:
            why = "the nodes' resources were not sampled"
        else:
            for node, rows in series["nodes"].items():
                maximum = max((r["heap_max_bytes"] for r in rows if r.get("heap_max_bytes")), default=None)
                nodes[node] = judged(tol, level(rows, tol.figure, first), level(rows, tol.figure, last), maximum)
            if all(j["ok"] is None for j in nodes.values()):
                why = "; ".join(f"{n}: {w}" for n, m in series.get("missing", {}).items() for w in m.values()) or (
                    "no node reported it in both windows"
                )
        out["figures"].append({"tolerance": tol, "nodes": nodes, "why": why})
    return out


def load_resources(run_dir: Path, phase: dict) -> dict | None:
    path = run_dir / phase["resources"] if phase.get("resources") else None
    return json.loads(path.read_text()) if path and path.is_file() else None


def worst(figure: dict) -> tuple[str, dict] | None:
    """The node whose figure used most of its allowance (a failing one first); None when none was judged."""
    judged_nodes = [(n, j) for n, j in figure["nodes"].items() if j["ok"] is not None]
    if not judged_nodes:
        return None

    def used(item):
        _, j = item
        room = j["limit"] - j["first"]
        return (not j["ok"], j["growth"] / room if room > 0 else j["growth"])

    return max(judged_nodes, key=used)
