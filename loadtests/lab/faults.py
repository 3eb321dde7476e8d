"""Faults a phase can carry, each on a schedule counted from the start of the phase's load: a fault
begins at_s into the load and ends for_s later. ScheduledFault keeps the timing, the thread and the
record; a kind of fault says only how it begins and how it ends. An executor makes the kinds it can;
on local processes:
  - Pause stops the node's process (SIGSTOP) and lets it go on (SIGCONT), as a node that stalls in
    a long GC pause or a paused VM and comes back;
  - Kill kills its JVM (SIGKILL, as a crash or the OOM killer) and starts it again on its data with
    its own command line, environment and working directory; the node comes back with a new pid;
  - CutOff isolates it from its peers and its clients (lab.isolation) and reconnects it.

Its peers' calls to a faulty node fail or time out meanwhile, so they keep hints of the writes it
misses; the report shows them replayed once it answers again.

A schedule is written kind@at+for in seconds, comma-separated, optionally kind:node@at+for
(kill:n1@20+15); parse_schedule reads it, place() puts it on the run's nodes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from . import defaults, isolation, procstat, tools
from .load import log

KINDS = ("kill", "pause", "cutoff")
DEFAULT_SCHEDULE = defaults.text("FAULTS")
# A phase too short for its schedule goes on this long after the last fault, for the cluster to recover.
RECOVERY_S = 30
# What a duration must leave after the last fault not to be lengthened.
MIN_RECOVERY_S = 10


@dataclass
class ScheduledFault:
    """begin() at t0 + at_s, end() for_s later; stop() ends it whatever happened (an interrupted run
    never leaves a node faulty). t0, given to start(), is a time.monotonic() value: when the phase's
    load starts. A subclass sets kind and implements begin() and end(), which raise OSError (or
    RuntimeError) with what went wrong."""

    node: str
    at_s: float
    for_s: float
    kind: str = ""
    t0: float = 0.0
    began_at_s: float | None = None
    ended_at_s: float | None = None
    error: str = ""
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def begin(self) -> None:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        """What the fault does, for the log and the report: "node n2 frozen (SIGSTOP)"."""
        return f"{self.kind} of node {self.node}"

    def start(self, t0: float) -> ScheduledFault:
        self.t0 = t0
        self._thread = threading.Thread(target=self._run, name=f"{self.kind}-{self.node}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        if self._done.wait(max(0.0, self.t0 + self.at_s - time.monotonic())):
            return
        with self._lock:
            if self._done.is_set():
                return
            try:
                self.begin()
            except (OSError, RuntimeError) as e:
                self.error = f"could not begin: {e}"
                log(f"fault: {self.describe()}: {self.error}")
                return
            self.began_at_s = time.monotonic() - self.t0
        log(f"fault: {self.describe()} for {self.for_s:.1f} s")
        self._done.wait(self.for_s)
        self._end()

    def _end(self) -> None:
        with self._lock:
            self._done.set()
            if self.began_at_s is None or self.ended_at_s is not None:
                return
            try:
                self.end()
            except (OSError, RuntimeError) as e:
                self.error = f"could not end: {e}"
            self.ended_at_s = time.monotonic() - self.t0
        log(f"fault: {self.describe()} ended" + (f" ({self.error})" if self.error else ""))

    def stop(self) -> None:
        self._end()
        if self._thread:
            self._thread.join(timeout=5)

    def record(self) -> dict:
        keys = ("kind", "node", "at_s", "for_s", "began_at_s", "ended_at_s", "error")
        return {**{k: getattr(self, k) for k in keys}, "what": self.describe()}


@dataclass(frozen=True)
class Planned:
    """One fault of a schedule: kind on node (None: the last node) from at_s into the load, for for_s."""

    kind: str
    at_s: float
    for_s: float
    node: str | None = None

    def text(self) -> str:
        return f"{self.kind}{f':{self.node}' if self.node else ''}@{self.at_s:g}+{self.for_s:g}"


_FAULT = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<node>[^@]+))?@(?P<at>\d+(?:\.\d+)?)s?\+(?P<for>\d+(?:\.\d+)?)s?$")


def parse_schedule(text: str) -> list[Planned]:
    """kind@at+for,... -> the faults in time order; ValueError saying what is wrong and how to write it."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"no fault in the schedule {text!r}: write kind@at+for, e.g. {DEFAULT_SCHEDULE}")
    out = []
    for item in items:
        m = _FAULT.match(item)
        if not m:
            raise ValueError(
                f"fault {item!r}: write kind@at+for in seconds from the start of the load "
                "(pause@70+15), or kind:node@at+for (kill:n1@20+15)"
            )
        if m["kind"] not in KINDS:
            raise ValueError(f"fault {item!r}: unknown kind {m['kind']!r}: {', '.join(KINDS)}")
        node = m["node"]
        if node is not None and not re.fullmatch(r"n\d+", node):
            raise ValueError(f"fault {item!r}: a node is named n0, n1, ...")
        planned = Planned(m["kind"], float(m["at"]), float(m["for"]), node)
        if planned.for_s <= 0:
            raise ValueError(f"fault {item!r}: it lasts no time")
        out.append(planned)
    return sorted(out, key=lambda p: p.at_s)


