"""What a run's data says about each of its phases, read once for both the drafts and the checks of a
conclusion: rate and percentiles, the SLO, the RocksDB flushes and compactions of its time series,
its GC pauses (the JVMs' own counters and the per-second series), its worst second and what ran
around it (a fault, a flush or compaction, a GC pause, a profiler window)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..report import timeline, views
from ..results import is_measured

# A flush or compaction event is stamped with the middle of the second its counter grew in.
EVENT_SLACK_S = 0.5


@dataclass
class NodeGc:
    """One node's GC pauses over a phase: the JVM's counters (count, total), and the milliseconds of
    GC its per-second series shows, second by second (only the seconds with some)."""

    name: str
    count: int | None = None
    total_ms: float | None = None
    seconds: list[tuple[float, float]] = field(default_factory=list)  # (t, ms)

    @property
    def mean_ms(self) -> float | None:
        return self.total_ms / self.count if self.count and self.total_ms is not None else None

    def pauses_known(self) -> list[float]:
        """Pauses whose length is known: the only one the counters saw, or the per-second amounts when
        the series holds as many seconds with GC as the counters counted pauses."""
        if self.count == 1 and self.total_ms is not None:
            return [self.total_ms]
        if self.count and len(self.seconds) == self.count:
            return [ms for _, ms in self.seconds]
        if self.count is None:  # no counters (pods): each second's amount stands for its pauses
            return [ms for _, ms in self.seconds]
        return []


@dataclass
class Gc:
    """A phase's GC pauses, node by node."""

    nodes: list[NodeGc]
    sampled: bool  # whether the nodes' per-second series was recorded

    @property
    def count(self) -> int | None:
        counted = [n.count for n in self.nodes if n.count is not None]
        return sum(counted) if counted else None

    def any(self) -> bool:
        return bool(self.count) or any(n.seconds for n in self.nodes)

    def known(self) -> bool:
        """Whether the run measured the pauses at all (the JVMs' counters or the nodes' series)."""
        return self.sampled or any(n.count is not None for n in self.nodes)

    def per_second(self) -> list[tuple[float, float, str]]:
        """(ms, t, node) of every second with GC, the largest first."""
        return sorted(((ms, t, n.name) for n in self.nodes for t, ms in n.seconds), reverse=True)

    def means(self) -> list[float]:
        return [n.mean_ms for n in self.nodes if n.mean_ms is not None]


@dataclass
class Second:
    t: int
    p99_ms: float
    requests: int | None
    errors: int | None
    around: list[str]  # what ran around it, in words


@dataclass(eq=False)  # a phase is itself: sets of phases compare by identity
class Phase:
    label: str
    scenario: str
    measured: bool
    step: bool
    warmup: bool
    record: dict
    requested: float | None
    achieved: float | None
    duration_s: float | None
    requests: int | None
    error_rate: float
    latency: dict[str, dict[str, float]]  # series name (all, get, put...) -> percentiles
    slo_ms: float | None
    series: list[dict]  # the load tool's seconds (empty when it left none)
    series_latency: bool
    ops_series: dict[str, list[dict]]
    events: list[dict]  # flushes and compactions during the load
    events_known: bool  # whether the time series recorded the nodes' events at all
    gc: Gc
    faults: list[dict]
    profiles: list[dict]

    def p(self, name: str = "p99", series: str | None = None) -> float | None:
        """A percentile of the phase's own series: all requests, or the only series it has."""
        if series:
            return (self.latency.get(series) or {}).get(name)
        own = self.latency.get("all") or (next(iter(self.latency.values())) if len(self.latency) == 1 else None)
        return (own or {}).get(name)

    @property
    def slo_met(self) -> bool | None:
        p99 = self.p()
        return None if p99 is None or self.slo_ms is None else p99 <= self.slo_ms

    def events_of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["kind"] == kind]

    def full_seconds(self) -> list[dict]:
        """The load seconds that lie wholly inside the phase (not the last, partial one)."""
        end = (self.duration_s or 0) + 0.05
        return [s for s in self.series if s.get("t") is not None and (not self.duration_s or s["t"] + 1 <= end)]

    def worst_second(self) -> Second | None:
        """The full second with the highest p99, and what ran around it."""
        if not self.series_latency:
            return None
        timed = [s for s in self.full_seconds() if s.get("p99_ms") is not None]
        if not timed:
            return None
        w = max(timed, key=lambda s: s["p99_ms"])
        return Second(int(w["t"]), w["p99_ms"], w.get("requests"), w.get("errors"), self.around(w["t"]))

    def around(self, t: float) -> list[str]:
        """What ran within a second of second t (which holds the requests that ended in [t, t + 1))."""
        said = []
        for f in self.faults:
            w = timeline.window(f)
            if w and w[0] < t + 1 and w[1] > t - 1:
                said.append(f"the {f.get('kind', 'fault')} of {f.get('node', '?')} (seconds {w[0]:.1f} to {w[1]:.1f})")
        for kind in ("flush", "compaction"):
            nodes = sorted({e["node"] for e in self.events_of(kind) if t - EVENT_SLACK_S <= e["t"] < t + 1 + EVENT_SLACK_S})
            if nodes:
                said.append(f"a {kind} on {', '.join(nodes)}")
        gc: dict[str, float] = {}
        for ms, at, node in self.gc.per_second():
            if t - 1 < at < t + 1:
                gc[node] = max(gc.get(node, 0.0), ms)
        if gc:
            said.append("GC on " + ", ".join(f"{node} ({ms:g} ms)" for node, ms in sorted(gc.items(), key=lambda kv: -kv[1])))
        for event, nodes, start, end in profiler_windows(self.profiles):
            edges = [f"{what} at second {edge:.1f}" for edge, what in ((start, "attached"), (end, "detached"))
                     if t - 1 <= edge < t + 1]
            if edges:
                said.append(f"the {event} profiler {' and '.join(edges)} ({', '.join(nodes)})")
            elif start < t + 1 and end > t:
                said.append(f"the {event} profiler running ({', '.join(nodes)})")
        return said


