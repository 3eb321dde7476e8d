"""The sentences the drafts share: what was run, and per phase its rate, p99 against the SLO, the
flushes and compactions, the GC pauses and the worst second with what ran around it. Every number is
a figure of the run written as the report writes it (lab.report.fmt), so `lab check` finds it."""

from __future__ import annotations

from datetime import datetime

from ..report import fmt, runs, timeline
from ..report.fmt import listing
from .facts import Phase, profiler_windows


STAMP = "%Y-%m-%dT%H:%M:%S%z"  # run.json's started and finished


def ms(v) -> str:
    return f"{fmt.ms(v)} ms"


def upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def run_length(run: dict) -> str | None:
    try:
        taken = datetime.strptime(run["finished"], STAMP) - datetime.strptime(run["started"], STAMP)
        return fmt.duration(taken.total_seconds())
    except (KeyError, TypeError, ValueError):
        return None


def setup(run: dict) -> str:
    """The cluster, the data and the load: "3 nodes, replicas 2/3, 100 000 keys of 1024 bytes, k6"."""
    cfg = run.get("config", {})
    n = runs.node_count(run)
    what = "pod" if run.get("executor") == "k8s" else "node"
    text = f"{n} {what}{'s' if n != 1 else ''}"
    if n > 1:
        text += f", replicas {runs.replicas(run)}"
    sizes = (run.get("scale") or {}).get("sizes")
    if sizes:
        text += f", {fmt.rate(sizes[0])} to {fmt.rate(sizes[-1])} keys of {cfg.get('value_size', '?')} bytes"
    elif cfg.get("keys"):
        text += f", {fmt.rate(cfg['keys'])} keys of {cfg.get('value_size', '?')} bytes"
    return text + f", load from {listing(runs.tools_used(run))}"


def what_was_run(run: dict, measured: list[Phase], extra: str = "") -> str:
    text = "**What was run.** "
    if run.get("invocation"):
        text += f"`{run['invocation']}`: "
    text += setup(run)
    if measured:
        lengths = sorted({round(p.duration_s) for p in measured if p.duration_s})
        several = len(measured) > 1
        text += f"; the measured phase{'s' if several else ''} {listing([p.label for p in measured])}"
        if len(lengths) == 1:
            text += f", {lengths[0]} s{' each' if several else ''}"
    warmups = [p for p in run.get("phases", []) if p.get("warmup")]
    if warmups:
        text += f", after {len(warmups)} warm-up phase{'s' if len(warmups) != 1 else ''}"
    events = run.get("config", {}).get("events")
    if events and any(p.profiles for p in measured):
        text += f"; the nodes profiled ({', '.join(events)}) during {listing([p.label for p in measured if p.profiles])}"
    text += extra
    length = run_length(run)
    return text + (f". {length} in all." if length else ".")


def failed(p: Phase) -> str:
    if not p.error_rate:
        return "no request failed"
    count = round((p.requests or 0) * p.error_rate)
    return f"{fmt.pct(p.error_rate, 1)} of the requests failed ({fmt.rate(count)})"


def rate_and_p99(p: Phase) -> str:
    text = f"{fmt.rate(p.achieved)}/s achieved"
    if p.p() is not None:
        text += f", p99 {ms(p.p())}"
        if p.slo_met is not None:
            text += f" (SLO {p.slo_ms:g} ms {'met' if p.slo_met else 'missed'})"
    return text + f", {failed(p)}"


def events(p: Phase) -> str:
    if not p.events_known:
        return ""
    if not p.events:
        return "No flush or compaction ran."
    parts = []
    for kind, plural in (("flush", "flushes"), ("compaction", "compactions")):
        found = p.events_of(kind)
        if found:
            nodes = sorted({e["node"] for e in found})
            first, last = found[0]["t"], found[-1]["t"]
            when = f"around second {first:.1f}" if last - first < 1 else f"seconds {first:.1f} to {last:.1f}"
            parts.append(f"{len(found)} {plural if len(found) != 1 else kind} ({', '.join(nodes)}, {when})")
    return upper(f"{listing(parts)} ran.")


