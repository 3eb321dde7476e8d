"""Numbers as a writer writes them, and whether the run's data holds them.

A conclusion's number is read with its unit (ms, s, µs, %, KiB, MB, ×, cores...), a range or list it
belongs to ("5-8 ms", "2.5, 5.3 and 8.8 bytes" share the last unit), a multiplier word ("10 million"),
a hedge ("about 25 ms" may be 15 % off) and a bound ("under 1.5 ms" is a threshold, not a figure).
It is found in the data when some value of it, in one of the scales its unit allows (s as ms, a share
as %, bytes as KiB...), rounds to what was written: 4.03 ms for 4.0312, 2 250/s for 2250.2, 10.0 %
for 0.0997. An integer's trailing zeros are taken as rounding ("3 900" for 3857) down to two
significant digits. Numbers inside code spans and link targets are names, not figures: skipped. The data's values are
known by kind (a key's name says ms, s, µs, a share, bytes), so that "4 s" is not found in a count
of 4 000 requests."""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

DIGITS = r"\d{1,3}(?:(?:[ \u00a0\u202f]|,(?=\d{3}(?!\d)))\d{3})+(?!\d)|\d+"
UNITS = (
    r"ms|µs|μs|us|ns|minutes?|min|seconds?|secs?|s|%|percent|points?|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB|bytes?|B|×|x|cores?"
)
NUMBER = re.compile(
    rf"(?<![\w.@$\\])(?P<sign>[-−](?=\d))?(?P<int>{DIGITS})(?P<frac>\.\d+)?"
    rf"(?:\s?(?P<mult>million|billion|thousand)\b)?"
    rf"(?:\s?(?P<unit>{UNITS})(?![\w/]))?"
)
TIMES = re.compile(r"\b(\d+) ?min(?:utes?)? (\d+) ?s\b")
PREFIX_TIMES = re.compile(r"×\s?$")
HEDGE = re.compile(r"(?:\babout|\baround|\broughly|\bnearly|\balmost|\bapproximately|\bsome|~|≈)\s*$", re.I)
# Words that make the number after them a bound, not a figure: an upper one, a lower one.
UPPER_WORDS = r"\bunder|\bbelow|\bless than|\bat most|\bup to|\bwithin|\bfewer than|\bshorter than|<|≤"
LOWER_WORDS = r"\babove|\bover|\bmore than|\bat least|\bexceed\w*|\blonger than|\bbeyond|>|≥"
BOUND = re.compile(rf"(?:{UPPER_WORDS}|{LOWER_WORDS})\s*$", re.I)
JOINER = re.compile(r"\s*(?:-|–|—|→|to|and|or|,|/)\s*(?:and\s+)?$")
MULTIPLIERS = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
CANONICAL = {
    "μs": "µs", "us": "µs", "second": "s", "seconds": "s", "sec": "s", "secs": "s", "minute": "min", "minutes": "min",
    "percent": "%", "point": "%", "points": "%", "KB": "kB", "byte": "B", "bytes": "B", "x": "×", "core": "cores",
}
# Where a written unit may come from: (the kind of a value in the data, the factor to the unit).
# The kinds: what a JSON key says its value is (ms, s, µs, a share, bytes; "count" for the rest:
# counts, rates, ratios), or the unit a number was written with in a text (None: without one, as a
# table's cell, which may be of any unit).
SOURCES = {
    "ms": (("ms", 1), ("s", 1e3), ("µs", 1e-3)),
    "s": (("s", 1), ("ms", 1e-3)),
    "min": (("s", 1 / 60),),
    "µs": (("µs", 1), ("ms", 1e3), ("s", 1e6)),
    "ns": (("µs", 1e3), ("ms", 1e6), ("s", 1e9)),
    "%": (("share", 100),),
    "B": (("bytes", 1),),
    "KiB": (("bytes", 1 / 1024),),
    "MiB": (("bytes", 1 / 1024**2), ("MB", 1)),
    "GiB": (("bytes", 1 / 1024**3), ("GB", 1)),
    "TiB": (("bytes", 1 / 1024**4),),
    "kB": (("bytes", 1e-3), ("bytes", 1 / 1024)),
    "MB": (("bytes", 1e-6), ("bytes", 1 / 1024**2), ("MiB", 1)),
    "GB": (("bytes", 1e-9), ("bytes", 1 / 1024**3), ("GiB", 1)),
    "TB": (("bytes", 1e-12), ("bytes", 1 / 1024**4)),
}
HEDGE_SHARE = 0.15


@dataclass
class Written:
    """A number in a text: its value, how far off a faithful rounding of it may be, and its unit."""

    value: float
    tolerance: float
    unit: str | None
    start: int
    end: int
    text: str
    hedged: bool = False
    bound: bool = False

    def matches(self, v: float, scale: float = 1.0) -> bool:
        return abs(v * scale - self.value) <= self.tolerance


def blank(text: str, pattern: str) -> str:
    """The text with pattern's matches replaced by spaces, so positions stay."""
    return re.sub(pattern, lambda m: " " * len(m.group(0)), text, flags=re.S)


def prose(text: str) -> str:
    """Only what a reader reads as prose: code spans, link targets, HTML comments blanked."""
    text = blank(text, r"<!--.*?-->")
    text = blank(text, r"```.*?```")
    text = blank(text, r"`[^`\n]*`")
    text = blank(text, r"\]\([^)\s]*\)")
    return blank(text, r"https?://\S+")


def _tolerance(int_part: str, frac: str | None, mult: float) -> float:
    if frac:
        return 0.55 * 10 ** -(len(frac) - 1) * mult
    digits = re.sub(r"\D", "", int_part)
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    places = min(zeros, max(len(digits) - 2, 0))
    return 0.55 * 10**places * mult


