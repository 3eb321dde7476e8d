"""The claims of a conclusion that a run's data can test, and what the data says when it contradicts
one. Each check reads one clause (see text) and the phases it speaks of (see scope):

- flushes and compactions: "no flush or compaction ran during X" against the time series' events,
  and "3 flushes" against their count;
- GC pauses: a range or a bound of pauses (the JVMs' counters: a node's mean, a pause known exactly),
  of their per-node averages, or of GC per second (the series);
- a percentile quoted for a phase or a step ("p99 4.1 ms for PUT", "at 3 375/s (p99 11.8 ms)"), a
  range or a sequence of them over several ("p50 0.39-0.43 ms over the steps");
- a per-second figure "for the whole" of a fault, a figure "in second N", and the worst second;
- the SLO: its value, and "every phase met/missed it";
- "no request failed";
- development history ("before this change", "the old jar", "uncommitted"), which no run measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..report import fmt
from . import text as cut
from .facts import Phase
from .numbers import LOWER_WORDS, UPPER_WORDS, Written, written
from .scope import Ref, Scope

PERCENTILE = re.compile(r"(?<![\w.])(p50|p75|p90|p95|p99\.99|p99\.9|p999|p99|p100|median|max(?:imum)?)(?![\w.]\d)", re.I)
PERCENTILE_KEYS = {"median": "p50", "p999": "p99.9", "max": "p100", "maximum": "p100"}
SERIES_KEYS = {"p50": "p50_ms", "p99": "p99_ms", "p100": "max_ms"}
PER_SECOND = re.compile(
    r"per second|a second|each second|every second|one second|in (?:its|that|the) second|second[- ]by[- ]second|\bseconds? \d",
    re.I,
)
# "no-op" (the no-op route) is a name, not a negation.
NEGATION = re.compile(r"\b(?:no|not|none|never|without|nor|neither)\b(?!-)|n't", re.I)
EVENT_WORDS = re.compile(r"flush|compact", re.I)
GC = re.compile(r"\bGC\b|garbage.collect|\bcollector", re.I)
MEAN = re.compile(r"average|\bmean\b", re.I)
# "nothing else ran around it", "no flush near them": a claim about a moment (a worst second), not
# about the whole phase, which the events and GC of the phase cannot contradict.
AROUND = re.compile(r"\b(?:around|near) (?:it|them|that|this|the worst)\b", re.I)
# "GET 7.12 ms", "PUT's p99 6.07 ms": a figure of one operation of a mixed phase.
OPERATION_BEFORE = re.compile(r"\b(get|put)(?:'s)?(?: requests)?(?: p\d+(?:\.\d+)?)?(?: (?:was|of|at))?\s*$", re.I)
UPPER = re.compile(rf"(?:{UPPER_WORDS})\s*(?:p\d+(?:\.\d+)?\s*(?:of\s*)?)?$", re.I)
LOWER = re.compile(rf"(?:{LOWER_WORDS})\s*$", re.I)
WHOLE = re.compile(r"\bwhole\b|\bthroughout\b|\ball of\b|\bentire\b|\bevery second of\b", re.I)
NO_ERRORS = re.compile(
    r"\bno (?:request (?:failed|failures?)|requests? failed|errors?|failures?|failed requests?)\b|\bnothing failed\b"
    r"|\bwithout (?:an? )?errors?\b",
    re.I,
)
CONNECTIVE = re.compile(r"\s*(?:ms|µs)?\s*(?:for|in|at|during|of|on|over|across)\s+$")
RANGE_JOIN = re.compile(r"\s*(?:-|–|—|→|to)\s*")
SLO_VALUE = re.compile(r"(?P<a>\d+(?:\.\d+)?)\s?ms\s+SLO|SLO\W{0,3}(?:of\s+|p99\s*[≤<=]+\s*)?(?P<b>\d+(?:\.\d+)?)\s?ms")
UNIVERSAL = re.compile(
    r"\b(?:every|each|all(?: the)?|both)\s+(?:(?P<kind>timed|measured|fixed-rate|k6|wrk2?)\s+)?(?P<what>phase|step)s?\b", re.I
)
MET, MISSED = re.compile(r"\b(?:met|meets|within)\b"), re.compile(r"\b(?:missed|misses|broke|exceeded|outside)\b")
HISTORY = re.compile(
    r"\b(?:before|after|since|until) (?:this|the|that) (?:change|commit|patch|fix|pull request|PR|branch|refactor)\w*"
    r"|\bthe (?:old|new|previous|earlier|former) (?:jar|build|binary|code|version)\b|\bthe jar from before\b"
    r"|\bthis run's build\b|\buncommitted\b|\bnot yet committed\b|\bnot committed\b|\bthis (?:branch|patch|pull request|PR)\b"
    r"|\b(?:was|were|has been|is now|now) fixed\b|\bwe (?:changed|fixed|added|removed)\b",
    re.I,
)


@dataclass
class Warning:
    quote: str
    why: str

    def __str__(self) -> str:
        quote = re.sub(r"\s+", " ", self.quote).strip()
        return f"“{quote[:120] + '…' if len(quote) > 120 else quote}”: {self.why}"


def history(markdown: str) -> list[Warning]:
    return [
        Warning(m.group(0), "development history: a conclusion says what this run measured, not how the code got there")
        for m in HISTORY.finditer(markdown)
    ]


def ms_numbers(clause: str) -> list[Written]:
    """The clause's durations in ms (µs converted)."""
    out = []
    for w in written(clause):
        if w.unit == "µs":
            w.value, w.tolerance, w.unit = w.value / 1e3, w.tolerance / 1e3, "ms"
        if w.unit == "ms":
            out.append(w)
    return out


