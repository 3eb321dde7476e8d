"""The large-reads benchmark: does a cluster serve what its memory budget allows under a burst of
large reads? Three nodes of their own (scripts/local-cluster.sh) with small heaps (-Xmx128m); values
of 1 MiB written at 3/3; then, for a fixed time, 96 clients read them at 3/3 back to back, spread
over the nodes, while a steady reader asks for a small key. The clients are threads of this process
over http.client, one connection each. The figures (lab.largereadsfigures): the capacity the
coordinators' budgets hold, the goodput, the 200/503/504 counts, the small key's latency, and
whether every node is alive and its log free of OutOfMemoryError."""

from __future__ import annotations

import concurrent.futures
import hashlib
import http.client
import multiprocessing
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from . import defaults, largereadsfigures as figures, promtext, tools
from .load import log
from .onenode import JAR, java, port_free
from .runrecord import Run
from .settings import RunConfig

LARGE = defaults.read(Path(__file__).resolve().with_name("largereads.env"))
CLUSTER = tools.ROOT / "scripts" / "local-cluster.sh"
MIB = 1 << 20


@dataclass
class LargeReadsConfig:
    """The benchmark's settings; defaults from largereads.env."""

    jar: Path = JAR
    java: str = ""
    nodes: int = int(LARGE["LARGE_NODES"])
    java_options: str = LARGE["LARGE_JAVA_OPTIONS"]
    port: int = int(LARGE["LARGE_PORT"])
    values: int = int(LARGE["LARGE_VALUES"])
    value_size: int = int(LARGE["LARGE_VALUE_SIZE"])
    replicas: str = LARGE["LARGE_REPLICAS"]
    clients: int = int(LARGE["LARGE_CLIENTS"])
    duration_s: int = defaults.duration(LARGE["LARGE_DURATION"])
    warmup_s: int = defaults.duration(LARGE["LARGE_WARMUP"])
    small_rate: int = int(LARGE["LARGE_SMALL_RATE"])
    request_timeout_s: float = float(LARGE["LARGE_REQUEST_TIMEOUT"])
    replica_share: float = float(LARGE["LARGE_REPLICA_SHARE"])  # kvlab.memory.replica-share of the nodes
    largest_value: int = MIB  # kvlab.api.max-value-size of the nodes
    goodput_share: float = float(LARGE["LARGE_GOODPUT_SHARE"])  # target: at least this share of the capacity
    max_timed_out_share: float = float(LARGE["LARGE_MAX_TIMED_OUT"])  # target: 504 under this share of the reads
    small_p99_ms: float = float(LARGE["LARGE_SMALL_P99_MS"])  # target: the small key's p99 under this
    name: str = LARGE["LARGE_NAME"]
    reports_dir: Path = tools.ROOT / "reports"
    compare: Path | None = None
    flamegraphs: bool = False  # profile every node (cpu) over the burst's middle

    @property
    def from_replicas(self) -> int:
        return int(self.replicas.split("/")[1])