def place(schedule: list[Planned], nodes: list[str]) -> list[tuple[Planned, int]]:
    """Each fault with the index of its node (the last one unless named); SystemExit when a node does
    not exist or two faults of one node overlap (a node has one fault at a time)."""
    placed = []
    for p in schedule:
        if p.node is None:
            index = len(nodes) - 1
        elif int(p.node[1:]) < len(nodes):
            index = int(p.node[1:])  # nN: the N-th node, whatever the executor names it (a pod's name)
        else:
            raise SystemExit(f"fault {p.text()}: no node {p.node} (the nodes are {', '.join(nodes) or 'none'})")
        placed.append((p, index))
    for i, (a, node) in enumerate(placed):
        for b, other in placed[i + 1 :]:
            if node == other and b.at_s < a.at_s + a.for_s and a.at_s < b.at_s + b.for_s:
                raise SystemExit(
                    f"faults {a.text()} and {b.text()} overlap on node {nodes[node]}: a node has one fault at a time"
                )
    return placed


def phase_seconds(schedule: list[Planned], duration_s: int) -> int:
    """How long the phase with these faults runs: duration_s when it leaves MIN_RECOVERY_S after the
    last fault, else until RECOVERY_S after it (the lab's default duration is a fixed-rate phase's)."""
    last = max(p.at_s + p.for_s for p in schedule)
    if duration_s >= last + MIN_RECOVERY_S:
        return duration_s
    return int(-(-(last + RECOVERY_S) // 1))


@dataclass
class NodeProcessFault(ScheduledFault):
    """A fault of a node's process. pid_of, when given, tells the node's pid when the fault begins
    (a node killed and started again earlier in the run has a new one)."""

    pid: int = 0
    pid_of: Callable[[], int] | None = field(default=None, repr=False)

    def _current_pid(self) -> int:
        if self.pid_of is not None:
            self.pid = self.pid_of()
        return self.pid


@dataclass
class Pause(NodeProcessFault):
    """The node's process stopped (SIGSTOP) and let go on (SIGCONT)."""

    kind: str = "pause"

    def describe(self) -> str:
        return f"node {self.node} (pid {self.pid}) paused (SIGSTOP, then SIGCONT)"

    def begin(self) -> None:
        os.kill(self._current_pid(), signal.SIGSTOP)

    def end(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


@dataclass
class Launch:
    """How a process was started (psutil): enough to start it again the same way."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    log: str | None  # where its stdout went, when a file (appended to by the new process)

    @staticmethod
    def of(pid: int) -> Launch:
        p = psutil.Process(pid)
        with p.oneshot():
            argv, env, cwd = p.cmdline(), p.environ(), p.cwd()
            out = next((f.path for f in p.open_files() if f.fd == 1), None)
        if not argv:
            raise RuntimeError(f"process {pid} has no command line (a zombie or a kernel thread)")
        return Launch(argv, env, cwd, out if out and os.path.isfile(out) else None)


def answers(target: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{target.rstrip('/')}/v0/status", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def _gone(pid: int, timeout_s: float = 10.0) -> None:
    """Waits until process pid has exited (and reaps it when it is ours)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            if not procstat.running(pid):
                return
        time.sleep(0.01)
    raise RuntimeError(f"process {pid} still runs {timeout_s:g} s after SIGKILL")


@dataclass
class Kill(NodeProcessFault):
    """The node's JVM killed (SIGKILL: no shutdown hook, RocksDB not closed) and, for_s later, started
    again as it was started (command line, environment, working directory; its stdout appended to
    the same log) on its data. The fault ends when the node answers on target again. restarted,
    when given, is told the new pid at once, so the run follows the node from then on."""

    target: str = ""
    start_timeout_s: float = 60.0
    restarted: Callable[[int], None] | None = field(default=None, repr=False)
    kind: str = "kill"
    pid_after: int | None = None
    start_s: float | None = None  # from the start again until the node answered
    _launch: Launch | None = field(default=None, repr=False)
    _process: subprocess.Popen | None = field(default=None, repr=False)

    def describe(self) -> str:
        again = f", started again as pid {self.pid_after}" if self.pid_after else ""
        return f"node {self.node} (pid {self.pid}) killed (SIGKILL){again}"

    def begin(self) -> None:
        pid = self._current_pid()
        self._launch = Launch.of(pid)
        os.kill(pid, signal.SIGKILL)
        _gone(pid)

    def end(self) -> None:
        launch = self._launch
        out = open(launch.log, "a") if launch.log else subprocess.DEVNULL
        try:
            self._process = tools.spawn(launch.argv, out, env=launch.env, cwd=launch.cwd)
        finally:
            if launch.log:
                out.close()
        self.pid_after = self._process.pid
        if self.restarted:
            self.restarted(self.pid_after)
        started = time.monotonic()
        deadline = started + self.start_timeout_s
        while not answers(self.target):
            code = self._process.poll()
            if code is not None:
                see = f"; see {launch.log}" if launch.log else ""
                raise RuntimeError(f"the node exited with {code} before it answered{see}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the node (pid {self.pid_after}) did not answer within {self.start_timeout_s:g} s")
            time.sleep(0.2)
        self.start_s = time.monotonic() - started

    def record(self) -> dict:
        return super().record() | {"pid_before": self.pid, "pid_after": self.pid_after, "start_s": self.start_s}


@dataclass
class CutOff(NodeProcessFault):
    """The node isolated from its peers and its clients, then reconnected (lab.isolation): nothing it
    sends or is sent arrives; ports are its listening ports (client, management)."""

    ports: tuple[int, ...] = ()
    kind: str = "cutoff"
    _own_cgroup: str = field(default="/", repr=False)

    def key(self) -> str:
        return str(self.ports[0])

    def describe(self) -> str:
        ports = ", ".join(map(str, self.ports))
        return f"node {self.node} (pid {self.pid}) cut off from its peers and clients (ports {ports} and its connections dropped)"

    def begin(self) -> None:
        self._own_cgroup = isolation.cut(self.key(), self._current_pid(), self.ports)

    def end(self) -> None:
        errors = isolation.release(self.key(), self.pid, self._own_cgroup)
        if errors:
            raise RuntimeError("; ".join(errors))
