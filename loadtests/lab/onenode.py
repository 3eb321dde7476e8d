"""What the benchmarks on one node of their own share (the hot-path and the scale benchmark): the
node itself, the wait until it is idle after a fill, and a phase's server CPU per request as a row."""

from __future__ import annotations

import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from . import procstat, tools
from .faults import answers
from .load import log
from .results import worst

JAR = tools.ROOT / "service" / "target" / "kvlab-service.jar"


def java(given: str = "") -> str:
    """The java to start a node with: given, else JDK 25 where the build expects it, else PATH's."""
    if given:
        return given
    for home in ("/usr/lib/jvm/temurin-25-jdk-amd64", os.environ.get("JAVA_HOME", "")):
        if home and Path(home, "bin", "java").exists():
            return str(Path(home, "bin", "java"))
    return "java"


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


class Node:
    """One kvlab node of our own: a private copy of the jar (a rebuild cannot pull it away from
    under the running JVM), a port checked free first, stopped with SIGTERM (SIGKILL after 30 s).
    preexec runs in the child before the JVM starts (to put it into a cgroup, say)."""

    def __init__(
        self,
        jar: Path,
        port: int,
        java_options: str,
        data_dir: Path,
        work: Path,
        java_exe: str = "",
        preexec: Callable[[], None] | None = None,
    ):
        if not jar.exists():
            raise SystemExit(f"no {jar}: run make build")
        if not port_free(port):
            raise SystemExit(f"port {port} is taken: choose another with PORT=")
        self.jar = work / "kvlab-service.jar"
        shutil.copy2(jar, self.jar)
        self.url = f"http://127.0.0.1:{port}"
        options = shlex.split(java_options)
        self.argv = [
            java(java_exe),
            # A node out of heap exits rather than serve on half-broken, wherever it runs.
            *([] if "-XX:+ExitOnOutOfMemoryError" in options else ["-XX:+ExitOnOutOfMemoryError"]),
            *options,
            "-jar",
            str(self.jar),
            f"--server.port={port}",
            f"--kvlab.storage.dir={data_dir}",
        ]
        self.log = work / "node.log"
        with open(self.log, "w") as f:
            self.process = tools.spawn(self.argv, f, preexec_fn=preexec)
        self.pid = self.process.pid
        deadline = time.monotonic() + 90
        while not answers(self.url):
            if self.process.poll() is not None:
                raise SystemExit(f"the node exited with {self.process.returncode}:\n{self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit("the node did not answer within 90 s")
            time.sleep(0.3)
        log(f"node up: pid {self.pid} on {self.url} ({' '.join(self.argv)})")

    def command(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv)

    def alive(self) -> bool:
        """Its process runs and it answers /v0/status."""
        return self.process.poll() is None and answers(self.url, timeout=5)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def cpu_row(label: str, rec: dict, base: dict | None) -> dict:
    """A measured phase's rate, p99 and server CPU per request, and that CPU as a multiple of the
    base row's (the no-op route's)."""
    r = rec["result"]
    cpu = rec["cpu"]
    (proc,) = cpu["processes"].values()
    ratio = proc["us_per_request"] / base["server_us"] if base and base["server_us"] else math.nan
    return {
        "label": label,
        "requested": r.get("requested_rate"),
        "achieved": r["achieved_rate"],
        "p50": worst(r, "p50"),
        "p99": worst(r, "p99"),
        "server_cores": proc["cores"],
        "server_us": proc["us_per_request"],
        "ratio": ratio,
        "ratio_text": "1 (baseline)" if base is None else (f"{ratio:.2f}x" if not math.isnan(ratio) else "–"),
        "loadgen_cores": cpu["loadgen"]["cores"],
        "others_cores": cpu["others_cpu_s"] / cpu["wall_s"] if cpu["wall_s"] else math.nan,
        "error_rate": r.get("error_rate", 0.0),
    }


def settle(pid: int, threshold: float = 0.05, window_s: float = 3.0, max_s: float = 180.0) -> dict:
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