def value_of(i: int, size: int) -> bytes:
    """Value i: bytes that differ per value and per position, so a torn or mixed answer is seen."""
    seed = hashlib.sha256(f"large-read-{i}".encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def key(i: int) -> str:
    return f"large-read-{i}"


class Connection:
    """A client's own keep-alive connection to one node; a new one after a failure."""

    def __init__(self, url: str, timeout_s: float):
        m = re.match(r"http://([^:/]+):(\d+)", url)
        self.host, self.port, self.timeout_s = m.group(1), int(m.group(2)), timeout_s
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        """The status and body; status 0 when there was no answer (refused, reset, timed out)."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            self.conn.request(method, path, body=body)
            r = self.conn.getresponse()
            return r.status, r.read()
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return 0, b""

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def entity(k: str, replicas: str) -> str:
    return f"/v0/entity?id={k}&replicas={replicas}"


class Cluster:
    """The benchmark's nodes: scripts/local-cluster.sh with its data, logs and a copy of the jar in work."""

    def __init__(self, cfg: LargeReadsConfig, work: Path):
        if not cfg.jar.exists():
            raise SystemExit(f"no {cfg.jar}: run make build")
        for p in range(cfg.port, cfg.port + cfg.nodes):
            if not port_free(p) or not port_free(p + 1000):
                raise SystemExit(f"port {p} or {p + 1000} is taken: choose another with LARGE_PORT=")
        self.jar = work / "kvlab-service.jar"
        shutil.copy2(cfg.jar, self.jar)
        self.root = work / "cluster"
        self.env = os.environ | {
            "JAVA": java(cfg.java), "JAR": str(self.jar), "DATA_ROOT": str(self.root), "BASE_PORT": str(cfg.port),
            "JAVA_OPTS": cfg.java_options, "START_TIMEOUT": "180",
        }
        self.urls = [f"http://127.0.0.1:{cfg.port + i}" for i in range(cfg.nodes)]
        self.count = cfg.nodes
        self.up = False

    def start(self) -> None:
        self.up = True
        subprocess.run([str(CLUSTER), "up", str(self.count)], env=self.env, check=True, cwd=tools.ROOT)
        self.pids = [int((self.root / "run" / f"n{i}.pid").read_text()) for i in range(self.count)]
        log(f"nodes up: pids {', '.join(map(str, self.pids))} on {', '.join(self.urls)}")

    def log_file(self, i: int) -> Path:
        return self.root / "run" / f"n{i}.log"

    def stop(self) -> None:
        if self.up:
            subprocess.run([str(CLUSTER), "down"], env=self.env, check=False, cwd=tools.ROOT)
            self.up = False

    def budget(self, i: int) -> int | None:
        """Node i's memory budget in bytes (kvlab_memory_limit_bytes), or None when unreadable."""
        url = f"http://127.0.0.1:{int(self.urls[i].rsplit(':', 1)[1]) + 1000}/actuator/prometheus"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                metrics = promtext.parse(r.read().decode())
        except OSError as e:
            log(f"node n{i}'s metrics could not be read: {e}")
            return None
        # The series may carry the registry's common tags: kvlab_memory_limit_bytes{application="..."}.
        value = next((v for k, v in metrics.items() if k.split("{")[0] == "kvlab_memory_limit_bytes"), None)
        return int(value) if value is not None else None

    def region_bytes(self, i: int, max_heap: int) -> tuple[int, str]:
        """Node i's G1 region size, from the JVM (jcmd), else what G1 chooses for max_heap; and where it came from."""
        try:
            flags = subprocess.run(["jcmd", str(self.pids[i]), "VM.flags"], capture_output=True, text=True, timeout=30).stdout
            m = re.search(r"G1HeapRegionSize=(\d+)", flags)
            if m:
                return int(m.group(1)), "the JVM's (jcmd VM.flags)"
        except (OSError, subprocess.TimeoutExpired):
            pass
        return figures.g1_region_bytes(max_heap), "G1's default for the heap"

    def health(self, i: int) -> dict:
        alive = _alive(self.pids[i])
        try:
            with urllib.request.urlopen(f"{self.urls[i]}/v0/status", timeout=10) as r:
                answers = r.status == 200
        except OSError:
            answers = False
        text = self.log_file(i).read_text(errors="replace") if self.log_file(i).exists() else ""
        return {"node": f"n{i}", "pid": self.pids[i], "alive": alive, "answers": answers, "out_of_memory": "OutOfMemoryError" in text}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def max_heap(java_options: str) -> int:
    m = re.search(r"-Xmx(\d+)([kKmMgG]?)", java_options)
    if not m:
        raise SystemExit(f"LARGE_JAVA_OPTIONS must set -Xmx: the capacity is computed from it ({java_options!r})")
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": MIB, "g": 1 << 30}[m.group(2).lower()]


def fill(cluster: Cluster, cfg: LargeReadsConfig) -> None:
    """The values and the small key, each at 3/3 and again while it answers 504 (a cold node's first
    calls to its peers can take longer than their timeout), for at most a minute each."""
    conn = Connection(cluster.urls[0], 30)
    items = [(key(i), value_of(i, cfg.value_size)) for i in range(cfg.values)] + [("small", b"s")]
    for k, v in items:
        deadline = time.monotonic() + 60
        status, body = conn.request("PUT", entity(k, cfg.replicas), v)
        while status in (0, 503, 504) and time.monotonic() < deadline:
            time.sleep(0.5)
            status, body = conn.request("PUT", entity(k, cfg.replicas), v)
        if status != 201:
            raise SystemExit(f"writing {k} answered {status}: {body[:200]!r}")
    conn.close()


def warm_up(cluster: Cluster, cfg: LargeReadsConfig) -> None:
    """A few reads through every node, not counted: the burst meets compiled read paths."""
    conns = [Connection(u, 30) for u in cluster.urls]
    for r in range(10):
        for c in conns:
            c.request("GET", entity(key(r % cfg.values), cfg.replicas))
            c.request("GET", entity("small", cfg.replicas))
    for c in conns:
        c.close()


@dataclass
class Burst:
    large: list[figures.Sample] = field(default_factory=list)
    small: list[figures.Sample] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    loadgen_cpu_s: float = 0.0  # the large readers' CPU (this process) over the burst


def small_reader(urls: list[str], replicas: str, rate: int, start: float, end: float, timeout_s: float, out) -> None:
    """The small key read every 1/rate s from start to end (time.monotonic, one clock for every
    process), at the nodes in turn, each read on a worker of its own so that a slow answer does not
    delay the next; the samples sent to out (a pipe). A process of its own: in the large readers'
    process it would wait for Python's interpreter lock behind them, and measure that."""
    samples, lock, conns = [], threading.Lock(), threading.local()

    def read(n: int) -> None:
        if not hasattr(conns, "to"):
            conns.to = [Connection(u, timeout_s) for u in urls]
        sent = time.monotonic()
        status, body = conns.to[n % len(urls)].request("GET", entity("small", replicas))
        sample = figures.Sample(sent, time.monotonic(), status, status != 200 or body == b"s")
        with lock:
            samples.append(sample)

    time.sleep(max(0.0, start - time.monotonic()))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="small") as pool:
        n = 0
        while start + n / rate < end:
            pool.submit(read, n)
            n += 1
            time.sleep(max(0.0, start + n / rate - time.monotonic()))
    out.send([(s.sent, s.answered, s.status, s.whole) for s in samples])
    out.close()


