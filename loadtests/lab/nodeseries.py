"""The nodes second by second during a phase: a sampler thread reads every node's Prometheus page
once a second (through the executor's node_metrics()) and keeps, per node, what each interval
brought: CPU, GC pauses, hints, repair, the RocksDB flushes and compactions as events, and the
requests the node answered by latency bucket. The "nodes", "events" and "server" parts of a phase's
timeseries.json; "server" is the latency of every node's requests together per interval, as the
nodes measured it (from a request's arrival to its answer: no network, no client queue).

A node's sample covers the time from its previous scrape to this one, and its "t" is when that
interval began (seconds since the phase's t0), like a load second's. cpu_cores is CPU seconds per
second over it; gc_pause_ms, hints_replayed and records_repaired are amounts in it; hints_pending is
the level at its end. After scrapes the node did not answer (up: false, nothing else known), the
first answer's amounts are those since its last answer. An event's "t" is the middle of the
interval it completed in. A counter that went down (the node restarted) counts from zero.

The sampler never stops a phase: a scrape that fails marks the node down for that second, an
error of the executor is logged once, and the thread is a daemon the phase does not wait for long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from . import healing, promhist, promtext

INTERVAL_S = 1.0
SCRAPE_TIMEOUT_S = 0.8  # below the interval: a node that does not answer costs one second, not more
MAX_SAMPLES = 6 * 3600  # per node: six hours of seconds, the longest soak (bounded memory)
MAX_EVENTS = 20_000

# The page's series each figure comes from (promtext.total sums a metric's series).
CPU_SERIES = (("process_cpu_time_ns_total", 1e-9), ("process_cpu_seconds_total", 1.0))
GC_PAUSE = "jvm_gc_pause_seconds_sum"
HINTS_PENDING = healing.GAUGES["hints_pending"]
HINTS_REPLAYED = healing.COUNTERS["hints_replayed"][0]
RECORDS_REPAIRED = healing.COUNTERS["repair_sent"][0]  # all of its series: sent and received
EVENT_COUNTERS = {"flush": "kvlab_rocksdb_flushes_total", "compaction": "kvlab_rocksdb_compactions_total"}
# The key-value API's requests (get, put, delete, range; not /v0/status) by latency, every status.
REQUESTS = "kvlab_requests_seconds"
SERVER_NOTE = (
    "measured by the nodes from each request's arrival to its answer, all nodes together (no network, "
    "no client queue; the status route is not timed), read from their request histograms to within a third"
)


@dataclass(frozen=True)
class Reading:
    """The figures of one node's page at one time (wall clock, seconds since the epoch)."""

    at: float
    cpu_s: float | None
    gc_s: float | None
    hints_pending: float | None
    hints_replayed: float | None
    records_repaired: float | None
    events: dict[str, float | None]
    requests: dict[float, float] | None = None  # cumulative counts by latency bound (s)


def reading(page: dict[str, float], at: float) -> Reading:
    cpu = None
    for name, scale in CPU_SERIES:
        value = promtext.total(page, name)
        if value is not None:
            cpu = value * scale
            break
    return Reading(
        at,
        cpu,
        promtext.total(page, GC_PAUSE),
        promtext.total(page, HINTS_PENDING),
        promtext.total(page, HINTS_REPLAYED),
        promtext.total(page, RECORDS_REPAIRED),
        {kind: promtext.total(page, name) for kind, name in EVENT_COUNTERS.items()},
        promhist.cumulative(page, REQUESTS),
    )


def _grown(before: float | None, after: float | None) -> float | None:
    """A counter's increase; after a restart (it went down) its value since then."""
    if before is None or after is None:
        return None
    return after - before if after >= before else after


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


