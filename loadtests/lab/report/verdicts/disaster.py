"""The disaster scenario's verdict: did the backup bring back every write acknowledged before it
began (the first row, which gates data: missing must be 0), how long did the backup and the restore
take, and what did the backup cost the load (p99 during it against before it, which gates
performance at P99_COST); then what came of the writes after the backup began, and the fill's row.
Every figure comes from run.json's "disaster" and the backup phase's record (lab.scenarios.disaster)."""

from __future__ import annotations

from ... import disaster
from .. import fmt, headline
from . import fill
from .rows import Part, row

# The most p99 may grow while a backup runs: the backup's promise to cost little while the node serves.
P99_COST = 0.20


def backup_phase(run: dict) -> dict | None:
    return next((p for p in run.get("phases", []) if "backup" in p), None)


def size(n) -> str:
    if fmt.missing(n):
        return "–"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def check_row(doc: dict) -> dict:
    c = doc.get("check")
    name = "writes acknowledged before the backup began, missing after the restore"
    if not c:
        return row(name, f"not checked: {doc.get('failed') or 'the run ended first'}", "0", False, "data")
    observed = (
        f"{fmt.rate(c['missing'])} of {fmt.rate(c['before_keys'])} keys "
        f"({fmt.rate(c['before_writes'])} acknowledged writes and deletes before the backup)"
    )
    if c.get("unreadable"):
        observed += f"; {fmt.rate(c['unreadable'])} keys could not be read"
    if c["missing_examples"]:
        e = c["missing_examples"][0]
        observed += f"; e.g. {e['key']}: {e['acknowledged_before_backup']} acknowledged, found {e['found']}"
    ok = c["missing"] == 0 and not c.get("unreadable") and c["before_keys"] > 0
    return row(name, observed, "0 (every one back, with its value or its tombstone)", ok, "data")


def backup_row(b: dict) -> dict:
    a = b.get("answer")
    if not a:
        return row("backup under load", f"failed: {b.get('error', 'no answer')}", "complete", False, "data")
    parts = f"{len(a.get('nodes') or [])} nodes"
    observed = (
        f"{fmt.seconds((a.get('durationMillis') or 0) / 1000)}: {a.get('backup')}, {fmt.rate(a.get('keys'))} records over all nodes, "
        f"{size(a.get('bytes'))} ({size(a.get('uploadedBytes'))} uploaded), {parts}"
    )
    return row("backup under load took", observed, "complete", True, "data")


def restore_row(doc: dict) -> dict:
    r = doc.get("restore")
    if not r:
        return row("restore took", f"not done: {doc.get('failed') or 'the run ended first'}", "every node restored", False, "data")
    start = doc.get("start") or {}
    nodes = ", ".join(f"{n['node']} {fmt.seconds(n['seconds'])}" for n in r["nodes"])
    observed = f"{fmt.seconds(r['seconds'])} for {len(r['nodes'])} nodes ({nodes}), {size(r.get('bytes'))} restored"
    if start:
        observed += f"; then {fmt.seconds(start.get('seconds'))} until every node served"
    return row("restore took", observed, "every node restored", True, "data")


def cost_rows(b: dict) -> list[dict]:
    w = b.get("windows")
    if not w:
        return [row("p99 during the backup against before it", f"not measured: {b.get('windows_why', '?')}", "", None, "none")]
    before, during, after = w["before"], w["during"], w["after"]
    cost = disaster.p99_cost(w)
    p99 = (
        f"{fmt.ms(during['p99_ms'])} ms during ({fmt.seconds(during['seconds'], 0)}) against "
        f"{fmt.ms(before['p99_ms'])} ms before ({fmt.seconds(before['seconds'], 0)})"
        + (f": {cost * 100:+.0f} %" if cost is not None else "")
        + f"; worst second {fmt.ms(during['p99_worst_ms'])} ms"
    )
    rate_cost = disaster.rate_cost(w)
    rate = (
        f"{fmt.rate(during['rate'])}/s during against {fmt.rate(before['rate'])}/s before"
        + (f" ({-rate_cost * 100:+.1f} %)" if rate_cost is not None else "")
        + f"; {fmt.rate(during['errors'])} requests failed during it, {fmt.rate(after['rate'])}/s after it"
    )
    return [
        row("p99 during the backup against before it (median of per-second p99)", p99,
            f"at most +{P99_COST * 100:.0f} %", None if cost is None else cost <= P99_COST, "performance"),
        row("rate served during the backup against before it", rate, "", None, "none"),
    ]


def after_row(doc: dict) -> dict:
    c = doc.get("check")
    if not c:
        return row("written after the backup began", "not checked", "", None, "none")
    observed = (
        f"{fmt.rate(c['after_writes'])} writes acknowledged after it began; of the {fmt.rate(c['after_keys'])} keys "
        f"written only after it: {fmt.rate(c['after_present'])} back at their last write, "
        f"{fmt.rate(c['after_lost'])} at an earlier state (lost by design)"
    )
    return row("written after the backup began", observed, "counted, not promised", None, "none")


def answer(doc: dict, b: dict) -> str:
    c = doc.get("check")
    a = b.get("answer") or {}
    if not c:
        return f"The scenario did not reach the check: {doc.get('failed') or b.get('error') or 'the run ended first'}."
    verdict = (
        "Every write acknowledged before the backup began came back"
        if c["missing"] == 0 and not c.get("unreadable")
        else f"{fmt.rate(c['missing'])} keys acknowledged before the backup did not come back (missing or older)"
        + (f" and {fmt.rate(c['unreadable'])} could not be read" if c.get("unreadable") else "")
    )
    text = (
        f"{verdict} ({fmt.rate(c['before_keys'])} keys checked). The backup took "
        f"{fmt.seconds((a.get('durationMillis') or 0) / 1000)}, the restore {fmt.seconds(doc['restore']['seconds'])}"
    )
    cost = disaster.p99_cost(b.get("windows") or {})
    if cost is not None:
        text += f"; p99 during the backup was {cost * 100:+.0f} % against before it"
    return text + "."


def build(run: dict) -> Part:
    doc = run.get("disaster") or {}
    phase = backup_phase(run) or {}
    b = phase.get("backup") or {}
    title = (
        f"{headline.where(run, 'disaster scenario')}: {headline.cluster(run)} at {headline.rates(run)}; "
        f"backup to {doc.get('target', '?')}, every node's data destroyed, restored"
    )
    question = (
        "Did the backup taken under load bring back every acknowledged write after every node's data was "
        "destroyed, how long did the backup and the restore take, and what did the backup cost in p99?"
    )
    rows = [check_row(doc), backup_row(b) if b else row("backup under load", "did not run", "complete", False, "data")]
    if b:
        rows.append(restore_row(doc))
        rows += cost_rows(b)
        rows.append(after_row(doc))
    rows += fill.rows(run)
    notes = [
        "A write counts as acknowledged before the backup when its answer came before the lab asked for the backup; "
        "the node that coordinates it takes its cut after that, so the backup must hold it. Such a key may come back "
        "at that write or at a later one (a write after the cut may be in the backup), never older. Keys are read "
        f"through the client API from every replica ({doc.get('read_replicas', 'from/from')}).",
        "p99 is the median of the per-second p99 of the seconds before the backup was asked for and of those it "
        "ran for; the rate counts requests that did not fail.",
    ]
    if doc.get("failed"):
        notes.insert(0, f"The scenario stopped at {doc['failed']}")
    return Part(title, question, answer(doc, b), rows, notes, held_to_slo=[])
