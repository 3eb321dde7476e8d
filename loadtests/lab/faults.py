"""Faults a phase can carry: the outage phase freezes one node (SIGSTOP) for the middle third of its
load and lets it go on (SIGCONT), as a node that stalls (a long GC pause, a VM paused, a network
cut) and comes back. Its peers' calls to it time out meanwhile, so they keep hints of the writes it
misses; the report shows them replayed once it answers again."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field

from .load import log


@dataclass
class Freeze:
    """SIGSTOP to the node's process at t0 + after_s, SIGCONT for_s later; stop() lets it go on
    whatever happened (an interrupted run never leaves a node frozen). t0, given to start(), is a
    time.monotonic() value: when the phase's load starts."""

    node: str
    pid: int
    after_s: float
    for_s: float
    t0: float = 0.0
    frozen_at_s: float | None = None
    resumed_at_s: float | None = None
    error: str = ""
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self, t0: float) -> Freeze:
        self.t0 = t0
        self._thread = threading.Thread(target=self._run, name=f"freeze-{self.node}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        if self._done.wait(max(0.0, self.t0 + self.after_s - time.monotonic())):
            return
        with self._lock:
            if self._done.is_set():
                return
            try:
                os.kill(self.pid, signal.SIGSTOP)
            except OSError as e:
                self.error = f"could not stop pid {self.pid}: {e}"
                log(f"outage: {self.error}")
                return
            self.frozen_at_s = time.monotonic() - self.t0
        log(f"outage: node {self.node} (pid {self.pid}) frozen for {self.for_s:.1f} s")
        self._done.wait(self.for_s)
        self._resume()

    def _resume(self) -> None:
        with self._lock:
            self._done.set()
            if self.frozen_at_s is None or self.resumed_at_s is not None:
                return
            try:
                os.kill(self.pid, signal.SIGCONT)
            except OSError as e:
                self.error = f"could not continue pid {self.pid}: {e}"
            self.resumed_at_s = time.monotonic() - self.t0
        log(f"outage: node {self.node} (pid {self.pid}) goes on")

    def stop(self) -> None:
        self._resume()
        if self._thread:
            self._thread.join(timeout=5)

    def record(self) -> dict:
        keys = ("node", "pid", "after_s", "for_s", "frozen_at_s", "resumed_at_s", "error")
        return {"kind": "freeze", **{k: getattr(self, k) for k in keys}}
