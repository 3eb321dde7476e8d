"""What the ledger's history allows the cluster to hold, and whether it does: pure functions over the
operations of one key (lab.ledger.history) and what its replicas hold after the cluster healed.

Each key is a register. A write W is superseded once an acknowledged write began after W ended. An
uncertain write that got no answer (a timeout, a lost connection) never ends: a node may take it up
any time later, a paused one when it resumes, and version it after writes acknowledged meanwhile.
One answered 5xx ends with its answer: its coordinator versioned it before answering, so a write
sent after that answer is newer. A failed write never happened. So:
  - a read that began at b and ended at e may return any write invoked before e that no write
    acknowledged before b supersedes, or nothing (404) when such a write is a delete, or when no
    write was acknowledged before b (the key was never written);
  - at the end, after the last acknowledged write A, a replica may hold A or any write not
    superseded by A (one acknowledged later than it cannot be: A is the last), and a tombstone or
    nothing where such a write is a delete (tombstones are purged in time). A key is kept when every
    one of its replicas holds such a state; otherwise its last acknowledged write is lost.
Comparisons are strict: operations that touch at the clock's resolution count as concurrent, which
can only let a read or a replica pass, never fail one."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .history import DELETE, FAILED, FOREIGN, GET, OK, PUT, UNCERTAIN, Op

VALUE, TOMBSTONE, ABSENT, UNREADABLE = "value", "tombstone", "absent", "unreadable"


@dataclass(frozen=True)
class Held:
    """What one replica holds of a key: a value (seq: the ledger write it is, FOREIGN when none),
    a tombstone, nothing, or unreadable (detail: why)."""

    state: str
    seq: int | None = None
    detail: str = ""

    def describe(self) -> str:
        if self.state == VALUE:
            return "a value the ledger did not write" if self.seq == FOREIGN else f"put #{self.seq}"
        if self.state == TOMBSTONE:
            return "a tombstone"
        if self.state == ABSENT:
            return "nothing"
        return f"unreadable ({self.detail})"


@dataclass(frozen=True)
class KeyResult:
    key: str
    status: str  # kept | lost | unreadable
    op: Op  # the last acknowledged write
    found: str  # what each replica held


def _end(op: Op) -> float:
    """When a write was versioned at the latest: its answer, or never for one without an answer."""
    return math.inf if op.outcome == UNCERTAIN and not op.status.isdigit() else op.completed


def possible(ops: list[Op], began: float = math.inf, ended: float = math.inf) -> tuple[list[Op], bool]:
    """The writes a read that began and ended then may see, and whether it may see the key never
    written; by default, what the key may hold at the end."""
    writes = [o for o in ops if o.is_write() and o.outcome != FAILED]
    done = [o.invoked for o in writes if o.outcome == OK and o.completed < began]
    latest = max(done, default=-math.inf)
    return [w for w in writes if w.invoked < ended and _end(w) >= latest], not done


def allows(writes: list[Op], never_written: bool, held: Held) -> bool:
    """Whether these possible writes allow what a read or a replica showed."""
    if held.state == VALUE:
        return any(w.kind == PUT and w.seq == held.seq for w in writes)
    if held.state in (TOMBSTONE, ABSENT):
        return never_written or any(w.kind == DELETE for w in writes)
    return False


def last_acknowledged(ops: list[Op]) -> Op | None:
    acked = [o for o in ops if o.is_write() and o.outcome == OK]
    return max(acked, key=lambda o: (o.invoked, o.seq)) if acked else None


def judge_key(key: str, ops: list[Op], held: dict[str, Held]) -> KeyResult | None:
    """Whether the key's replicas (held, by node) keep its last acknowledged write; None when the
    ledger has no acknowledged write of the key to keep."""
    last = last_acknowledged(ops)
    if last is None:
        return None
    writes, _ = possible(ops)
    found = "; ".join(f"{node}: {h.describe()}" for node, h in sorted(held.items()))
    wrong = [h for h in held.values() if h.state != UNREADABLE and not allows(writes, False, h)]
    if wrong or not held:
        return KeyResult(key, "lost", last, found or "no replica")
    if any(h.state == UNREADABLE for h in held.values()):
        return KeyResult(key, "unreadable", last, found)
    return KeyResult(key, "kept", last, found)


def read_held(op: Op) -> Held:
    """What an acknowledged GET showed, as a replica's record would."""
    return Held(ABSENT) if op.saw is None else Held(VALUE, op.saw)


def stale_reads(ops: list[Op]) -> tuple[int, list[tuple[Op, list[Op]]]]:
    """The acknowledged reads of one key's history checked, and each stale one with what it could
    have returned."""
    reads = [o for o in ops if o.kind == GET and o.outcome == OK]
    stale = []
    for r in reads:
        writes, never = possible(ops, r.invoked, r.completed)
        if not allows(writes, never, read_held(r)):
            stale.append((r, writes))
    return len(reads), stale


def describe(writes: list[Op], never: bool, most: int = 6) -> str:
    """What a read or a replica could have shown, in words: "put #41 or delete #44" (the last
    `most` writes, and how many earlier ones, that an uncertain write's outcome keeps possible)."""
    options = [f"{w.kind} #{w.seq}" for w in writes[-most:]]
    if len(writes) > most:
        options.insert(0, f"{len(writes) - most} earlier writes")
    if never:
        options.append("nothing")
    return " or ".join(options) or "nothing"
