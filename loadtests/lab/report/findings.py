"""Facts the numbers show, in words: a sentence per phase, the saturation search's answer, each
fault and what followed, the healing, the lock profiles' dominant monitor, how much the flame
graphs can be trusted; and, apart from them, notes on the load tools. The written conclusion comes
from conclusion.md."""

from __future__ import annotations

import math

from . import flames, fmt, ledgerview, timeline


def phase_sentence(v: dict, slo) -> str:
    if v["scenario"] == "fill":
        return f"fill: {fmt.rate(v['requests'])} keys written at {fmt.rate(v['achieved'])}/s."
    p99 = v["p99"]
    text = f"{v['label']}: achieved {fmt.rate(v['achieved'])}/s"
    if v["requested"]:
        text += f" of {fmt.rate(v['requested'])}/s ({fmt.pct(v['achieved_share'], 1)})"
    text += f", p99 {fmt.ms(p99)} ms"
    notes = [f"SLO {slo:g} ms {'met' if v['slo_met'] else 'missed'}"] if slo else []
    if v["uncorrected"]:
        notes.append("timed from the send by Debian's wrk, so a stall's queueing is not in it")
    if notes:
        text += f" ({'; '.join(notes)})"
    text += f", {fmt.pct(v['error_rate'])} failed"
    if v["dropped"]:
        text += f", {fmt.rate(v['dropped'])} iterations dropped (no free VU: the server fell behind)"
    if v["nodes"]:
        # A node killed and started again during the phase may have no CPU figure of the whole phase.
        counted = [n for n in v["nodes"] if not fmt.missing(n["cores"])]
        cores = sum(n["cores"] for n in counted)
        missing = len(v["nodes"]) - len(counted)
        who = "the nodes" if len(v["nodes"]) > 1 else v["nodes"][0]["label"]
        text += f"; {who} used {cores:.2f} cores" + (
            f" (not counting {missing} restarted during the phase)" if missing else ""
        )
        text += f", the load generator {fmt.num(v['loadgen'].get('cores'))}"
    if v["pauses"] and not any(p["safepoints"] for p in v["pauses"]):
        text += "; no node's JVM stopped for a safepoint"
    elif v["pauses"]:
        most = max(v["pauses"], key=lambda p: p["stopped_share"])
        share = f"{fmt.pct(most['stopped_share'])} of the phase"
        text += (
            f"; of the nodes' JVMs, {most['label']} stood still longest, {share}"
            if len(v["pauses"]) > 1
            else f"; the JVM of {most['label']} stood still {share}"
        )
        if most["mean_gc_ms"] is not None:
            text += f" (its GC pauses {most['mean_gc_ms']:.1f} ms on average)"
    if v["others_cores"] and v["others_cores"] > 0.2:
        text += (
            f"; other processes on the machine used {v['others_cores']:.2f} cores meanwhile, "
            "which disturbs the measurement"
        )
    return text + "."


def saturation_sentence(verdict: dict) -> str | None:
    s = verdict.get("saturation")
    if not s:
        return None
    if s["rate"] is None:
        return f"saturation ({s['scenario']}): no step met every condition; the search stopped {s['stop_reason']}."
    text = f"saturation ({s['scenario']}): the highest rate that met every condition was {fmt.rate(s['rate'])}/s"
    if s["step"]:
        text += f" (p99 {fmt.ms(s['step'].get('p99_ms'))} ms, achieved {fmt.rate(s['step'].get('achieved_rate'))}/s)"
    return text + f"; the search stopped {s['stop_reason']}."


# A phase's healing figures, in the words of its finding, in this order.
HEALING_WORDS = (
    ("written", "{} hints written (replica calls failed or timed out)"),
    ("replayed", "{} hints replayed"),
    ("dropped", "{} hints not kept"),
    ("pending", "{} still pending at its end"),
    ("repaired", "repair copied {} records"),
    ("moved", "the handoff moved {} records"),
    ("purged", "{} tombstones purged"),
    ("previous_reads", "{} reads answered by previous owners"),
)


def healing_findings(views: list[dict]) -> list[str]:
    """The healing in words: each outage, each other phase that needed healing (the healing section
    says when none did)."""
    out = []
    for v in (v for v in views if v["healing"]):
        h = v["healing"]
        if h["text"]:
            out.append(f"{v['label']}: {h['text']}.")
        elif h["anything"]:
            t = h["total"]
            parts = [words.format(fmt.rate(t[figure])) for figure, words in HEALING_WORDS if t[figure]]
            out.append(f"{v['label']}: {', '.join(parts)}.")
    return out


