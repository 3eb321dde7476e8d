"""A conclusion drafted from a run's own data, one small function per kind of run, each giving the
figures its run's question needs; a person edits the draft into the conclusion. A new kind of run
adds a function to DRAFTERS (a kind without one gets the fixed-rate phases' draft)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..report import fmt, scaleview, views
from . import facts, numbers
from .facts import Phase
from .words import fault_item, ledger, listing, ms, phase_item, what_was_run

Drafter = Callable[[dict, list[Phase]], list[str]]


def _slo_answer(run: dict, timed: list[Phase]) -> str:
    """p99 of each timed phase and whether every one met the SLO."""
    shown = [p for p in timed if p.p() is not None]
    if not shown:
        return ""
    rates = {p.requested for p in shown}
    at = f"At {fmt.rate(rates.pop())}/s, p99" if len(rates) == 1 and None not in rates else "The p99"
    text = f"{at} was " + listing([f"{ms(p.p())} for {p.label}" for p in shown])
    slo = run.get("config", {}).get("slo_p99_ms")
    if slo is not None:
        missed = [p.label for p in shown if not p.slo_met]
        text += (
            f": every phase met the SLO (p99 ≤ {slo:g} ms)"
            if not missed
            else f": {listing(missed)} missed the SLO (p99 ≤ {slo:g} ms)"
        )
    failing = [p for p in shown if p.error_rate]
    text += "; " + ("no request failed" if not failing else listing([f"{fmt.pct(p.error_rate, 1)} failed in {p.label}" for p in failing]))
    return text + "."


def _search_answer(run: dict) -> str:
    sat = run.get("saturation") or {}
    if not sat.get("steps"):
        return ""
    best = next((s for s in sat["steps"] if s["rate"] == sat.get("max_sustainable_rate")), None)
    scenario = sat.get("scenario", "?")
    if best:
        text = (
            f"The search sustained {fmt.rate(best['rate'])}/s of {scenario} within the SLO "
            f"(p99 {ms(best.get('p99_ms'))} at {fmt.rate(best['rate'])}/s, {fmt.rate(best.get('achieved_rate'))}/s achieved)"
        )
    else:
        text = f"No rate the search tried was sustained within the SLO ({scenario})"
    return text + (f"; it stopped {sat['stop_reason']}." if sat.get("stop_reason") else ".")


def _search_setup(run: dict) -> str:
    sat = run.get("saturation") or {}
    if not sat.get("steps"):
        return ""
    return (
        f"; a search of {sat.get('scenario', '?')} from {fmt.rate(sat.get('start_rate'))}/s, "
        f"×{sat.get('factor', '?')} a step of {sat.get('step_duration_s', '?')} s"
    )


def _steps(steps: list[Phase]) -> str:
    """The search's steps: p99 at each rate, and the spread of p50."""
    timed = [p for p in steps if p.p() is not None and p.requested]
    if not timed:
        return ""
    text = "**The search's steps.** p99 " + listing([f"{ms(p.p())} at {fmt.rate(p.requested)}/s" for p in timed])
    p50 = [p.p("p50") for p in timed if p.p("p50") is not None]
    if p50:
        spread = fmt.ms(min(p50)) if fmt.ms(min(p50)) == fmt.ms(max(p50)) else f"{fmt.ms(min(p50))}-{fmt.ms(max(p50))}"
        text += f"; p50 {spread} ms over the steps"
    return text + ".\n\n" + "\n".join(phase_item(p) for p in steps)


def _phase_list(title: str, shown: list[Phase]) -> str:
    return f"**{title}**\n\n" + "\n".join(phase_item(p) for p in shown) if shown else ""


def _faults(shown: list[Phase]) -> list[str]:
    """Each fault of the phases that broke something, the writes read back, and the healing."""
    out = []
    broken = [p for p in shown if p.faults]
    for p in broken:
        title = "Per fault" + (f", in {p.label}" if len(broken) > 1 else "")
        out.append(f"**{title}.**\n\n" + "\n".join(fault_item(f, p) for f in p.faults))
        healing = views.healing_view(p.record)
        # The healing in the report's words, without the faults it repeats.
        healed = healing["text"][len(healing["short"]) :].lstrip("; ") if healing and healing["text"] else ""
        after = " ".join(x for x in (ledger(p), f"After the faults, {healed}." if healed else "") if x)
        if after:
            out.append(after)
    return out


def lab(run: dict, phases: list[Phase]) -> list[str]:
    """Fixed-rate phases: the SLO per phase, the highest rate a search sustained, each phase's figures."""
    timed, steps = facts.timed(phases), facts.steps(phases)
    answer = " ".join(x for x in (_slo_answer(run, timed), _search_answer(run)) if x)
    return [
        what_was_run(run, timed, _search_setup(run)),
        f"**Answer.** {answer}" if answer else "",
        _phase_list("Phase by phase.", timed),
        *_faults(timed),
        _steps(steps),
    ]


def saturation(run: dict, phases: list[Phase]) -> list[str]:
    """A saturation search: the limit, why it stopped, and every step's figures."""
    steps, answer = facts.steps(phases), _search_answer(run)
    return [what_was_run(run, steps, _search_setup(run)), f"**Answer.** {answer}" if answer else "", _steps(steps)]


