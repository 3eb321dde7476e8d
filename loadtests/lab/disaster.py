"""The disaster scenario's figures (make lab SCENARIO=disaster), pure functions of what the run
recorded: the ledger's operations (lab.ledger.history) split at the backup's cut, what the restored
cluster answered for each of the ledger's keys, and the load's time series around the backup.

The cut: the moment the lab sent the backup request, on the ledger's clock (seconds from the start
of the phase's load). The node that coordinates the backup takes its cut after it got the request,
so every write acknowledged before the lab sent it was acknowledged before the backup's cut, and
the backup's guarantee holds it: it must be in the restored cluster. Such a key may come back at
that write or at any state the key went through later (a write after the cut may or may not be in
the backup), never older: lab.ledger.check.possible with a read that began at the cut says which.
A key whose only acknowledged writes came after the cut is counted, not held to anything: it comes
back at its last write (present) or at an earlier state (lost by design)."""

from __future__ import annotations

import statistics

from .ledger.check import ABSENT, UNREADABLE, VALUE, Held, allows, last_acknowledged, possible
from .ledger.history import OK, Op, by_key

MAX_EXAMPLES = 20


def acknowledged_before(ops: list[Op], cut_s: float) -> list[Op]:
    """The writes and deletes acknowledged (their answer received) before the cut."""
    return [o for o in ops if o.is_write() and o.outcome == OK and o.completed < cut_s]


def judge(ops: list[Op], cut_s: float, restored: dict[str, Held]) -> dict:
    """The check of every key the ledger acknowledged a write of against what the restored cluster
    holds of it (restored: key -> Held; a key missing there counts as unreadable).

        before_keys, before_writes   keys with a write acknowledged before the cut, and those writes
        missing, missing_examples    of those keys, the ones restored older than the backup holds
        unreadable                   keys the check could not read (their status not proven)
        after_keys, after_writes     keys whose last acknowledged write came after the cut, and the
                                     writes acknowledged after it (on any key)
        after_present, after_lost    of after_keys: restored at their last write (or one as new), or
                                     at an earlier state: lost by design
    """
    before = acknowledged_before(ops, cut_s)
    out = {
        "cut_s": round(cut_s, 3),
        "before_keys": 0,
        "before_writes": len(before),
        "missing": 0,
        "missing_examples": [],
        "unreadable": 0,
        "unreadable_examples": [],
        "after_keys": 0,
        "after_writes": sum(1 for o in ops if o.is_write() and o.outcome == OK and o.completed >= cut_s),
        "after_present": 0,
        "after_lost": 0,
    }
    for key, key_ops in by_key(ops).items():
        last = last_acknowledged(key_ops)
        if last is None:
            continue
        held = restored.get(key, Held(UNREADABLE, detail="not read"))
        acked_before = [o for o in key_ops if o.is_write() and o.outcome == OK and o.completed < cut_s]
        if acked_before:
            out["before_keys"] += 1
        else:
            out["after_keys"] += 1
        if held.state == UNREADABLE:
            out["unreadable"] += 1
            if len(out["unreadable_examples"]) < MAX_EXAMPLES:
                out["unreadable_examples"].append({"key": key, "found": held.describe()})
            continue
        if acked_before:
            writes, _ = possible(key_ops, began=cut_s)
            if not allows(writes, False, held):
                out["missing"] += 1
                if len(out["missing_examples"]) < MAX_EXAMPLES:
                    newest = max(acked_before, key=lambda o: (o.invoked, o.seq))
                    out["missing_examples"].append(
                        {"key": key, "acknowledged_before_backup": newest.describe(), "found": held.describe()}
                    )
        else:
            writes, _ = possible(key_ops)
            if allows(writes, False, held):
                out["after_present"] += 1
            else:
                out["after_lost"] += 1
    return out


def held_of(status: int | None, seq: int | None) -> Held:
    """What a client GET of a ledger key answered, as a Held: 200 with the ledger write seq it
    returned, 404 for nothing (absent or deleted: a tombstone reads as nothing), else unreadable."""
    if status == 200:
        return Held(VALUE, seq)
    if status == 404:
        return Held(ABSENT)
    return Held(UNREADABLE, detail=f"HTTP {status}" if status else "no answer")


def read_count(replicas: str, nodes: int) -> int:
    """How many replicas the check reads a key from: `from` of the run's ack/from ("2/3": 3), the
    cluster's size when none is given."""
    if replicas and "/" in replicas:
        return int(replicas.split("/")[1])
    return nodes


def windows(series: dict, began_s: float, ended_s: float | None) -> dict:
    """The load before the backup (from the start of the phase to began_s), during it (began_s to
    ended_s) and after it (ended_s to the end), from the phase's time series: per window its
    seconds, the requests served a second (those that did not fail), the median and the worst of
    the per-second p99, and the errors. A second the load ran for part of is left out; a second
    the backup began or ended in counts as during it."""
    load = series.get("load") or {}
    step = float(series.get("interval_s") or 1.0)
    rows = sorted((r for r in load.get("seconds") or [] if not r.get("partial")), key=lambda r: r["t"])
    end = ended_s if ended_s is not None else float("inf")
    parts = {
        "before": [r for r in rows if r["t"] + step <= began_s],
        "during": [r for r in rows if r["t"] < end and r["t"] + step > began_s],
        "after": [r for r in rows if r["t"] >= end],
    }
    return {name: window_figures(rs, step) for name, rs in parts.items()}


def window_figures(rows: list[dict], step: float) -> dict:
    p99s = [r["p99_ms"] for r in rows if r.get("p99_ms") is not None]
    served = [(r.get("requests") or 0) - (r.get("errors") or 0) for r in rows if r.get("requests") is not None]
    return {
        "seconds": round(len(rows) * step, 3),
        "rate": round(sum(served) / (len(served) * step), 1) if served else None,
        "p99_ms": round(statistics.median(p99s), 3) if p99s else None,
        "p99_worst_ms": round(max(p99s), 3) if p99s else None,
        "errors": sum(r.get("errors") or 0 for r in rows),
    }


def p99_cost(w: dict) -> float | None:
    """How much higher the median per-second p99 was during the backup than before it, as a share
    (0.2: 20 % higher); None when either window has no latency."""
    before, during = (w.get("before") or {}).get("p99_ms"), (w.get("during") or {}).get("p99_ms")
    if not before or during is None:
        return None
    return round(during / before - 1, 4)


def rate_cost(w: dict) -> float | None:
    """How much lower the rate served during the backup was than before it, as a share."""
    before, during = (w.get("before") or {}).get("rate"), (w.get("during") or {}).get("rate")
    if not before or during is None:
        return None
    return round(1 - during / before, 4)
