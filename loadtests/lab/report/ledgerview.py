"""The ledger's records (lab.ledger.record) as the report shows them: per phase that broke something,
its row of the "nothing lost" table, its losses and stale reads as examples, and a sentence for the
findings."""

from __future__ import annotations

from . import fmt


def _first(examples: list[dict]) -> str:
    e = examples[0]
    return f"key {e['key']}: expected {e['expected']}, found {e['found']}"


def sentence(label: str, rec: dict) -> str:
    """What the ledger of one phase found, in one sentence, every number from its record."""
    acked = rec["acknowledged_writes"] + rec["acknowledged_deletes"]
    ops = sum(sum(v.values()) for v in rec["operations"].values())
    text = (
        f"{label}: the ledger sent {fmt.rate(ops)} operations ({fmt.rate(rec['rate'])}/s on {fmt.rate(rec['keys'])} "
        f"keys of its own, replicas {rec.get('replicas') or 'default'}), {fmt.rate(acked)} writes and deletes acknowledged"
    )
    if rec["checked"] or rec["keys_checked"]:
        text += (
            f"; read back at their replicas after the cluster healed, {fmt.rate(rec['lost'])} of them "
            f"{'were' if rec['lost'] != 1 else 'was'} lost"
        )
        if rec["lost"]:
            text += f" ({_first(rec['lost_examples'])})"
    if not rec["checked"]:
        text += f"; not proven: {rec['why_not_checked'].rstrip('.')}"
    if rec["stale_reads"] is not None:
        text += f"; {fmt.rate(rec['stale_reads'])} of {fmt.rate(rec['reads_checked'])} reads stale"
        if rec["stale_reads"]:
            text += f" ({_first(rec['stale_examples'])})"
    elif ops:
        text += f"; its reads were not checked for staleness: replicas {rec.get('replicas')} do not promise the last write"
    return text + "."


def views(run: dict) -> list[dict]:
    """One view per phase with a ledger record, in the run's order."""
    out = []
    for phase in run["phases"]:
        rec = phase.get("ledger")
        if not rec:
            continue
        ops = rec["operations"]
        out.append(
            {
                "label": phase["label"],
                "rec": rec,
                "outcomes": {o: sum(v[o] for v in ops.values()) for o in ("ok", "failed", "uncertain")},
                "acknowledged": rec["acknowledged_writes"] + rec["acknowledged_deletes"],
                "file": f"{phase['dir']}/{rec['file']}" if rec.get("file") else None,
                "sentence": sentence(phase["label"], rec),
            }
        )
    return out


def findings(run: dict) -> list[str]:
    return [v["sentence"] for v in views(run)]


def problems(run: dict, md: str) -> list[str]:
    """For `lab check`: every phase that broke something has its ledger, which read every key back,
    lost nothing and saw no stale read, and the report's row of it."""
    found = []
    for phase in run["phases"]:
        label, rec = phase["label"], phase.get("ledger")
        if not (phase.get("fault") or phase.get("faults")):
            continue
        if not rec:
            found.append(f"phase {label} broke something but has no ledger record")
            continue
        if not rec["checked"]:
            found.append(f"phase {label}: the ledger proved nothing: {rec['why_not_checked']}")
        if rec["lost"]:
            found.append(f"phase {label}: the ledger lost {rec['lost']} acknowledged writes or deletes")
        if rec["stale_reads"]:
            found.append(f"phase {label}: the ledger saw {rec['stale_reads']} stale reads")
        if f"\n| {fmt.md_text(label)} | " not in md.partition("## Nothing lost")[2]:
            found.append(f"report.md has no row of phase {label}'s ledger")
    return found