def runs_of(numbers: list[Written], clause: str) -> list[tuple[list[Written], bool]]:
    """Numbers grouped into ranges and sequences ("5-8", "5.2 → 7.1 → 8.7"); True for a sequence."""
    groups: list[list[Written]] = []
    for w in numbers:
        if groups and RANGE_JOIN.fullmatch(clause[groups[-1][-1].end : w.start]):
            groups[-1].append(w)
        else:
            groups.append([w])
    return [(g, "→" in clause[g[0].start : g[-1].end]) for g in groups]


def _key(mark: re.Match) -> str:
    """A percentile's key in the results: "p99", "p99.9"; the median is p50, the max p100."""
    word = mark.group(1).lower()
    return PERCENTILE_KEYS.get(word, word)


def bound_of(clause: str, w: Written) -> str:
    """"upper" for "under 5 ms" (and "no pause exceeded 5 ms"), "lower" for "over 5 ms", else ""."""
    before = clause[max(0, w.start - 30) : w.start]
    if UPPER.search(before):
        return "upper"
    if LOWER.search(before):
        return "upper" if NEGATION.search(clause[: w.start]) else "lower"
    return ""


def agrees(w: Written, v: float | None, bound: str = "") -> bool:
    """Whether a value bears out a written number; a bound ("under 5 ms") is a threshold, not rounded."""
    if v is None:
        return True
    if bound == "upper":
        return v <= w.value * (1 + 1e-9)
    if bound == "lower":
        return v >= w.value * (1 - 1e-9)
    return w.matches(v)


def _known(n) -> str:
    """How a node's pause is known: its counters saw one, or its series one per second."""
    if n.count == 1:
        return "its only pause"
    return "its GC in one second (no pause counters)" if n.count is None else "a pause (its series has one second of GC per pause)"


def labels(phases: list[Phase]) -> str:
    return ", ".join(p.label for p in phases)


