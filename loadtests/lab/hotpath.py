"""The hot-path benchmark: one node with a 256 MB heap over 1M keys of 1 KiB,
GET at 25k/s and PUT at 15k/s with 64 connections at a constant rate, and the server CPU per
request of each compared with the no-op route GET /v0/status measured in the same run."""

from __future__ import annotations

import hashlib
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import procstat, tools
from .load import log
from .results import worst
from .runner import Run, RunConfig


@dataclass
class HotpathConfig:
    jar: Path = tools.ROOT / "service" / "target" / "kvlab-service.jar"
    java: str = ""
    java_options: str = "-Xmx256m"
    port: int = 28080
    data: Path | None = None  # reuse a filled data directory (kept afterwards)
    keys: int = 1_000_000
    value_size: int = 1024
    get_rate: int = 25_000
    put_rate: int = 15_000
    duration_s: int = 30
    warmup_s: int = 30
    connections: int = 64
    tool: str = "wrk"
    max_ratio: float = 1.5
    slo_p99_ms: float = 10.0
    flamegraphs: bool = False
    name: str = "hotpath"
    reports_dir: Path = tools.ROOT / "reports"
    compare: Path | None = None


def _java(cfg: HotpathConfig) -> str:
    if cfg.java:
        return cfg.java
    for home in ("/usr/lib/jvm/temurin-25-jdk-amd64", os.environ.get("JAVA_HOME", "")):
        if home and Path(home, "bin", "java").exists():
            return str(Path(home, "bin", "java"))
    return "java"


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/v0/status", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


