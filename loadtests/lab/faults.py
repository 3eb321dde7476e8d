"""Faults a phase can carry, each on a schedule counted from the start of the phase's load: a fault
begins at_s into the load and ends for_s later. ScheduledFault keeps the timing, the thread and the
record; a kind of fault says only how it begins and how it ends (an executor makes the kinds it can:
on local processes, Pause stops a node's process with SIGSTOP and lets it go on with SIGCONT, as a
node that stalls in a long GC pause or a paused VM and comes back).

Its peers' calls to a faulty node time out meanwhile, so they keep hints of the writes it misses;
the report shows them replayed once it answers again."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field

from .load import log


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


@dataclass
class Pause(ScheduledFault):
    """The node's process stopped (SIGSTOP) and let go on (SIGCONT)."""

    pid: int = 0
    kind: str = "pause"

    def describe(self) -> str:
        return f"node {self.node} (pid {self.pid}) paused (SIGSTOP, then SIGCONT)"

    def begin(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def end(self) -> None:
        os.kill(self.pid, signal.SIGCONT)