def monitor_findings(views: list[dict]) -> list[str]:
    """The lock profiles' dominant monitor: one sentence when every phase waited on the same lock,
    else one per phase."""
    found = [(v["label"], v["monitor"]) for v in views if v["monitor"] and v["measured"]]
    if not found:
        return []

    def where(m: dict) -> str:
        return f"`{m['lock']}`" + (f" taken in `{m['caller']}`" if m["caller"] else "")

    def share(label: str, m: dict) -> str:
        return f"{label} {fmt.pct(m['share'], 0)} of {fmt.rate(m['total'])} lock samples"

    if len({(m["lock"], m["caller"]) for _, m in found}) == 1:
        m = found[0][1]
        return [
            f"Lock profiles: the dominant monitor is {where(m)} in every profiled phase "
            f"({', '.join(share(label, m) for label, m in found)})."
        ]
    return [
        f"{label}: the lock profile's dominant monitor is {where(m)} ({share('', m).strip()})." for label, m in found
    ]


def sample_findings(views: list[dict]) -> list[str]:
    """How many samples the flame graphs hold, when some hold too few for their shares to be stable."""
    counts = [(p["event"], p["samples"]) for v in views for p in v["profiles"] if p.get("samples")]
    few = [(e, n) for e, n in counts if n < flames.FEW_SAMPLES]
    if not few:
        return []
    events = sorted({e for e, _ in few})
    least = min(n for _, n in few)
    return [
        f"Flame graphs: {len(few)} of {len(counts)} hold fewer than {fmt.rate(flames.FEW_SAMPLES)} samples "
        f"({', '.join(events)}; the fewest {fmt.rate(least)}, where a frame's share is uncertain by up to "
        f"{flames.noise(least)}): read their hottest frames as hints, or profile a longer phase (DURATION)."
    ]


def findings(run: dict, views: list[dict], verdict: dict) -> list[str]:
    slo = run["config"].get("slo_p99_ms")
    out = [phase_sentence(v, slo) for v in views if not v["warmup"] and not v["step"]]
    sat = saturation_sentence(verdict)
    if sat:
        out.append(sat)
    for v in views:
        # The healing sentence already says when a fault held; this one adds how the load recovered.
        told = bool(v["healing"] and v["healing"]["text"])
        out.extend(timeline.fault_sentence(v["label"], f) for f in v["fault_records"] if f.get("recovery") or not told)
    out.extend(
        f"Fault {left['fault']} was left out of the schedule: {left['why'].rstrip('.')}."
        for left in run["config"].get("faults_left_out") or []
    )
    out.extend(healing_findings(views))
    out.extend(ledgerview.findings(run))
    out.extend(monitor_findings(views))
    out.extend(sample_findings(views))
    warmups = sum(v["warmup"] for v in views)
    if warmups:
        out.append(
            f"{warmups} warm-up phase{'s' if warmups > 1 else ''} (JIT, caches), not measured: folded under Phases."
        )
    return out


def tool_notes(run: dict, views: list[dict]) -> list[str]:
    """What the load tools measure, for the environment section: the model of each tool the run
    used, and why wrk2 was not among them."""
    out = []
    wrk = run.get("env", {}).get("wrk", {}) or {}
    used = {v["tool"] for v in views if v["measured"]}
    if "k6" in used:
        out.append(
            "k6: an open model (constant-arrival-rate): requests start on schedule whatever the server "
            "does, and latency counts from each request's start; when no VU is free k6 drops the "
            "iteration and the report counts it."
        )
    if "wrk2" in used:
        out.append(
            "wrk2: an open model (-R), latency measured from when each request was due "
            "(corrected for coordinated omission)."
        )
    if "wrk" in used:
        where = (
            f"the wrk2 image {wrk['image']} builds from source only where GitHub answers"
            if wrk.get("image")
            else "wrk2 is not installed here"
        )
        out.append(
            f"wrk: Debian's wrk, not wrk2 ({where}). It is paced by a Lua delay() hook and times each "
            "request from its send: when the server stalls, the requests that should have been sent "
            "meanwhile wait unseen (coordinated omission), so its latency figures understate the tail. "
            "The report marks them \"from the send\"."
        )
    elif wrk and not wrk.get("is_wrk2") and run.get("executor", "local") == "local":
        out.append("wrk2 is not installed here (Debian's wrk is); no phase of this run used wrk.")
    return out