class NodeTrack:
    """One node's samples and events, from its readings in time order."""

    def __init__(self, name: str):
        self.name = name
        self.last: Reading | None = None  # the last reading the node answered
        self.last_tick: float | None = None  # the last scrape, answered or not
        self.samples: list[dict] = []  # t as wall clock here; made relative to t0 when written
        self.events: list[tuple[float, str]] = []
        self.answered: list[tuple[float, float, promhist.Buckets]] = []  # (interval began, ended, requests by bucket)

    def add(self, got: Reading | str, at: float, max_samples: int = MAX_SAMPLES, max_events: int = MAX_EVENTS) -> None:
        began, self.last_tick = self.last_tick, at
        if isinstance(got, str):
            if began is not None and len(self.samples) < max_samples:
                self.samples.append({"t": began, "cpu_cores": None, "gc_pause_ms": None, "hints_pending": None,
                                     "hints_replayed": None, "records_repaired": None, "up": False})
            return
        previous, self.last = self.last, got
        if previous is None or began is None:
            return  # the first answer: a baseline
        cpu = _grown(previous.cpu_s, got.cpu_s)
        span = got.at - previous.at
        gc = _grown(previous.gc_s, got.gc_s)
        if len(self.samples) < max_samples:
            self.samples.append({
                "t": began,
                "cpu_cores": _round(cpu / span, 3) if cpu is not None and span > 0 else None,
                "gc_pause_ms": _round(gc * 1000, 3) if gc is not None else None,
                "hints_pending": got.hints_pending,
                "hints_replayed": _grown(previous.hints_replayed, got.hints_replayed),
                "records_repaired": _grown(previous.records_repaired, got.records_repaired),
                "up": True,
            })
            answered = promhist.increase(previous.requests, got.requests)
            if answered is not None:
                self.answered.append((began, at, answered))
        middle = (began + at) / 2
        for kind, count in got.events.items():
            n = _grown(previous.events.get(kind), count)
            for _ in range(int(n or 0)):
                if len(self.events) < max_events:
                    self.events.append((middle, kind))


class Sampler:
    """Samples the nodes once every interval_s on a thread of its own, from start() to stop().

    read: the executor's node_metrics(), returning for every node its parsed Prometheus page
    (promtext.parse) or why it could not be read. clock: the wall clock (seconds since the epoch)."""

    def __init__(self, read: Callable[[], dict[str, dict[str, float] | str]], interval_s: float = INTERVAL_S,
                 clock: Callable[[], float] = time.time, log: Callable[[str], None] | None = None):
        self.read = read
        self.interval_s = interval_s
        self.clock = clock
        self.log = log or (lambda message: None)
        self.tracks: dict[str, NodeTrack] = {}
        self.scrapes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="node-sampler", daemon=True)
        self._failed = False

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ends the sampling after one last scrape (the phase's end), waiting a few seconds at most."""
        self._stop.set()
        self._thread.join(timeout=self.interval_s + SCRAPE_TIMEOUT_S + 5)

    def _loop(self) -> None:
        next_at = time.monotonic()
        while True:
            self.sample()
            if self._stop.is_set():
                return
            next_at = max(next_at + self.interval_s, time.monotonic())
            if self._stop.wait(next_at - time.monotonic()):
                self.sample()
                return

    def sample(self) -> None:
        """One scrape of every node, recorded at the middle of the time it took."""
        began = self.clock()
        try:
            pages = self.read()
        except Exception as e:  # noqa: BLE001 - the time series is an extra, never a reason to stop a phase
            if not self._failed:
                self.log(f"the nodes' metrics could not be read: {e}")
                self._failed = True
            pages = {name: f"not read: {e}" for name in self.tracks}
        at = (began + self.clock()) / 2
        self.scrapes += 1
        for name, page in pages.items():
            track = self.tracks.setdefault(name, NodeTrack(name))
            track.add(page if isinstance(page, str) else reading(page, at), at)

    def part(self, t0_epoch: float) -> tuple[dict[str, list[dict]], list[dict]]:
        """The "nodes" and "events" parts of timeseries.json, times relative to t0_epoch."""
        nodes = {
            name: [s | {"t": round(s["t"] - t0_epoch, 3)} for s in track.samples]
            for name, track in sorted(self.tracks.items())
        }
        events = sorted(
            ({"t": round(at - t0_epoch, 3), "node": name, "kind": kind}
             for name, track in self.tracks.items() for at, kind in track.events),
            key=lambda e: (e["t"], e["node"], e["kind"]),
        )
        return nodes, events

    def server_part(self, t0_epoch: float) -> dict | None:
        """The "server" part of timeseries.json: per interval (the nodes are scraped together, so
        their intervals coincide) its length, the requests every node answered and their p50 and
        p99; None when no node timed a request (a phase of the status route, or nodes without the
        histogram)."""
        by_interval: dict[tuple[float, float], list[promhist.Buckets]] = {}
        for track in self.tracks.values():
            for began, ended, answered in track.answered:
                by_interval.setdefault((began, ended), []).append(answered)
        seconds = []
        for began, ended in sorted(by_interval):
            answered = promhist.add(by_interval[(began, ended)])
            p50, p99 = (promhist.quantile(answered, q) for q in (0.5, 0.99))
            seconds.append({
                "t": round(began - t0_epoch, 3),
                "span_s": round(ended - began, 3),
                "requests": round(sum(answered.values())),
                "p50_ms": _round(None if p50 is None else p50 * 1000, 3),
                "p99_ms": _round(None if p99 is None else p99 * 1000, 3),
            })
        if not any(s["requests"] for s in seconds):
            return None
        return {"source": REQUESTS, "note": SERVER_NOTE, "seconds": seconds}