def written(text: str) -> list[Written]:
    """Every number of the text (already made prose()), with its unit, the unit of a range or list
    given to each of its numbers."""
    found: list[Written] = []
    for m in TIMES.finditer(text):
        found.append(Written(int(m.group(1)) * 60 + int(m.group(2)), 0.55, "s", m.start(), m.end(), m.group(0)))
    taken = [(w.start, w.end) for w in found]
    for m in NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        after = text[m.end() : m.end() + 1]
        if not m.group("unit") and after.isalpha():
            continue  # part of a name: 100k, 2nd
        mult = MULTIPLIERS.get(m.group("mult") or "", 1.0)
        value = float(re.sub(r"\D", "", m.group("int")) + (m.group("frac") or "")) * mult
        if m.group("sign"):
            value = -value
        unit = m.group("unit")
        before = text[max(0, m.start() - 24) : m.start()]
        if unit is None and PREFIX_TIMES.search(before):
            unit = "×"
        found.append(
            Written(
                value,
                _tolerance(m.group("int"), m.group("frac"), mult),
                CANONICAL.get(unit, unit) if unit else None,
                m.start(),
                m.end(),
                m.group(0).strip(),
                hedged=bool(HEDGE.search(before)),
                bound=bool(BOUND.search(before)),
            )
        )
    found.sort(key=lambda w: w.start)
    # A range or list takes its unit from its last number: "5-8 ms", "2.5, 5.3 and 8.8 bytes".
    for a, b in reversed(list(zip(found, found[1:]))):
        if a.unit is None and b.unit and JOINER.fullmatch(text[a.end : b.start]):
            a.unit = b.unit
            a.bound = a.bound or b.bound
    for w in found:
        if w.hedged:
            w.tolerance = max(w.tolerance, abs(w.value) * HEDGE_SHARE)
    return found


def in_text(text: str) -> list[tuple[float, str | None]]:
    """Every number a text of the data holds (a string of run.json, report.md) with its unit: as
    written() reads them, without the hedges, bounds and ranges a conclusion is read for."""
    out = []
    for m in NUMBER.finditer(text):
        mult = MULTIPLIERS.get(m.group("mult") or "", 1.0)
        value = float(re.sub(r"\D", "", m.group("int")) + (m.group("frac") or "")) * mult
        unit = m.group("unit")
        out.append((-value if m.group("sign") else value, CANONICAL.get(unit, unit) if unit else None))
    return out


@functools.lru_cache(maxsize=4096)
def kind_of_key(key: str, parents: tuple[str, ...]) -> str:
    """What a JSON value is, by its key: a duration in ms, s or µs, a share (0-1), bytes, or a count."""
    k = key.lower()
    if k.endswith("_ms") or "latency" in parents or "percentiles" in parents:
        return "ms"
    if k.endswith("_us") or k == "us_per_request":
        return "µs"
    if k.endswith("_s") or k in ("t", "seconds", "settle_s"):
        return "s"
    if "share" in k or k.endswith("hit_rate") or k in ("error_rate", "max_error_rate", "tolerance"):
        return "share"
    if any(w in k for w in ("bytes", "size", "rss", "heap", "usage", "mem")) or k in ("current", "peak"):
        return "bytes"
    return "count"


Values = list[tuple[float, str | None]]  # (value, its kind)


class Index:
    """The values of a run's data by kind, sorted, to ask whether a written number is among them."""

    def __init__(self, values: Values):
        by_kind: dict[str | None, set[float]] = {}
        for v, kind in values:
            if math.isfinite(v):
                by_kind.setdefault(kind, set()).add(v)
        self.values = {kind: sorted(vs) for kind, vs in by_kind.items()}

    def _near(self, kind: str | None, lo: float, hi: float) -> bool:
        values = self.values.get(kind, [])
        i = bisect.bisect_left(values, lo - 1e-9 * abs(lo))
        return i < len(values) and values[i] <= hi + 1e-9 * abs(hi)

    def has(self, w: Written) -> bool:
        """Whether a value of the data, of a kind the written unit may come from, rounds to it; a
        number without a unit may be any value, as it is."""
        unit = w.unit
        sources = [(unit, 1.0), (None, 1.0), *SOURCES.get(unit or "", ())]
        if unit in ("×", "cores"):
            sources.append(("count", 1.0))
        if unit is None:
            sources += [(kind, 1.0) for kind in self.values]
        for kind, scale in sources:
            lo, hi = sorted(((w.value - w.tolerance) / scale, (w.value + w.tolerance) / scale))
            if self._near(kind, lo, hi):
                return True
        return False


def leaves(doc, skip: frozenset[str] = frozenset({"spectrum", "t0_epoch"})) -> Values:
    """Every number of a JSON document with its kind: its numbers, and the numbers written in its strings."""
    out: Values = []
    stack: list[tuple[object, str, tuple[str, ...]]] = [(doc, "", ())]
    while stack:
        x, key, parents = stack.pop()
        if isinstance(x, bool) or x is None:
            continue
        if isinstance(x, (int, float)):
            out.append((float(x), kind_of_key(key, parents)))
        elif isinstance(x, str):
            if any(c.isdigit() for c in x):
                out.extend(in_text(x))
        elif isinstance(x, dict):
            inner = parents + (key,)
            stack.extend((v, str(k), inner) for k, v in x.items() if k not in skip)
            stack.extend((str(k), "", inner) for k in x if any(c.isdigit() for c in str(k)))
        elif isinstance(x, list):
            stack.extend((v, key, parents) for v in x)
    return out


def json_file(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