def faults(run: dict, phases: list[Phase]) -> list[str]:
    """A fault scenario: per fault the requests failed, p99 before, during and after, the recovery,
    the hints and repairs; the acknowledged writes read back; the phase as a whole."""
    timed = facts.timed(phases)
    cfg = run.get("config", {})
    extra = f"; faults {cfg['faults']}" if cfg.get("faults") else ""
    if cfg.get("request_timeout_s"):
        extra += f"; a request given up after {cfg['request_timeout_s']:g} s"
    return [what_was_run(run, timed, extra), *_faults(timed), _phase_list("The phase as a whole.", timed)]


def hotpath(run: dict, phases: list[Phase]) -> list[str]:
    """The hot-path benchmark: server CPU per request of each operation against the no-op route's at
    the same rate, against its target."""
    hp = run.get("hotpath") or {}
    target = (run.get("config", {}).get("hotpath") or {}).get("max_ratio")
    rows = {r["label"]: r for r in hp.get("rows", [])}
    lines = []
    for label, row in rows.items():
        base = rows.get(f"status@{row.get('requested')}")
        if label.startswith("status@") or not base or fmt.missing(row.get("ratio")):
            continue
        line = (
            f"- **{label}**: {fmt.num(row['server_us'], 1)} µs of server CPU per request against "
            f"{fmt.num(base['server_us'], 1)} µs for the no-op route at {fmt.rate(row['requested'])}/s: {row['ratio']:.2f}×"
        )
        if target:
            line += f", {'within' if row['ratio'] <= target else 'over'} the target of {target:g}×"
        lines.append(line + f"; p99 {ms(row.get('p99'))}, {fmt.rate(row.get('achieved'))}/s achieved.")
    node = f"; the node ran with `{hp['java_options']}`" if hp.get("java_options") else ""
    measured = [p for p in phases if p.measured]
    return [
        what_was_run(run, measured, node),
        "**Answer.**\n\n" + "\n".join(lines) if lines else "",
        _phase_list("Phase by phase.", measured),
    ]


def scale(run: dict, phases: list[Phase]) -> list[str]:
    """The scale benchmark: its targets, and per size the fill, latency, CPU, memory and disk."""
    view = scaleview.view(run)
    if not view:
        return lab(run, phases)
    mem = view["memory"]
    extra = f"; memory limit {mem.get('limit', '?')} ({'enforced' if mem.get('enforced') else 'not enforced'})"
    if mem.get("java_options"):
        extra += f", Java options `{mem['java_options']}`"
    targets = _verdict_rows(run)
    sizes = []
    for r in view["rows"]:
        parts = [f"- **{fmt.rate(r['keys'])} keys**:"]
        if r["fill_rate"] is not None:
            parts.append(f"filled at {fmt.rate(r['fill_rate'])} keys/s, write amplification {fmt.num(r['write_amplification'], 1)};")
        parts.append(f"GET p50 {ms(r['get']['p50'])}, p99 {ms(r['get']['p99'])}, {fmt.num(r['get']['us'], 1)} µs of CPU per GET;")
        parts.append(f"RSS {fmt.num(r['rss_mib'], 0)} MiB, heap used {fmt.num(r['heap_used_mib'], 0)} MiB, OOM kills {fmt.rate(r['oom_kill'])};")
        parts.append(f"data-block hit rate {fmt.pct(r['data_hit_rate'], 1)}.")
        sizes.append(" ".join(parts))
    measured = [p for p in phases if p.measured]
    return [
        what_was_run(run, measured, extra),
        "**Targets.**\n\n" + targets if targets else "",
        "**Per size.**\n\n" + "\n".join(sizes),
        _phase_list("Phase by phase.", measured),
    ]


def _verdict_rows(run: dict) -> str:
    """The rows of the run's verdict.json, when the report generator wrote one."""
    doc = numbers.json_file(Path(run.get("dir", "")) / "verdict.json") if run.get("dir") else None
    rows = (doc or {}).get("rows") or []
    return "\n".join(f"- {r['check']}: {r['observed']} (target {r['target']}), {r['status']}." for r in rows if r.get("check"))


def soak(run: dict, phases: list[Phase]) -> list[str]:
    """A soak: the rate and where it came from, the long phase's figures, and its drift as the
    verdict judged it (first window against last)."""
    sk = run.get("soak") or {}
    extra = ""
    if sk.get("rate"):
        extra = f"; the mixed load at {fmt.rate(sk['rate'])}/s"
        if sk.get("highest_rate"):
            extra += f", {sk.get('share', 0) * 100:g} % of {fmt.rate(sk['highest_rate'])}/s, the highest rate sustained within the SLO"
    long = [p for p in phases if p.label == sk.get("phase")] or facts.timed(phases)
    rows = _verdict_rows(run)
    return [
        what_was_run(run, long, extra),
        "**Answer.**\n\n" + rows if rows else "",
        _phase_list("The soak, second by second.", long),
        _steps(facts.steps(phases)),
    ]


DRAFTERS: dict[str, Drafter] = {
    "phases": lab,
    "lab": lab,
    "saturation": saturation,
    "faults": faults,
    "hotpath": hotpath,
    "scale": scale,
    "soak": soak,
}


def draft(run: dict, run_dir: Path) -> str:
    """The draft of the run's conclusion, in Markdown."""
    drafter = DRAFTERS.get(run.get("kind", ""), lab)
    return "\n\n".join(p for p in drafter(run, facts.phases(run, run_dir)) if p).strip() + "\n"