class Node:
    """One kvlab node of our own: a private copy of the jar (a rebuild cannot pull it away from
    under the running JVM), a port checked free first, stopped with SIGTERM (SIGKILL after 30 s)."""

    def __init__(self, cfg: HotpathConfig, data_dir: Path, work: Path):
        if not cfg.jar.exists():
            raise SystemExit(f"no {cfg.jar}: run make build")
        if not _port_free(cfg.port):
            raise SystemExit(f"port {cfg.port} is taken: choose another with PORT=")
        self.jar = work / "kvlab-service.jar"
        shutil.copy2(cfg.jar, self.jar)
        self.url = f"http://127.0.0.1:{cfg.port}"
        self.argv = [
            _java(cfg),
            # A node out of heap exits rather than serve on half-broken, wherever it runs.
            "-XX:+ExitOnOutOfMemoryError",
            *shlex.split(cfg.java_options),
            "-jar",
            str(self.jar),
            f"--server.port={cfg.port}",
            f"--kvlab.storage.dir={data_dir}",
        ]
        self.log = work / "node.log"
        with open(self.log, "w") as f:
            self.process = tools.spawn(self.argv, f)
        deadline = time.monotonic() + 90
        while not _answers(self.url):
            if self.process.poll() is not None:
                raise SystemExit(f"the node exited with {self.process.returncode}:\n{self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit("the node did not answer within 90 s")
            time.sleep(0.3)
        self.pid = self.process.pid
        log(f"node up: pid {self.pid} on {self.url} ({' '.join(self.argv)})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _row(label: str, rec: dict, base: dict | None) -> dict:
    r = rec["result"]
    cpu = rec["cpu"]
    (proc,) = cpu["processes"].values()
    ratio = proc["us_per_request"] / base["server_us"] if base and base["server_us"] else math.nan
    return {
        "label": label,
        "requested": r.get("requested_rate"),
        "achieved": r["achieved_rate"],
        "p99": worst(r, "p99"),
        "server_cores": proc["cores"],
        "server_us": proc["us_per_request"],
        "ratio": ratio,
        "ratio_text": "1 (baseline)" if base is None else (f"{ratio:.2f}x" if not math.isnan(ratio) else "–"),
        "loadgen_cores": cpu["loadgen"]["cores"],
        "others_cores": cpu["others_cpu_s"] / cpu["wall_s"] if cpu["wall_s"] else math.nan,
        "error_rate": r.get("error_rate", 0.0),
    }


def _settle(pid: int, threshold: float = 0.05, window_s: float = 3.0, max_s: float = 180.0) -> dict:
    """Waits (at most max_s) until the idle node's own CPU falls under threshold cores: after a fill,
    RocksDB's flushes and compactions run in the JVM's process and would be billed to the next
    phase's requests. Returns how long it took and the node's CPU use when idle."""
    t0 = time.monotonic()
    while True:
        a = procstat.process_cpu_seconds(pid)
        time.sleep(window_s)
        cores = (procstat.process_cpu_seconds(pid) - a) / window_s
        waited = time.monotonic() - t0
        if cores < threshold or waited >= max_s:
            log(f"node idle CPU {cores:.3f} cores after {waited:.0f} s")
            return {"idle_cores": cores, "settle_s": waited, "settled": cores < threshold}


def _n(v: float) -> str:
    return f"{v:,.0f}".replace(",", " ")


def _check(row: dict, rate: int, cfg: HotpathConfig) -> str:
    held = row["achieved"] >= rate * 0.99
    fast = row["p99"] < cfg.slo_p99_ms
    cheap = row["ratio"] <= cfg.max_ratio
    return (
        f"{row['label']}: target {_n(rate)}/s {'held' if held else 'NOT held'} "
        f"(achieved {_n(row['achieved'])}/s); p99 {row['p99']:.2f} ms "
        f"({'under' if fast else 'NOT under'} {cfg.slo_p99_ms:g} ms); server CPU per request "
        f"{row['server_us']:.1f} µs = {row['ratio']:.2f}x the no-op route's at the same rate "
        f"({'within' if cheap else 'OVER'} {cfg.max_ratio:g}x); {row['error_rate'] * 100:.3f}% failed; "
        f"load generator {row['loadgen_cores']:.2f} cores, other processes {row['others_cores']:.2f} cores"
    )


def run_hotpath(cfg: HotpathConfig) -> Path:
    work = Path(tempfile.mkdtemp(prefix="kvlab-hotpath-"))
    jar_sha256 = hashlib.sha256(cfg.jar.read_bytes()).hexdigest() if cfg.jar.exists() else "missing"
    data_dir = cfg.data or (work / "data")
    fill_marker = data_dir / ".kvlab-filled"
    wanted_fill = f"{cfg.keys} {cfg.value_size}"
    node = None
    run = None
    try:
        node = Node(cfg, data_dir, work)
        rc = RunConfig(
            targets=[node.url],
            pids=[node.pid],
            name=cfg.name,
            keys=cfg.keys,
            value_size=cfg.value_size,
            tool=cfg.tool,
            vus=cfg.connections,
            max_vus=cfg.connections,
            connections=cfg.connections,
            threads=2,
            slo_p99_ms=cfg.slo_p99_ms,
            events=[],
            fill_vus=16,
            batch=4,
            reports_dir=cfg.reports_dir,
            compare=cfg.compare,
            phases=["fill", "status", "get", "status", "put"],
            duration_s=cfg.duration_s,
        )
        run = Run(rc, "hotpath", {"hotpath": {k: str(v) if isinstance(v, Path) else v for k, v in vars(cfg).items()}})
        run.doc["invocation"] = run.doc["invocation"] or "loadtests/bench/hotpath.sh"
        if fill_marker.exists() and fill_marker.read_text().strip() == wanted_fill:
            log(f"{data_dir} already holds {cfg.keys} keys of {cfg.value_size} bytes: no fill")
        else:
            run.phase(rc.spec("fill"), "fill", [])
            fill_marker.write_text(wanted_fill + "\n")
        settle = _settle(node.pid)
        if cfg.warmup_s > 0:
            for scenario, rate in (("status", cfg.get_rate), ("get", cfg.get_rate), ("put", cfg.put_rate)):
                run.phase(rc.spec(scenario, rate, cfg.warmup_s), f"warm-up {scenario}@{rate}", [], warmup=True)
        measured = {}
        for scenario, rate in (
            ("status", cfg.get_rate),
            ("get", cfg.get_rate),
            ("status", cfg.put_rate),
            ("put", cfg.put_rate),
        ):
            label = f"{scenario}@{rate}"
            measured[label] = run.phase(rc.spec(scenario, rate, cfg.duration_s), label, [])
        if cfg.flamegraphs:
            for scenario, rate in (("get", cfg.get_rate), ("put", cfg.put_rate)):
                run.phase(rc.spec(scenario, rate, 20), f"profiled {scenario}@{rate}", ["cpu", "alloc"])
        base_get = _row(f"status@{cfg.get_rate}", measured[f"status@{cfg.get_rate}"], None)
        base_put = _row(f"status@{cfg.put_rate}", measured[f"status@{cfg.put_rate}"], None)
        get = _row(f"get@{cfg.get_rate}", measured[f"get@{cfg.get_rate}"], base_get)
        put = _row(f"put@{cfg.put_rate}", measured[f"put@{cfg.put_rate}"], base_put)
        run.doc["hotpath"] = {
            "java_options": cfg.java_options,
            "keys": cfg.keys,
            "value_size": cfg.value_size,
            "connections": cfg.connections,
            "tool": run.doc["phases"][-1]["result"].get("tool", cfg.tool),
            "rows": [base_get, get, base_put, put],
            "checks": [_check(get, cfg.get_rate, cfg), _check(put, cfg.put_rate, cfg)],
            "node_command": " ".join(shlex.quote(a) for a in node.argv),
            "jar": f"{tools.rel(cfg.jar)} (sha256 {jar_sha256[:16]})",
            "idle_cores": settle["idle_cores"],
            "settle_s": settle["settle_s"],
            "settled": settle["settled"],
        }
        for c in run.doc["hotpath"]["checks"]:
            log(c)
        run.save()
        return run.finish()
    finally:
        if node:
            node.stop()
            if run is not None:
                shutil.copy2(node.log, run.dir / "node.log")
        shutil.rmtree(work, ignore_errors=True)  # the jar copy, and the data unless DATA was given