def profiler_windows(profiles: list[dict]) -> list[tuple[str, list[str], float, float]]:
    """(event, nodes, start, end) of each profiler window, the nodes profiled together as one."""
    windows: dict[tuple[str, float, float], list[str]] = {}
    for p in profiles:
        if p.get("offset_s") is None or not p.get("seconds"):
            continue
        key = (p.get("event", "?"), p["offset_s"], p["offset_s"] + p["seconds"])
        windows.setdefault(key, []).append(p.get("node", "?"))
    return [(event, sorted(nodes), start, end) for (event, start, end), nodes in sorted(windows.items(), key=lambda kv: kv[0][1])]


def _pid_names(run: dict, phase: dict) -> dict[str, str]:
    names = {str(n.get("pid")): n["name"] for n in run.get("nodes", []) if n.get("pid")}
    for f in timeline.faults(phase):
        for key in ("pid_before", "pid_after"):
            if f.get(key):
                names[str(f[key])] = f.get("node", str(f[key]))
    return names


def _gc(run: dict, phase: dict, ts: dict | None, end_s: float | None) -> Gc:
    nodes: dict[str, NodeGc] = {}
    names = _pid_names(run, phase)
    for pid, p in (phase.get("cpu") or {}).get("jvm_pauses", {}).items():
        name = names.get(str(pid), f"pid {pid}")
        node = nodes.setdefault(name, NodeGc(name, 0, 0.0))
        node.count += p.get("gc_pauses", 0)
        node.total_ms += p.get("gc_s", 0.0) * 1e3
    for name, rows in ((ts or {}).get("nodes") or {}).items():
        node = nodes.setdefault(name, NodeGc(name))
        node.seconds = [
            (r["t"], r["gc_pause_ms"])
            for r in rows
            if r.get("gc_pause_ms") and r.get("t") is not None and r["t"] > -1 and (end_s is None or r["t"] < end_s)
        ]
    return Gc(sorted(nodes.values(), key=lambda n: n.name), bool((ts or {}).get("nodes")))


def phase(run: dict, record: dict, run_dir: Path | None) -> Phase:
    r = record.get("result") or {}
    ts = timeline.load(run_dir, record) if run_dir else None
    load = (ts or {}).get("load") or {}
    duration = r.get("duration_s")
    end = duration + 1 if duration else None
    events = [e for e in (ts or {}).get("events") or [] if e.get("t") is not None and e["t"] >= -EVENT_SLACK_S and (end is None or e["t"] < end)]
    return Phase(
        label=record.get("label", "?"),
        scenario=record.get("scenario", "?"),
        measured=is_measured(record),
        step=views.is_step(run, record),
        warmup=bool(record.get("warmup")),
        record=record,
        requested=r.get("requested_rate"),
        achieved=r.get("achieved_rate"),
        duration_s=duration,
        requests=r.get("requests"),
        error_rate=r.get("error_rate") or 0.0,
        latency={name: s.get("percentiles", {}) for name, s in (r.get("latency") or {}).items() if s},
        slo_ms=run.get("config", {}).get("slo_p99_ms"),
        series=load.get("seconds") or [],
        series_latency=bool(load.get("latency")),
        ops_series=load.get("ops") or {},
        events=events,
        events_known=(ts or {}).get("events") is not None,
        gc=_gc(run, record, ts, end),
        faults=timeline.faults(record),
        profiles=record.get("profiles") or [],
    )


def phases(run: dict, run_dir: Path | None) -> list[Phase]:
    return [phase(run, p, run_dir) for p in run.get("phases", [])]


def timed(all_phases: list[Phase]) -> list[Phase]:
    """The phases a conclusion speaks of when it says "the phases": the measured fixed-rate ones, or
    the steps when the run is a search."""
    fixed = [p for p in all_phases if p.measured and not p.step]
    return fixed or [p for p in all_phases if p.measured]


def steps(all_phases: list[Phase]) -> list[Phase]:
    return [p for p in all_phases if p.step]