def burst(cluster: Cluster, cfg: LargeReadsConfig, seconds: float, during=None) -> Burst:
    """cfg.clients clients read the values back to back for seconds, client c's n-th read at node
    (c + n) mod nodes, while small_reader reads the small key in a process of its own. during():
    run a quarter into the burst (a profile)."""
    out = Burst()
    values = [value_of(i, cfg.value_size) for i in range(cfg.values)]
    lock = threading.Lock()
    stop = threading.Event()

    def client(c: int) -> None:
        conns = [Connection(u, cfg.request_timeout_s) for u in cluster.urls]
        mine, n = [], 0
        while not stop.is_set():
            node, value = (c + n) % len(conns), (c + n) % cfg.values
            sent = time.monotonic()
            status, body = conns[node].request("GET", entity(key(value), cfg.replicas))
            answered = time.monotonic()
            mine.append(figures.Sample(sent, answered, status, status != 200 or body == values[value]))
            n += 1
        for conn in conns:
            conn.close()
        with lock:
            out.large.extend(mine)

    # Forked before any client thread starts; it waits for the burst's start.
    start = time.monotonic() + 0.5
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    small = ctx.Process(target=small_reader, name="small-reader", daemon=True,
                        args=(cluster.urls, cfg.replicas, cfg.small_rate, start, start + seconds, cfg.request_timeout_s, send))
    small.start()
    send.close()
    threads = [threading.Thread(target=client, args=(c,), daemon=True, name=f"large-{c}") for c in range(cfg.clients)]
    time.sleep(max(0.0, start - time.monotonic()))
    cpu = time.process_time()
    out.started = time.monotonic()
    for t in threads:
        t.start()
    if during is not None:
        time.sleep(max(0.0, out.started + seconds / 4 - time.monotonic()))
        threading.Thread(target=during, daemon=True).start()
    time.sleep(max(0.0, out.started + seconds - time.monotonic()))
    stop.set()
    for t in threads:
        t.join()
    out.ended = time.monotonic()
    out.loadgen_cpu_s = time.process_time() - cpu
    out.small = [figures.Sample(*s) for s in receive.recv()]
    small.join(timeout=cfg.request_timeout_s + 5)
    return out


