"""The ledger's workload on this machine: a few threads beside the phase's load that write, overwrite,
delete and read keys of the ledger's own at a modest, bounded rate, each operation recorded
(lab.ledger.history). Every key belongs to one thread, so the operations on a key never overlap
(an uncertain one aside, which may still land later); each goes to a node picked at random, so
the coordinators differ from one write of a key to the next. Python's http.client, keep-alive
connections per thread and node."""

from __future__ import annotations

import http.client
import itertools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import quote, urlparse

from .history import DELETE, GET, PUT, UNCERTAIN, Op, key_name, read_outcome, seq_in, value_of, write_outcome

# Operations in this proportion: enough reads for the history check, enough deletes to test them.
MIX = ((PUT, 0.5), (GET, 0.3), (DELETE, 0.2))
WORKERS = 8


@dataclass(frozen=True)
class Plan:
    """What the ledger sends: `keys` keys of its own (tag sets them apart), `rate` operations a second
    over all its threads, each with the run's `replicas` (ack/from, "" the servers' default) and
    given up after timeout_s; duration_s is the phase's, for a workload that must know its end."""

    tag: str
    keys: int
    rate: float
    replicas: str
    timeout_s: float
    duration_s: float
    workers: int = WORKERS

    def key(self, index: int) -> str:
        return key_name(self.tag, index)

    def path(self, key: str) -> str:
        return f"/v0/entity?id={quote(key, safe='')}" + (f"&replicas={self.replicas}" if self.replicas else "")

    def threads(self) -> int:
        return max(1, min(self.workers, self.keys))


class Client:
    """One thread's keep-alive connections, one per node."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.conns: dict[str, http.client.HTTPConnection] = {}

    def send(self, target: str, method: str, path: str, body: bytes | None) -> tuple[int | None, bytes, bool, str]:
        """(status or None, body, whether the request was sent, the error). A connection that the
        node closed while idle is tried once more on a new one (PUT, DELETE and GET are
        idempotent); the request then counts as sent whatever the second try does."""
        sent = False
        for attempt in (1, 2):
            conn = self.conns.get(target)
            reused = conn is not None
            if conn is None:
                u = urlparse(target)
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=self.timeout_s)
                try:
                    conn.connect()
                except OSError as e:
                    conn.close()
                    return None, b"", sent, _error(e)
                self.conns[target] = conn
            sent = True
            try:
                conn.request(method, path, body=body)
                r = conn.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                self.close(target)
                stale = isinstance(e, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError))
                if reused and stale and attempt == 1:
                    continue
                return None, b"", sent, _error(e)
            if r.will_close:
                self.close(target)
            return r.status, data, True, ""
        raise AssertionError("unreachable")

    def close(self, target: str | None = None) -> None:
        for t in [target] if target else list(self.conns):
            conn = self.conns.pop(t, None)
            if conn:
                conn.close()


def _error(e: BaseException) -> str:
    return "timeout" if isinstance(e, TimeoutError) else type(e).__name__


class Workload:
    """start(t0) runs the threads from t0 (a time.monotonic() value) until stop(), which returns the
    operations, their times counted from t0. An operation is recorded when it is sent: one still
    unanswered when the threads are given up on is uncertain."""

    def __init__(self, plan: Plan, targets: list[str], clock: Callable[[], float] = time.monotonic):
        if not targets:
            raise ValueError("the ledger needs a node to send to")
        self.plan = plan
        self.targets = targets
        self.clock = clock
        self.ops: list[Op] = []
        self._pending: dict[int, Op] = {}
        self._t0 = 0.0
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, t0: float) -> Workload:
        self._t0 = t0
        n = self.plan.threads()
        for w in range(n):
            t = threading.Thread(target=self._run, args=(w, n, t0), name=f"ledger-{w}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> list[Op]:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=self.plan.timeout_s * 2 + 5)
        given_up = self.clock() - self._t0
        with self._lock:
            return self.ops + [replace(o, completed=given_up) for o in self._pending.values()]

    def abandon(self) -> None:
        self.stop()

    def _run(self, w: int, n: int, t0: float) -> None:
        plan = self.plan
        rng = random.Random(f"{plan.tag}-{w}")
        keys = [plan.key(i) for i in range(w, plan.keys, n)]
        kinds, weights = zip(*MIX)
        interval = n / plan.rate
        due = t0 + interval * w / n
        client = Client(plan.timeout_s)
        try:
            while not self._stop.wait(max(0.0, due - self.clock())):
                # Paced, never in bursts: a thread that fell behind (a request that timed out) goes on from now.
                due = max(due + interval, self.clock())
                self.one(client, rng.choice(self.targets), rng.choice(keys), rng.choices(kinds, weights)[0], t0)
        finally:
            client.close()

    def one(self, client: Client, target: str, key: str, kind: str, t0: float) -> Op:
        """One operation on key through target, recorded."""
        invoked = self.clock() - t0
        with self._lock:
            seq = next(self._seq)
            self._pending[seq] = Op(seq, key, kind, invoked, invoked, UNCERTAIN, "no answer when the ledger stopped")
        body = value_of(self.plan.tag, key, seq) if kind == PUT else None
        method = {PUT: "PUT", DELETE: "DELETE", GET: "GET"}[kind]
        status, data, sent, error = client.send(target, method, self.plan.path(key), body)
        completed = self.clock() - t0
        said = str(status) if status is not None else error
        if kind == GET:
            saw = seq_in(self.plan.tag, key, data) if status == 200 else None
            op = Op(seq, key, kind, invoked, completed, read_outcome(status), said, saw)
        else:
            op = Op(seq, key, kind, invoked, completed, write_outcome(status, sent), said)
        with self._lock:
            del self._pending[seq]
            self.ops.append(op)
        return op