def gc(p: Phase) -> str:
    g = p.gc
    if not g.known():
        return ""
    if not g.any():
        return "No GC pause."
    parts = []
    means = g.means()
    if g.count:
        low, high = fmt.num(min(means), 1), fmt.num(max(means), 1)
        span = low if low == high else f"{low}-{high}"
        paused = [f"{n.name} {n.count}" for n in g.nodes if n.count]
        uncounted = [n.name for n in g.nodes if n.count is None]
        counters = f"; no counters for {listing(uncounted)}" if uncounted else ""
        if g.count == 1:
            only = next(n for n in g.nodes if n.count)
            parts.append(f"GC: 1 pause, on {only.name}{counters}, of {fmt.num(only.mean_ms, 1)} ms")
        else:
            who = f" ({', '.join(paused)}{counters})" if len(g.nodes) > 1 else ""
            parts.append(f"GC: {g.count} pauses{who}, {span} ms on average{' per node' if len(g.nodes) > 1 else ''}")
    seconds = g.per_second()
    if seconds:
        top, at, node = seconds[0]
        parts.append(f"at most {top:g} ms of GC in one second ({node}, from second {at:.1f})")
    elif g.count and g.sampled:
        parts.append("its per-second series shows none")
    return upper("; ".join(parts)) + "."


def worst(p: Phase) -> str:
    w = p.worst_second()
    if not w:
        return ""
    text = f"Worst second: second {w.t}, p99 {ms(w.p99_ms)}"
    if w.errors:
        text += f", {fmt.rate(w.errors)} errors"
    if w.around:
        return text + f"; around it: {'; '.join(w.around)}."
    return text + "; nothing else ran around it (no fault, flush, compaction, GC pause or profiler)."


def phase_item(p: Phase) -> str:
    """A measured phase as one list item."""
    at = f" at {fmt.rate(p.requested)}/s" if p.requested else ""
    parts = [f"- **{p.label}**{at}: {rate_and_p99(p)}.", events(p), gc(p), worst(p)]
    windows = profiler_windows(p.profiles)
    if windows:
        parts.append(
            "Profiled: "
            + ", ".join(f"{event} from second {start:.1f} to {end:.1f}" for event, _, start, end in windows)
            + "."
        )
    return " ".join(x for x in parts if x)


def fault_item(f: dict, p: Phase) -> str:
    """A fault, its window, what the clients saw during it, second by second, and the recovery."""
    w = timeline.window(f)
    head = f"- **{f.get('kind', 'fault')} of {f.get('node', '?')}**: {timeline.describe(f)}"
    if not w:
        return f"{head}, did not happen ({f.get('error') or 'the phase ended first'})."
    text = f"{head}, from second {w[0]:.1f} to {w[1]:.1f}"
    inside = [s for s in p.full_seconds() if s["t"] >= w[0] and s["t"] + 1 <= w[1]]
    timed = [s for s in inside if s.get("p99_ms") is not None]
    rec = f.get("recovery") or {}
    said = []
    if rec.get("errors_during") is not None:
        said.append(f"{fmt.rate(rec['errors_during'])} requests failed")
    if rec.get("p99_during_ms") is not None:
        said.append(f"p99 {ms(rec.get('p99_before_ms'))} before, {ms(rec['p99_during_ms'])} during, {ms(rec.get('p99_after_ms'))} after")
    if timed and p.slo_ms is not None:
        over = [s for s in timed if s["p99_ms"] > p.slo_ms]
        said.append(
            f"p99 per second above the SLO in {len(over)} of its {len(timed)} full seconds"
            + (f" (at most {ms(max(s['p99_ms'] for s in timed))})" if over else "")
        )
    for key, what in (("rate_recovered_s", "the rate"), ("p99_recovered_s", "p99")):
        if key in rec:
            said.append(f"{what} back {rec[key]:.1f} s after it ended" if rec[key] is not None else f"{what} not back within the phase")
    for key, what in (("hints_replayed", "hints replayed"), ("records_repaired", "records repaired")):
        if rec.get(key) is not None:
            said.append(f"{fmt.rate(rec[key])} {what}")
    return text + (": " + "; ".join(said) if said else "") + "."


def ledger(p: Phase) -> str:
    """Acknowledged writes read back after a phase that broke something."""
    led = p.record.get("ledger")
    if not led:
        return ""
    acked = (led.get("acknowledged_writes") or 0) + (led.get("acknowledged_deletes") or 0)
    if not led.get("checked"):
        return f"The {fmt.rate(acked)} acknowledged writes and deletes of {p.label} were not read back: {led.get('why_not_checked') or 'no reason recorded'}."
    text = f"Acknowledged writes lost in {p.label}: {fmt.rate(led.get('lost'))} of {fmt.rate(acked)} (read back at their replicas)"
    if led.get("stale_reads") is not None:
        text += f"; stale reads: {fmt.rate(led['stale_reads'])} of {fmt.rate(led.get('reads_checked'))}"
    return text + "."
