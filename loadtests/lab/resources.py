"""The nodes' resources over a long phase (the soak): every interval, per node, the levels a leak or
a store that falls behind would raise. A thread samples them from start() to stop(); write() puts
them next to the phase's time series as resources.json.

    rss_bytes                 resident memory. Local nodes: the process's RSS (psutil). Pods: the
                              kvlab container's anonymous memory from its cgroup's memory.stat
                              (anon; v1: total_rss), the memory RSS counts, without the page cache
                              RocksDB's files fill and the kernel gives back under pressure.
    open_files                the files the JVM holds open: RocksDB's SST files and logs, its own
                              logs and jars, not its sockets (their number follows the load
                              generator's connections). Local: psutil's open_files(); pods: the
                              JVM's descriptors that link to a file outside /dev, read in the pod.
    heap_after_gc_bytes       the long-lived heap pool (the old generation) after the last GC:
                              jvm_memory_usage_after_gc{area="heap",pool="long-lived"} × its maximum,
                              jvm_gc_max_data_size_bytes; heap_max_bytes is that maximum.
    sst_bytes                 RocksDB's SST files (kvlab_rocksdb{property="total-sst-files-size"}).
    pending_compaction_bytes  what compaction still has to rewrite (estimate-pending-compaction-bytes).

The page figures come through the executor's node_metrics() (lab.nodeseries reads the same pages
once a second for CPU and GC). A figure that cannot be read is null, with why in "missing" once per
node and source; a sample never stops the phase.

resources.json: {interval_s, t0_epoch, figures: [...], sources: {figure: where from},
nodes: {node: [{t, <figure>: value | null, ...}]}, missing: {node: {source: why}}}, t in seconds
from the phase's second 0 (a sample before the load began has t < 0).
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from . import promtext

FIGURES = ("rss_bytes", "open_files", "heap_after_gc_bytes", "sst_bytes", "pending_compaction_bytes")
PAGE_SOURCES = {
    "heap_after_gc_bytes": 'jvm_memory_usage_after_gc{area="heap",pool="long-lived"} × jvm_gc_max_data_size_bytes',
    "sst_bytes": 'kvlab_rocksdb{property="total-sst-files-size"}',
    "pending_compaction_bytes": 'kvlab_rocksdb{property="estimate-pending-compaction-bytes"}',
}
# Bounded memory: ten days of samples at 10 s, far beyond any soak the node sampler holds.
MAX_SAMPLES = 100_000


def page_figures(page: dict[str, float]) -> dict[str, float | None]:
    """The figures a node's parsed Prometheus page (lab.promtext.parse) gives."""
    share = promtext.total(page, "jvm_memory_usage_after_gc", area="heap", pool="long-lived")
    heap_max = promtext.total(page, "jvm_gc_max_data_size_bytes")
    if heap_max is not None and heap_max <= 0:
        heap_max = None  # -1: the pool has no maximum
    return {
        "heap_after_gc_bytes": share * heap_max if share is not None and heap_max else None,
        "heap_max_bytes": heap_max,
        "sst_bytes": promtext.total(page, "kvlab_rocksdb", property="total-sst-files-size"),
        "pending_compaction_bytes": promtext.total(page, "kvlab_rocksdb", property="estimate-pending-compaction-bytes"),
    }


class LocalProcesses:
    """RSS and open files of local nodes by pid (psutil). nodes: the executor's, whose pid changes
    when the lab starts a killed node again."""

    source = {"rss_bytes": "the process's RSS (psutil)", "open_files": "the process's open files, sockets aside (psutil)"}

    def __init__(self, nodes: list):
        self.nodes = nodes

    def read(self) -> dict[str, dict[str, float] | str]:
        out: dict[str, dict[str, float] | str] = {}
        for n in self.nodes:
            try:
                p = psutil.Process(n.pid)
                with p.oneshot():
                    out[n.name] = {"rss_bytes": float(p.memory_info().rss), "open_files": float(len(p.open_files()))}
            except psutil.Error as e:
                out[n.name] = f"pid {n.pid}: {type(e).__name__} {e}".strip()
        return out


# In the kvlab container: its cgroup's memory.stat (v2 at the root of its namespace, else v1's memory
# controller), then a line with the files the JVM holds open (the pod shares its process namespace
# with the profiler sidecar: the JVM is found by name, as the sidecar finds it).
POD_SCRIPT = r"""cat /sys/fs/cgroup/memory.stat 2>/dev/null || cat /sys/fs/cgroup/memory/memory.stat
for dir in /proc/[0-9]*; do
  read -r comm 2>/dev/null <"$dir/comm" || continue
  if [ "$comm" = java ]; then
    echo "jvm_open_files $(ls -l "$dir/fd" 2>/dev/null | grep ' -> /' | grep -vc ' -> /dev/')"
    break
  fi
done"""


