"""The rows of a phase's ledger: every write and delete the cluster acknowledged during a phase that
broke something, read back at the end at their replicas ("ledger" in the phase's record:
acknowledged_writes, acknowledged_deletes, checked, why_not_checked, keys_checked, lost,
lost_examples, reads_checked, stale_reads)."""

from __future__ import annotations

from .. import fmt
from .rows import row

EXAMPLES = 3  # lost writes named in the row; the phase's record keeps up to 20


def _example(e: dict) -> str:
    return f"{e.get('op', '?')} {e.get('key', '?')}: expected {e.get('expected', '?')}, found {e.get('found', '?')}"


def rows(phase: dict) -> list[dict]:
    """"acknowledged writes lost" (target 0, gates data), and "stale reads" where the run's ack/from
    promises to read the last write. A phase that broke something without a ledger says it was not
    checked; a ledger that ran and could not read every key back fails; any other phase without one
    has no rows."""
    led = phase.get("ledger")
    label = phase["label"]
    check = f"{label}: acknowledged writes lost"
    if not led:
        if phase.get("fault") or phase.get("faults"):
            return [row(check, "not checked: the run kept no record of its acknowledged writes", "0", None, "none")]
        return []
    if not led.get("checked"):
        why = led.get("why_not_checked") or "the read-back did not run"
        observed = f"not checked ({fmt.rate(acknowledged(led))} acknowledged): {why}"
        if led.get("rate") == 0 or led.get("keys") == 0:
            return [row(check, observed, "0", None, "none")]  # the user turned the ledger off
        # The ledger ran but could not prove anything (a replica it could not read, a read-back
        # that failed): nothing says the writes are there.
        return [row(check, observed, "0, proven", False, "data")]
    lost = led.get("lost") or 0
    observed = (
        f"{fmt.rate(lost)} of {fmt.rate(acknowledged(led))} ({fmt.rate(led.get('acknowledged_writes'))} writes, "
        f"{fmt.rate(led.get('acknowledged_deletes'))} deletes; {fmt.rate(led.get('keys_checked'))} keys read back)"
    )
    examples = led.get("lost_examples") or []
    if lost and examples:
        observed += "; " + "; ".join(_example(e) for e in examples[:EXAMPLES])
    out = [row(check, observed, "0", lost == 0, "data")]
    if led.get("stale_reads") is not None:
        stale = led["stale_reads"]
        out.append(
            row(
                f"{label}: stale reads",
                f"{fmt.rate(stale)} of {fmt.rate(led.get('reads_checked'))} reads checked",
                "0",
                stale == 0,
                "data",
            )
        )
    return out


def summary(phase: dict) -> str:
    """The ledger in a clause: "0 of 41 000 acknowledged writes lost", or that they were not checked."""
    led = phase.get("ledger")
    if not led:
        return "acknowledged writes were not checked"
    if not led.get("checked"):
        return f"acknowledged writes were not checked ({led.get('why_not_checked') or 'the read-back did not run'})"
    return f"{fmt.rate(led.get('lost') or 0)} of {fmt.rate(acknowledged(led))} acknowledged writes lost"


def acknowledged(led: dict) -> int:
    """Writes and deletes the cluster acknowledged."""
    return (led.get("acknowledged_writes") or 0) + (led.get("acknowledged_deletes") or 0)
