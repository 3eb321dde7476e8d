"""async-profiler on every node during a phase, through loadtests/profiler/profile.sh (the same
script the Kubernetes sidecar runs). Events take turns in windows inside the phase, so profiling
never makes a phase longer: a phase of D seconds skips its first seconds (warm-up), then gives
each event an equal window, all nodes at once."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import tools
from .load import log

EVENTS = ("cpu", "alloc", "lock", "wall")
# Sampling finer than async-profiler's defaults (cpu every 10 ms of CPU, alloc every 512 KiB, lock
# waits over 10 µs): a node at a few hundred requests/s uses a tenth of a core, and a window of a
# few seconds at the defaults held tens of samples, too few for a frame's share to mean anything.
SAMPLING = {"cpu": "interval=1ms", "alloc": "alloc=64k", "lock": "lock=1us", "wall": "interval=5ms"}


@dataclass
class Node:
    name: str  # for file names: n0, n1, ...
    pid: int
    target: str


@dataclass
class Window:
    event: str
    offset_s: float
    seconds: float


def plan(events: list[str], duration_s: float, gap_s: float = 0.0) -> list[Window]:
    """Windows of at least 1 s inside [lead, duration - 1], gap_s apart (the time a profiler
    outside the machine needs to copy one flame graph out before the next window); events that do
    not fit are left out."""
    if not events:
        return []
    lead = min(3.0, duration_s * 0.1)
    usable = duration_s - lead - 1.0
    fit = min(len(events), int((usable + gap_s) // (1.0 + gap_s)))
    if fit <= 0:
        return []
    seconds = (usable - gap_s * (fit - 1)) / fit
    return [Window(e, lead + i * (seconds + gap_s), seconds) for i, e in enumerate(events[:fit])]


@dataclass
class Profiling:
    """Runs the windows of a phase in a background thread; records every flame graph or failure.
    Window offsets count from t0 (a time.monotonic() value; default: when start() is called).
    This class profiles local JVMs by PID with profile.sh; lab.k8s.executor.PodProfiling profiles pods
    through their sidecar (the command and where the file lands are the only differences)."""

    nodes: list[Node]
    windows: list[Window]
    out: Path
    t0: float | None = None
    records: list[dict] = field(default_factory=list)
    current: str = ""
    _thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _running: list = field(default_factory=list)

    def start(self) -> Profiling:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def status(self) -> str:
        return f"profiling {self.current}" if self.current else "not profiling"

    def join(self, timeout: float) -> None:
        if self._thread:
            self._thread.join(timeout)
            self._stop.set()

    def stop(self) -> None:
        """Ends the profiling now: no more windows, and SIGTERM to the running profile.sh
        processes, which then stop async-profiler in the JVMs (their EXIT trap)."""
        self._stop.set()
        for p in list(self._running):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        if self._thread:
            self._thread.join(30)

    def _run(self) -> None:
        try:
            self._windows()
        except Exception as e:  # a profiling failure is reported, it does not stop the load
            log(f"profiling stopped: {e!r}")
            self.records.append(
                {
                    "node": "-",
                    "pid": 0,
                    "target": "",
                    "event": self.current or "-",
                    "seconds": 0,
                    "offset_s": 0,
                    "file": None,
                    "ok": False,
                    "error": repr(e),
                    "command": "",
                }
            )
            self.current = ""

    def command(self, node: Node, event: str, seconds: float, path: Path) -> tuple[list[str], dict[str, str]]:
        """The command that writes the flame graph of one node to path, and its environment; the
        event's sampling options are in the command, so the report lists it as it ran."""
        env = os.environ | {"ASYNC_PROFILER_LIB": str(tools.profiler_lib()), "JATTACH": tools.jattach()}
        options = ["env", f"PROFILER_OPTS={SAMPLING[event]}"] if event in SAMPLING else []
        return [*options, str(tools.PROFILE_SH), str(node.pid), event, f"{seconds:.1f}", str(path)], env

    def collected(self, node: Node, path: Path, returncode: int) -> bool:
        """Whether the command left the flame graph at path."""
        return returncode == 0 and path.exists()

    def _windows(self) -> None:
        t0 = time.monotonic() if self.t0 is None else self.t0
        for w in self.windows:
            wait = t0 + w.offset_s - time.monotonic()
            if self._stop.is_set() or (wait > 0 and self._stop.wait(wait)):
                return
            self.current = w.event
            procs = []
            for node in self.nodes:
                path = self.out / f"{node.name}-{w.event}.html"
                argv, env = self.command(node, w.event, w.seconds, path)
                logf = open(self.out / f"{node.name}-{w.event}.log", "w")
                proc = tools.spawn(argv, logf, env=env)
                self._running.append(proc)
                procs.append((node, path, argv, proc, logf))
            for node, path, argv, p, logf in procs:
                try:
                    rc = p.wait(timeout=w.seconds + 60)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 15)
                    rc = p.wait()
                logf.close()
                ok = self.collected(node, path, rc)
                error = "" if ok else Path(logf.name).read_text(errors="replace").strip()[-500:]
                if not ok:
                    log(f"profiling {node.name}{f' ({node.pid})' if node.pid else ''} {w.event} failed: {error}")
                self.records.append(
                    {
                        "node": node.name,
                        "pid": node.pid,
                        "target": node.target,
                        "event": w.event,
                        "seconds": round(w.seconds, 1),
                        "offset_s": round(w.offset_s, 1),
                        "file": path.name if ok else None,
                        "ok": ok,
                        "error": error,
                        "command": " ".join(shlex.quote(tools.rel(a) if os.path.isabs(a) else a) for a in argv),
                    }
                )
            self.current = ""
