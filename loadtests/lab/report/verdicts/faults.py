"""The fault scenario's verdict, and the rows of any phase that breaks something on purpose (the
fault scenario's phase, a fixed-rate run's outage): per fault the requests that failed while it
lasted, how soon the rate and p99 were back (lab.recovery), the hints replayed and records
repaired; then whether the cluster healed and whether an acknowledged write was lost."""

from __future__ import annotations

from .. import fmt, headline, timeline
from ..fmt import listing
from . import fill, ledger, phases
from .rows import Part, row

VERBS = {"kill": "killed", "pause": "paused", "cutoff": "cut off"}


def note(run: dict) -> str:
    """What a faulty phase's rows gate on, and why not on the SLO."""
    timeout = run.get("config", {}).get("request_timeout_s")
    waits = f"the client's timeout ({timeout:g} s)" if timeout else "the client's timeout"
    return (
        "A phase with faults is not held to the SLO: a request sent to a paused or cut-off node waits "
        f"for {waits}, which becomes the phase's p99. Its rows gate on the recovery after each fault (the rate "
        "and p99 back in their band within the phase: performance), on the cluster healing and on no "
        "acknowledged write lost (data)."
    )


def _name(f: dict) -> str:
    w = timeline.window(f)
    when = f"second {w[0]:.0f}–{w[1]:.0f}" if w else f"planned at second {f.get('at_s', 0):g}"
    return f"{f.get('node', '?')} {VERBS.get(f.get('kind'), f.get('kind', 'fault'))} ({when})"


def _back(rec: dict, key: str, what: str) -> str:
    s = rec.get(key)
    return f"{what} not back within the phase" if s is None else f"{what} back {s:.1f} s after"


def fault_row(label: str, f: dict) -> dict:
    check = f"{label}: {_name(f)}"
    target = "rate and p99 back within the phase"
    if not timeline.window(f):
        return row(check, f"did not happen: {f.get('error') or 'the phase ended first'}", "the fault made", False, "none")
    rec = f.get("recovery")
    if not rec:
        return row(check, f"no recovery figures: {f.get('recovery_why') or 'not measured'}", target, None, "none")
    parts = [f"{fmt.rate(rec.get('errors_during'))} requests failed"]
    back = [_back(rec, k, what) for k, what in (("rate_recovered_s", "rate"), ("p99_recovered_s", "p99")) if k in rec]
    if back:
        parts.append(", ".join(back))
    parts.append(
        f"{fmt.rate(rec.get('hints_replayed'))} hints replayed, {fmt.rate(rec.get('records_repaired'))} records repaired"
    )
    measured = [k for k in ("rate_recovered_s", "p99_recovered_s") if k in rec]
    ok = all(rec[k] is not None for k in measured) if measured else None
    return row(check, "; ".join(parts), target, ok, "performance")


def heal_row(label: str, heal: dict | None) -> dict:
    check = f"{label}: the cluster healed"
    if not heal:
        return row(check, "not waited for", "hints replayed and a repair round between every two nodes", False, "data")
    target = f"hints replayed and a repair round between every two nodes within {heal.get('timeout_s', 0):g} s"
    if heal.get("healed"):
        observed = "yes: hints replayed" + (
            f" {heal['hints_replayed_s']:.1f} s" if heal.get("hints_replayed_s") is not None else ""
        ) + (f", repair rounds done {heal['repaired_s']:.1f} s" if heal.get("repaired_s") is not None else "")
        return row(check, observed + " after the load", target, True, "data")
    return row(check, f"no: {heal.get('why') or 'not within the wait'}", target, False, "data")


def rows(run: dict, phase: dict) -> list[dict]:
    """A faulty phase: its load for information, a row per fault, the healing, the ledger."""
    label = phase["label"]
    out = [
        row(
            f"{label}: rate, p99, failed while faults came and went",
            phases.load_text(phase),
            "not held to the SLO (see below)",
            None,
            "none",
        )
    ]
    out += [fault_row(label, f) for f in timeline.faults(phase)]
    out.append(heal_row(label, phase.get("heal")))
    return out + ledger.rows(phase)


def summary(phase: dict) -> str:
    """The faults of a phase in a clause: "3 faults of n2: 8 210 requests failed while they
    lasted; the rate was back within 1.0 s and p99 within 24.8 s after each"."""
    made = [f for f in timeline.faults(phase) if timeline.window(f)]
    recs = [f.get("recovery") or {} for f in made]
    nodes = sorted({f.get("node", "?") for f in made})
    text = f"{len(made)} fault{'s' if len(made) != 1 else ''} of {listing(nodes)}"
    errors = [r["errors_during"] for r in recs if r.get("errors_during") is not None]
    if errors:
        text += f": {fmt.rate(sum(errors))} requests failed while {'they' if len(made) > 1 else 'it'} lasted"
    for key, what in (("rate_recovered_s", "the rate"), ("p99_recovered_s", "p99")):
        values = [r.get(key) for r in recs if key in r]
        if not values:
            continue
        missed = sum(v is None for v in values)
        if missed:
            after = "it" if len(values) == 1 else f"{missed} of them"
            text += f"; {what} was not back within the phase after {after}"
        else:
            text += f"; {what} was back within {max(values):.1f} s after {'each' if len(values) > 1 else 'it'}"
    return text


def consequences(phase: dict) -> str:
    """Whether the cluster healed and what the ledger found, in a clause."""
    heal = phase.get("heal") or {}
    healed = "the cluster healed" if heal.get("healed") else f"the cluster did not heal ({heal.get('why') or 'not waited for'})"
    return f"{healed}; {ledger.summary(phase)}"


def build(run: dict) -> Part:
    faulty = [p for p in run.get("phases", []) if phases.has_faults(p)]
    kinds = [f.get("kind") for p in faulty for f in timeline.faults(p)]
    nodes = sorted({f.get("node", "?") for p in faulty for f in timeline.faults(p)})
    verbs = [VERBS.get(k, k) for k in dict.fromkeys(kinds)]
    title = f"{headline.where(run, 'fault scenario')}: {headline.cluster(run)} at {headline.rates(run)}"
    if nodes:
        title += f"; {listing(nodes)} {listing(verbs)}"
    question = (
        f"When a node is {listing(verbs, 'or') or 'broken'} under load, how many requests fail, how soon are "
        "the rate and p99 back, does the cluster heal, and is any acknowledged write lost?"
    )
    out = fill.rows(run)
    for p in faulty:
        out += rows(run, p)
    for left in run.get("config", {}).get("faults_left_out") or []:
        out.append(row(f"{left.get('fault', '?')}: left out", left.get("why", ""), "the fault made", None, "none"))
    if faulty:
        answer = "; ".join(f"{summary(p)}; {consequences(p)}" for p in faulty) + "."
        answer = answer[0].upper() + answer[1:]
    else:
        answer = "No phase with faults ran."
    return Part(title, question, answer, out, [note(run)])