def pod_figures(text: str) -> dict[str, float]:
    """What POD_SCRIPT printed: the anonymous memory of the cgroup's memory.stat (anon; v1
    total_rss or rss) and, when it found the JVM, its open files."""
    fields = dict(line.split(None, 1) for line in text.splitlines() if len(line.split()) == 2)
    anon = next((float(fields[k]) for k in ("anon", "total_rss", "rss") if k in fields), None)
    if anon is None:
        raise ValueError(f"no anon, total_rss or rss in memory.stat ({text.strip()[:80]!r})")
    files = fields.get("jvm_open_files")
    return {"rss_bytes": anon} | ({"open_files": float(files)} if files is not None else {})


class PodMemory:
    """The kvlab containers' anonymous memory from their cgroups and the JVM's open files, one
    `kubectl exec` per pod and sample (the executor reads the containers' CPU time the same way)."""

    source = {
        "rss_bytes": "the kvlab container's anonymous memory (cgroup memory.stat: anon, v1 total_rss)",
        "open_files": "the JVM's descriptors that link to a file outside /dev (/proc/PID/fd in the pod)",
    }

    def __init__(self, kubectl, pods: list[str], timeout_s: float = 20):
        self.kubectl = kubectl
        self.pods = pods
        self.timeout_s = timeout_s

    def read(self) -> dict[str, dict[str, float] | str]:
        def one(pod: str) -> dict[str, float]:
            text = self.kubectl.run("exec", pod, "-c", "kvlab", "--", "sh", "-c", POD_SCRIPT, timeout=self.timeout_s)
            return pod_figures(text)

        out: dict[str, dict[str, float] | str] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(self.pods))) as pool:
            futures = {pod: pool.submit(one, pod) for pod in self.pods}
            for pod, f in futures.items():
                try:
                    out[pod] = f.result()
                except Exception as e:  # noqa: BLE001 - why, in the sample
                    out[pod] = f"{type(e).__name__}: {e}"
        return out


# A pod's page comes through its management channel, which the node sampler may hold for a moment.
POD_PAGE_TIMEOUT_S = 5.0


def page_reader(executor) -> Callable[[], dict] | None:
    """What reads the nodes' Prometheus pages for this executor; None when it cannot."""
    if not hasattr(executor, "node_metrics"):
        return None
    if executor.name == "k8s":
        return lambda: executor.node_metrics(timeout=POD_PAGE_TIMEOUT_S)
    return executor.node_metrics


def process_reader(executor):
    """What reads the nodes' memory and open files for this executor."""
    if executor.name == "k8s":
        return PodMemory(executor.kubectl, [n.name for n in executor.nodes])
    return LocalProcesses(executor.nodes)


class Sampler:
    """Samples every interval_s on a thread of its own, from start() to stop(). pages: the
    executor's node_metrics() (None: no page figures); processes: a process_reader()."""

    def __init__(self, pages: Callable[[], dict] | None, processes, interval_s: float,
                 clock: Callable[[], float] = time.time, log: Callable[[str], None] | None = None):
        self.pages = pages
        self.processes = processes
        self.interval_s = interval_s
        self.clock = clock
        self.log = log or (lambda message: None)
        self.samples: dict[str, list[dict]] = {}
        self.missing: dict[str, dict[str, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="resource-sampler", daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 30)

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _loop(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval_s):
                return

    def _read(self, source: str, read: Callable[[], dict] | None) -> dict:
        if read is None:
            return {}
        try:
            return read()
        except Exception as e:  # noqa: BLE001 - a sample is an extra, never a reason to stop a phase
            self.log(f"resources: the {source} could not be read: {e}")
            return {}

    def sample(self) -> None:
        """One sample of every node, at the middle of the time its reads took."""
        began = self.clock()
        pages = self._read("nodes' metrics", self.pages)
        processes = self._read("nodes' processes", self.processes.read if self.processes else None)
        at = (began + self.clock()) / 2
        for name in sorted(set(pages) | set(processes)):
            row: dict[str, float | None] = {"t": at} | dict.fromkeys(FIGURES)
            for source, got in (("page", pages.get(name)), ("process", processes.get(name))):
                if isinstance(got, str):
                    self.missing.setdefault(name, {}).setdefault(source, got)
                elif got:
                    row |= page_figures(got) if source == "page" else got
            track = self.samples.setdefault(name, [])
            if len(track) < MAX_SAMPLES:
                track.append(row)

    def sources(self) -> dict[str, str]:
        return PAGE_SOURCES | getattr(self.processes, "source", {})

    def write(self, out: Path, t0_epoch: float) -> Path:
        """resources.json in out, times relative to t0_epoch (the phase's second 0)."""
        doc = {
            "interval_s": self.interval_s,
            "t0_epoch": round(t0_epoch, 3),
            "figures": list(FIGURES),
            "sources": self.sources(),
            "nodes": {
                name: [{k: (round(v - t0_epoch, 3) if k == "t" else v) for k, v in s.items()} for s in rows]
                for name, rows in sorted(self.samples.items())
            },
            "missing": self.missing,
        }
        path = out / "resources.json"
        path.write_text(json.dumps(doc, separators=(",", ":")))
        return path
