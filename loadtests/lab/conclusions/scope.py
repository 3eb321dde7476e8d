"""Which phases a piece of a conclusion speaks of: a phase named by its label ("put", "get@1000",
"PUT's"), by its kind of load ("GET" when no phase is called get, "the mix"), by its rate ("at 1 000/s",
"2 250 GET/s"), or by a quantifier ("every phase", "the timed phases", "every k6 phase", "over the
steps"). The phases of a fault are named by the fault's kind ("the kill", "paused", "cut-off")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import facts
from .facts import Phase
from .numbers import DIGITS

# A kind of load as a writer names it; GET and PUT in capitals, as "get" and "put" are also verbs.
SCENARIO_WORDS = {"get": r"GETs?", "put": r"PUTs?", "mixed": r"[Mm]ixed|the mix", "status": r"status", "fill": r"[Ff]ill",
                  "range": r"RANGE", "conditional": r"[Cc]onditional", "multiget": r"[Mm]ulti-gets?",
                  "ttl": r"TTL|expiring"}
RATE = re.compile(rf"(?<![\w.])(?P<n>{DIGITS})(?:\.\d+)?\s?(?:[A-Za-z]+)?/s\b")
STEPS = re.compile(r"\b(?:every|each|all(?: the)?|the|its)\s+(?:search's\s+)?steps?\b|\bthe search\b", re.I)
PHASES = re.compile(
    r"\b(?:every|each|all(?: the)?|both|the|per|these|those)\s+(?:(?P<kind>timed|measured|fixed-rate|k6|wrk2?)\s+)?phases?\b",
    re.I,
)
FAULT_KINDS = {
    "kill": r"\bkill(?:s|ed|ing)?\b|\brestart",
    "pause": r"\bpause[sd]?\b|\bSIGSTOP\b|\bfroze|\bfrozen\b",
    "cutoff": r"\bcut[- ]?off\b|\bpartition",
}


@dataclass
class Ref:
    start: int
    end: int
    phases: list[Phase]
    kind: str  # label | scenario | rate | quantifier


class Scope:
    def __init__(self, phases: list[Phase]):
        self.all = phases
        self.named = [p for p in phases if not p.warmup]
        self.timed = facts.timed(phases)
        self.steps = facts.steps(phases)
        labels = sorted({p.label for p in self.named}, key=len, reverse=True)
        self.labels = [(re.compile(rf"(?<![\w@]){re.escape(label)}(?:'s|’s)?(?![\w@])", re.I), label) for label in labels]

    def refs(self, text: str) -> list[Ref]:
        """Every reference to phases in the text, the most specific first where two overlap."""
        found: list[Ref] = []

        def free(a: int, b: int) -> bool:
            return all(b <= r.start or a >= r.end for r in found)

        for m in RATE.finditer(text):
            rate = float(re.sub(r"\D", "", m.group("n")))
            hit = [p for p in self.named if p.measured and p.requested == rate]
            if hit:
                found.append(Ref(m.start(), m.end(), hit, "rate"))
        for pattern, label in self.labels:
            for m in pattern.finditer(text):
                if free(m.start(), m.end()):
                    found.append(Ref(m.start(), m.end(), [p for p in self.named if p.label == label], "label"))
        for scenario, words in SCENARIO_WORDS.items():
            hit = [p for p in self.named if p.scenario == scenario and (p.measured or scenario == "fill")]
            for m in re.finditer(rf"(?<![\w@])(?:{words})(?:'s)?(?![\w@])", text):
                if hit and free(m.start(), m.end()):
                    found.append(Ref(m.start(), m.end(), hit, "scenario"))
        for m in STEPS.finditer(text):
            if self.steps and free(m.start(), m.end()):
                found.append(Ref(m.start(), m.end(), self.steps, "quantifier"))
        for m in PHASES.finditer(text):
            if free(m.start(), m.end()):
                found.append(Ref(m.start(), m.end(), self.quantified(m.group("kind")), "quantifier"))
        return sorted(found, key=lambda r: r.start)

    def quantified(self, kind: str | None) -> list[Phase]:
        kind = (kind or "").lower()
        if kind in ("k6", "wrk", "wrk2"):
            return [p for p in self.timed if (p.record.get("result") or {}).get("tool", "").startswith(kind)]
        return self.timed

    @staticmethod
    def resolve(refs: list[Ref]) -> list[Phase]:
        """The phases a set of references names together: the phases named, narrowed by the rates
        when both are given; a quantifier only when nothing is named."""
        named = _union(r.phases for r in refs if r.kind in ("label", "scenario"))
        rates = _union(r.phases for r in refs if r.kind == "rate")
        quantified = _union(r.phases for r in refs if r.kind == "quantifier")
        if named and rates:
            both = [p for p in named if p in rates]
            return both or rates
        return named or rates or quantified

    def about(self, *texts: str) -> list[Phase]:
        """The phases the first of the texts that names any speaks of, else the timed phases."""
        for text in texts:
            phases = self.resolve(self.refs(text)) if text else []
            if phases:
                return phases
        return self.timed

    def faults(self, text: str) -> list[tuple[Phase, dict]]:
        """The faults the text names by kind, or every fault when it names none."""
        kinds = {kind for kind, words in FAULT_KINDS.items() if re.search(words, text, re.I)}
        return [(p, f) for p in self.all for f in p.faults if not kinds or f.get("kind") in kinds]


def _union(groups) -> list[Phase]:
    out: list[Phase] = []
    for g in groups:
        out += [p for p in g if p not in out]
    return out
