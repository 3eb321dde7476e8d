"""The ledger's record in a phase of run.json (the report and the verdict read it):

    acknowledged_writes, acknowledged_deletes   PUTs answered 201, DELETEs answered 202
    checked, why_not_checked                    whether every key was read back at every replica
    keys_checked, lost, lost_examples           keys read back; last acknowledged writes missing
    reads_checked, stale_reads, stale_examples  the history check; stale_reads None where the
                                                run's ack/from does not promise the last write
plus what the ledger sent (rate, keys, replicas, operations by kind and outcome) and its file."""

from __future__ import annotations

from collections import Counter

from .check import KeyResult, describe, possible, read_held, stale_reads
from .history import DELETE, KINDS, OK, OUTCOMES, PUT, Op, by_key
from .replicas import ack_from

MAX_EXAMPLES = 20


def promises_last_write(replicas: str, nodes: int) -> bool:
    """Whether reads must see the last acknowledged write: ack on reads and writes overlap (ack + ack > from)."""
    ack, count = ack_from(replicas, nodes)
    return 2 * ack > count


def lost_example(r: KeyResult, ops: list[Op]) -> dict:
    writes, _ = possible(ops)
    return {
        "key": r.key,
        "op": r.op.kind,
        "acknowledged": r.op.describe(),
        "expected": describe(writes, False),
        "found": r.found,
    }


def history(ops: list[Op]) -> tuple[int, list[dict]]:
    """The reads checked and each stale one as an example (all of them, in time order)."""
    checked, stale = 0, []
    for key, key_ops in by_key(ops).items():
        n, bad = stale_reads(key_ops)
        checked += n
        stale += [
            {"key": key, "read": r.describe(), "expected": describe(*possible(key_ops, r.invoked, r.completed)),
             "found": read_held(r).describe(), "at_s": r.invoked}
            for r, _ in bad
        ]
    return checked, sorted(stale, key=lambda s: s["at_s"])


def build(ops: list[Op], results: list[KeyResult] | None, promise: bool | None, why_not: str | None, about: dict) -> dict:
    """The record. results None: no read-back (why_not says why); promise None: the run's ack/from
    is not known, or does not promise to read the last write: no history check."""
    counts = Counter((o.kind, o.outcome) for o in ops)
    results = results or []
    lost = [r for r in results if r.status == "lost"]
    unreadable = [r for r in results if r.status == "unreadable"]
    if why_not is None and unreadable:
        why_not = (
            f"{len(unreadable)} of {len(results)} keys could not be read at every replica "
            f"(key {unreadable[0].key}: {unreadable[0].found})"
        )
    keyed = by_key(ops)
    # Without operations there is no history to check, whatever the replicas promise.
    promise = promise and bool(ops)
    reads_checked, stale = history(ops) if promise else (0, [])
    return {
        "acknowledged_writes": counts[(PUT, OK)],
        "acknowledged_deletes": counts[(DELETE, OK)],
        "checked": why_not is None,
        "why_not_checked": why_not,
        "keys_checked": len(results) - len(unreadable),
        "lost": len(lost),
        "lost_examples": [lost_example(r, keyed[r.key]) for r in lost[:MAX_EXAMPLES]],
        "reads_checked": reads_checked,
        "stale_reads": len(stale) if promise else None,
        "stale_examples": stale[:MAX_EXAMPLES],
        "operations": {k: {o: counts[(k, o)] for o in OUTCOMES} for k in KINDS},
        **about,
    }