class Reader:
    """The checks, for one run's phases."""

    def __init__(self, run: dict, scope: Scope):
        self.run = run
        self.scope = scope

    def check(self, s: cut.Sentence) -> list[Warning]:
        found = []
        for clause in s.clauses:
            for check in (self.events, self.gc, self.percentiles, self.whole_window, self.seconds, self.slo, self.errors):
                found += check(clause, s)
        return found

    def about(self, clause: str, s: cut.Sentence) -> list[Phase]:
        return self.scope.about(clause, s.text, s.lead)

    def named(self, clause: str, s: cut.Sentence) -> list[Phase]:
        """The phases named in the clause, its sentence or its list item's lead; none when none is."""
        for t in (clause, s.text, s.lead):
            phases = self.scope.resolve(self.scope.refs(t)) if t else []
            if phases:
                return phases
        return []

    def events(self, clause: str, s: cut.Sentence) -> list[Warning]:
        if not EVENT_WORDS.search(clause):
            return []
        found = []
        for m in re.finditer(r"(?<![\w.])(\d+) (flush(?:es)?|compactions?)\b", clause):
            kind = "flush" if m.group(2).startswith("flush") else "compaction"
            phases = [p for p in self.about(clause, s) if p.events_known]
            if len(phases) == 1 and len(phases[0].events_of(kind)) != int(m.group(1)):
                found.append(Warning(m.group(0), f"the time series of {phases[0].label} shows {len(phases[0].events_of(kind))} {kind} events"))
        if found or AROUND.search(clause):
            return found
        kinds = [k for k, word in (("flush", "flush"), ("compaction", "compact")) if re.search(word, clause, re.I)]
        negated = any(
            NEGATION.search(clause[max(0, m.start() - 30) : m.end() + 30]) for m in EVENT_WORDS.finditer(clause)
        )
        if negated:
            phases = self.about(clause, s)
            seen = [f"{p.label}: {len(p.events_of(k))} {k} events ({', '.join(sorted({e['node'] for e in p.events_of(k)}))})"
                    for p in phases for k in kinds if p.events_of(k)]
            if seen:
                return [Warning(clause, f"says none ran in {labels(phases)}, but the time series shows " + "; ".join(seen))]
        elif not re.search(r"\d+ (?:flush|compaction)", clause):
            phases = [p for p in self.named(clause, s) if p.events_known]
            if phases and not any(p.events_of(k) for p in phases for k in kinds):
                return [Warning(clause, f"the time series shows no {' or '.join(kinds)} in {labels(phases)}")]
        return []

    def gc(self, clause: str, s: cut.Sentence) -> list[Warning]:
        first = GC.search(clause)
        if not first:
            return []
        phases = self.about(clause, s)
        nums = [w for w in ms_numbers(clause) if w.start >= cut.segment_of(clause, first.start())[0]]
        if not nums:
            near = clause[max(0, first.start() - 25) : first.end() + 25]
            pauses = [p.label for p in phases if p.gc.any()]
            if NEGATION.search(near) and pauses and not AROUND.search(clause):
                return [Warning(clause, f"the nodes paused for GC in {', '.join(pauses)}")]
            return []
        mode = "average" if MEAN.search(clause) else "per second" if PER_SECOND.search(clause) else "pause"
        by_mode: dict[str, list[tuple[float, str]]] = {"average": [], "per second": [], "pause": []}  # (ms, where)
        for p in phases:
            for n in p.gc.nodes:
                if n.mean_ms is not None:
                    by_mode["average"].append((n.mean_ms, f"{p.label} {n.name} on average"))
                by_mode["per second"] += [(ms, f"{p.label} {n.name} in its second from {t:.1f}") for t, ms in n.seconds]
                by_mode["pause"] += [(ms, f"{p.label} {n.name}, {_known(n)}") for ms in n.pauses_known()]
                if n.mean_ms is not None and n.count != 1:
                    by_mode["pause"].append((n.mean_ms, f"{p.label} {n.name}, the mean of its {n.count} pauses"))
        values = by_mode[mode]
        if not values:
            return []
        found = []
        for group, _ in runs_of(nums, clause):
            lo, hi = group[0], group[-1]
            bound = bound_of(clause, lo)
            if len(group) > 1:
                out = [(v, where) for v, where in values if v > hi.value + hi.tolerance]
                if mode != "pause":
                    out += [(v, where) for v, where in values if v < lo.value - lo.tolerance]
                else:  # the shortest pause is at most the smallest mean or known pause
                    least = min(values)
                    out += [least] if least[0] < lo.value - lo.tolerance else []
            elif bound == "upper":
                out = [(v, where) for v, where in values if v > lo.value + lo.tolerance]
            elif bound:
                out = []
            else:  # one figure: some pause, mean or second's GC of the phases
                seen = [v for vs in by_mode.values() for v, _ in vs]
                out = [] if any(lo.matches(v) for v in seen) else sorted(values)[-1:]
            if out:
                shown = "; ".join(f"{fmt.ms(v)} ms ({where})" for v, where in sorted(out, reverse=True)[:4])
                found.append(Warning(clause[lo.start : hi.end], f"GC {'pauses' if mode == 'pause' else mode} in {labels(phases)}: {shown}"))
        return found

    def percentiles(self, clause: str, s: cut.Sentence) -> list[Warning]:
        marks = list(PERCENTILE.finditer(clause))
        if not marks:
            return []
        found = []
        nums = [w for w in ms_numbers(clause) if not re.search(r"SLO[^.;]{0,14}$", clause[max(0, w.start - 16) : w.start])
                and not re.match(r"\s*(?:ms\s*)?SLO", clause[w.end :])]
        refs = self.scope.refs(clause)
        lead = self.scope.resolve(self.scope.refs(s.lead)) if s.lead else []
        for group, sequence in runs_of(nums, clause):
            before = [m for m in marks if m.end() <= group[0].start]
            seg = cut.segment_of(clause, group[0].start)
            # A figure of one second, or of GC, is not the phase's percentile.
            if not before or PER_SECOND.search(clause[: seg[1]]) or GC.search(clause[seg[0] : seg[1]]):
                continue
            key = _key(before[-1])
            ref = self.bind(clause, group[0].start, group[-1].end, refs)
            phases = ref.phases if ref else lead if len(group) == 1 else []
            values = [(p, p.p(key)) for p in phases if p.p(key) is not None]
            if not values:
                continue
            quote = clause[before[-1].start() if before[-1].start() > seg[0] else seg[0] : group[-1].end].strip(" ,")
            if len(group) == 1:
                w = group[0]
                named = OPERATION_BEFORE.search(clause[max(seg[0], w.start - 24) : w.start])
                op = named.group(1).lower() if named else None
                of_op = [(p, p.p(key, op)) for p, _ in values if op in p.latency and p.p(key, op) is not None] if op else []
                if of_op:  # "GET 7.12 ms": that operation's own percentile
                    if not any(agrees(w, v, bound_of(clause, w)) for _, v in of_op):
                        found.append(Warning(quote, "; ".join(f"the {key} of {p.label}'s {op.upper()} requests is {fmt.ms(v)} ms" for p, v in of_op)))
                    continue
                if not any(agrees(w, v, bound_of(clause, w)) for _, v in values):
                    ops = [f"{fmt.ms(p.p(key, op))} ms is its {op.upper()} requests'" for p, _ in values
                           for op in ("get", "put") if op in p.latency and p.p(key, op) is not None and w.matches(p.p(key, op))]
                    why = "; ".join(f"the {key} of {p.label} is {fmt.ms(v)} ms" for p, v in values)
                    found.append(Warning(quote, why + (f" ({'; '.join(ops)}, not the phase's)" if ops else "")))
            elif sequence and len(group) == len(values):
                wrong = [f"{p.label} {fmt.ms(v)} ms" for w, (p, v) in zip(group, values) if not w.matches(v)]
                if wrong:
                    found.append(Warning(quote, f"the {key} of each, in order: " + ", ".join(f"{fmt.ms(v)} ms" for _, v in values)))
            else:
                lo, hi = group[0], group[-1]
                out = [f"{p.label} {fmt.ms(v)} ms" for p, v in values if v < lo.value - lo.tolerance or v > hi.value + hi.tolerance]
                if out:
                    found.append(Warning(quote, f"outside it: {', '.join(out)}"))
        return found

    def bind(self, clause: str, start: int, end: int, refs: list[Ref]) -> Ref | None:
        """The reference a number speaks of: the one right after it ("4.1 ms for PUT"), the one before
        its parenthesis ("2 250/s (p99 9.0 ms)"), or the nearest before it in its comma-separated part."""
        for r in refs:
            if r.start >= end and CONNECTIVE.fullmatch(clause[end : r.start]):
                return r
        opened = cut.open_paren(clause, start)
        if opened is not None:
            before = [r for r in refs if r.end <= opened]
            return before[-1] if before else None
        seg = cut.segment_of(clause, start)
        before = [r for r in refs if seg[0] <= r.start and r.end <= start]
        return before[-1] if before else None

    def whole_window(self, clause: str, s: cut.Sentence) -> list[Warning]:
        mark = PERCENTILE.search(clause)
        if not (mark and PER_SECOND.search(clause) and WHOLE.search(clause)):
            return []
        nums = [w for w in ms_numbers(clause) if w.start > mark.end()]
        key = SERIES_KEYS.get(_key(mark))
        if not nums or not key:
            return []
        w, found = nums[0], []
        for p, f in self.scope.faults(clause):
            began, ended = f.get("began_at_s"), f.get("ended_at_s")
            if began is None or ended is None:
                continue
            inside = [x for x in p.series if x.get(key) is not None and x["t"] >= began and x["t"] + 1 <= ended]
            held = [x for x in inside if agrees(w, x[key], bound_of(clause, w))]
            if inside and len(held) < len(inside):
                others = [x[key] for x in inside if x not in held]
                found.append(Warning(
                    clause[mark.start() : w.end],
                    f"in the {f.get('kind', 'fault')} of {f.get('node', '?')} (seconds {began:.1f} to {ended:.1f}) the series "
                    f"shows it in {len(held)} of {len(inside)} full seconds"
                    + (f" ({', '.join(str(x['t']) for x in held)})" if held else "")
                    + f"; in the others {fmt.ms(min(others))}-{fmt.ms(max(others))} ms",
                ))
        return found

    def seconds(self, clause: str, s: cut.Sentence) -> list[Warning]:
        found = []
        worst = re.search(r"(?:worst|slowest) second\W+(?:was |is )?(?:second )?(\d+)\b", clause, re.I)
        phases = [p for p in self.about(clause, s) if p.series_latency]
        if worst and phases:
            t = int(worst.group(1))
            seconds = [(p, p.worst_second()) for p in phases]
            if not any(w and w.t == t for _, w in seconds):
                found.append(Warning(worst.group(0), "; ".join(
                    f"the worst second of {p.label} is second {w.t} (p99 {fmt.ms(w.p99_ms)} ms)" for p, w in seconds if w)))
        nums = {w.start: w for w in ms_numbers(clause)}
        for m in re.finditer(r"(?P<v>\d[\d.]*) ?ms (?:in|at) second (?P<t>\d+)|second (?P<t2>\d+)\W{1,3}(?:p\d+(?:\.\d+)? )?(?P<v2>\d[\d.]*) ?ms", clause):
            at = m.start("v") if m.group("v") else m.start("v2")
            w, t = nums.get(at), int(m.group("t") or m.group("t2"))
            marks = [x for x in PERCENTILE.finditer(clause) if x.end() <= at]
            key = SERIES_KEYS.get(_key(marks[-1])) if marks else None
            if not w or not key or GC.search(clause[max(0, at - 40) : at]):
                continue
            values = [(p, x[key]) for p in phases for x in p.series if x.get("t") == t and x.get(key) is not None]
            if values and not any(w.matches(v) for _, v in values):
                found.append(Warning(m.group(0), "; ".join(f"{p.label} second {t}: {fmt.ms(v)} ms" for p, v in values)))
        return found

    def slo(self, clause: str, s: cut.Sentence) -> list[Warning]:
        if "SLO" not in clause:
            return []
        found = []
        slo = self.run.get("config", {}).get("slo_p99_ms")
        for m in SLO_VALUE.finditer(clause):
            v = float(m.group("a") or m.group("b"))
            if slo is not None and abs(v - slo) > 1e-9:
                found.append(Warning(m.group(0), f"the run's SLO is p99 ≤ {slo:g} ms"))
        met, missed = MET.search(clause), MISSED.search(clause)
        if bool(met) == bool(missed) or NEGATION.search(clause):  # "no rate was within the SLO": not a claim to test
            return found
        verb = met or missed
        refs = self.scope.refs(clause)
        quantifiers = list(UNIVERSAL.finditer(clause))
        if quantifiers:
            q = min(quantifiers, key=lambda m: abs(m.start() - verb.start()))
            phases = self.scope.steps if q.group("what").lower() == "step" else self.scope.quantified(q.group("kind"))
            rates = [p for r in refs if r.kind == "rate" for p in r.phases]
            phases = ([p for p in phases if p in rates] or phases) if rates else phases
        else:
            phases = self.scope.resolve(refs) or (self.scope.resolve(self.scope.refs(s.lead)) if s.lead else [])
            phases = phases if len(phases) == 1 else []
        wrong = [p for p in phases if p.slo_met is not None and p.slo_met != bool(met)]
        if wrong:
            found.append(Warning(clause[verb.start() : verb.end() + 40], "; ".join(
                f"{p.label}: p99 {fmt.ms(p.p())} ms, SLO {'met' if p.slo_met else 'missed'}" for p in wrong)))
        return found

    def errors(self, clause: str, s: cut.Sentence) -> list[Warning]:
        m = NO_ERRORS.search(clause)
        if not m:
            return []
        failing = [p for p in self.about(clause, s) if p.error_rate]
        return [Warning(m.group(0), "; ".join(f"{fmt.pct(p.error_rate, 3)} of {p.label}'s requests failed" for p in failing))] if failing else []