def run_large_reads(cfg: LargeReadsConfig) -> Path:
    work = Path(tempfile.mkdtemp(prefix="kvlab-large-reads-"))
    cluster = Cluster(cfg, work)
    run = None
    try:
        cluster.start()
        rc = RunConfig(
            targets=list(cluster.urls), pids=list(cluster.pids), name=cfg.name, keys=cfg.values, value_size=cfg.value_size,
            replicas=cfg.replicas, tool="python http.client", vus=cfg.clients, max_vus=cfg.clients, connections=cfg.clients,
            slo_p99_ms=cfg.small_p99_ms, events=[], reports_dir=cfg.reports_dir, compare=cfg.compare,
            phases=[], duration_s=cfg.duration_s, request_timeout_s=cfg.request_timeout_s,
        )
        run = Run(rc, "largereads", {"largereads": {k: str(v) if isinstance(v, Path) else v for k, v in vars(cfg).items()}})
        run.doc["invocation"] = run.doc["invocation"] or "python -m lab large-reads"
        log(f"writing {cfg.values} values of {cfg.value_size} bytes at {cfg.replicas}")
        fill(cluster, cfg)
        warm_up(cluster, cfg)
        heap = max_heap(cfg.java_options)
        budgets = [cluster.budget(i) for i in range(cfg.nodes)]
        region, region_source = cluster.region_bytes(0, heap)
        known = [b if b is not None else heap // 4 for b in budgets]
        cap = figures.capacity(known, cfg.value_size, cfg.from_replicas, region, cfg.replica_share, cfg.largest_value)
        log(f"capacity {cap.reads} reads at once ({', '.join(map(str, cap.per_node))} per node); the burst: "
            f"{cfg.clients} clients for {cfg.duration_s} s, a small read {cfg.small_rate}/s")
        profiles = []

        def profile() -> None:
            # Every node at once, over the same half of the burst.
            seconds = max(5, cfg.duration_s // 2)

            def one(i: int, pid: int) -> dict:
                out = run.dir / f"flame-n{i}-cpu.html"
                done = subprocess.run(
                    [str(tools.ROOT / "loadtests" / "profiler" / "profile.sh"), str(pid), "cpu", str(seconds), str(out)],
                    capture_output=True, text=True, cwd=tools.ROOT,
                )
                return {"node": f"n{i}", "file": out.name, "ok": done.returncode == 0 and out.exists()}

            with concurrent.futures.ThreadPoolExecutor(max_workers=len(cluster.pids)) as pool:
                profiles.extend(pool.map(one, range(len(cluster.pids)), cluster.pids))

        if cfg.warmup_s > 0:
            log(f"warm-up: the burst for {cfg.warmup_s} s, not measured (the JIT compiles the paths it takes)")
            burst(cluster, cfg, cfg.warmup_s)
        load_before = os.getloadavg()
        b = burst(cluster, cfg, cfg.duration_s, profile if cfg.flamegraphs else None)
        load_after = os.getloadavg()
        health = [cluster.health(i) for i in range(cfg.nodes)]
        doc = figures.summary(b.large, b.small, b.ended - b.started, cap, cfg.value_size)
        doc |= {
            "nodes": cfg.nodes,
            "clients": cfg.clients,
            "duration_s": cfg.duration_s,
            "warmup_s": cfg.warmup_s,
            "loadgen_cores": b.loadgen_cpu_s / (b.ended - b.started),
            "small_rate": cfg.small_rate,
            "replicas": cfg.replicas,
            "value_size": cfg.value_size,
            "values": cfg.values,
            "java_options": cfg.java_options,
            "budget_bytes": budgets,
            "region_bytes": region,
            "region_source": region_source,
            "replica_share": cfg.replica_share,
            "health": health,
            "load_average_before": list(load_before),
            "load_average_after": list(load_after),
            "profiles": profiles,
            "targets": {
                "goodput_share": cfg.goodput_share,
                "max_timed_out_share": cfg.max_timed_out_share,
                "small_p99_ms": cfg.small_p99_ms,
            },
            "node_command": f"JAVA_OPTS='{cfg.java_options}' scripts/local-cluster.sh up {cfg.nodes}",
        }
        run.doc["largereads"] = doc
        log(
            f"{doc['reads']} reads, statuses {doc['statuses']}; goodput {doc['goodput']:.2f} of {cap.reads} "
            f"({doc['goodput_share'] * 100:.0f} %); 504 {doc['timed_out_share'] * 100:.2f} %; small key p99 "
            f"{doc['small_p99_ms']:.1f} ms ({doc['small_statuses']}); load average {load_before[0]:.1f} -> {load_after[0]:.1f}"
        )
        run.save()
        return run.finish()
    finally:
        cluster.stop()
        if run is not None:
            for i in range(cfg.nodes):
                if cluster.log_file(i).exists():
                    shutil.copy2(cluster.log_file(i), run.dir / f"n{i}.log")
        shutil.rmtree(work, ignore_errors=True)
