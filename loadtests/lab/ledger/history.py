"""The ledger's history: every operation it sent, when it was sent and answered, and what came of it.

A write's value is unique and names its operation (`ledger <tag> <key> <seq>`), so a read, or a
replica's record, shows which write it holds. An operation's outcome is one of:
  - ok: acknowledged (PUT 201, DELETE 202, GET 200 or 404);
  - failed: certainly not applied (a 4xx answer, or no connection made: nothing was sent);
  - uncertain: may or may not have been applied (a timeout, a 5xx such as 504 "fewer than ack
    replicas answered" or 503 "a replica was overloaded", a connection lost after the send), so it
    is never counted lost when missing, nor stale when present. One without an answer may even land
    later than writes acknowledged after it (a paused node processes what queued up when it
    resumes); lab.ledger.check says which states that leaves possible.
Times are seconds from the start of the phase's load, on one clock per history."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

PUT, DELETE, GET = "put", "delete", "get"
KINDS = (PUT, DELETE, GET)
OK, FAILED, UNCERTAIN = "ok", "failed", "uncertain"
OUTCOMES = (OK, FAILED, UNCERTAIN)
# What a read saw when the value was none of the ledger's writes of that key.
FOREIGN = -1


@dataclass(frozen=True)
class Op:
    """One operation. saw, for an acknowledged GET: the seq of the write whose value it returned,
    None for 404 (absent or deleted), FOREIGN for a value the ledger did not write."""

    seq: int
    key: str
    kind: str
    invoked: float
    completed: float
    outcome: str
    status: str = ""  # the HTTP status, or the error that ended it
    saw: int | None = None

    def is_write(self) -> bool:
        return self.kind in (PUT, DELETE)

    def describe(self) -> str:
        """For a report: "put #41 at 12.30 s (201)"."""
        return f"{self.kind} #{self.seq} at {self.invoked:.2f} s ({self.status or self.outcome})"


def key_name(tag: str, index: int) -> str:
    """The ledger's keys: apart from the load's (k + 10 digits) and from another phase's ledger."""
    return f"ledger-{tag}-{index:05d}"


def value_of(tag: str, key: str, seq: int) -> bytes:
    return f"ledger {tag} {key} {seq}".encode()


_VALUE = re.compile(rb"^ledger (\S+) (\S+) (\d+)$")


def seq_in(tag: str, key: str, value: bytes) -> int:
    """The seq of the write whose value this is, or FOREIGN when it is no ledger write of this key."""
    m = _VALUE.match(value)
    if not m or m[1].decode() != tag or m[2].decode() != key:
        return FOREIGN
    return int(m[3])


def write_outcome(status: int | None, sent: bool) -> str:
    """A PUT's or DELETE's outcome from its HTTP status (None: no answer) and whether it was sent."""
    if status in (201, 202):
        return OK
    if not sent or (status is not None and 400 <= status < 500):
        return FAILED
    return UNCERTAIN


def read_outcome(status: int | None) -> str:
    """A GET's: only an answer of 200 or 404 tells what the cluster holds."""
    return OK if status in (200, 404) else FAILED


def dump(ops: list[Op]) -> str:
    """One JSON object per line, the operations in seq order (the phase's ledger.jsonl)."""
    return "".join(json.dumps(asdict(o), separators=(",", ":")) + "\n" for o in sorted(ops, key=lambda o: o.seq))


def load(text: str) -> list[Op]:
    return [Op(**json.loads(line)) for line in text.splitlines() if line.strip()]


def by_key(ops: list[Op]) -> dict[str, list[Op]]:
    out: dict[str, list[Op]] = {}
    for o in sorted(ops, key=lambda o: (o.invoked, o.seq)):
        out.setdefault(o.key, []).append(o)
    return out
