"""How the report writes numbers: a dash for a figure that is missing, never "nan"."""

from __future__ import annotations

import math


def missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def ms(v) -> str:
    """Latency in ms with three significant digits or so: 0.412, 3.20, 12.4, 950."""
    if missing(v):
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 1 else f"{v:.3f}"



def each_operation(p99s: dict[str, float]) -> str:
    """" (get 3.36 ms, put 3.30 ms)": each operation's p99 beside a mixed phase's, or nothing."""
    return " (" + ", ".join(f"{op} {ms(v)} ms" for op, v in p99s.items()) + ")" if p99s else ""

def rate(v) -> str:
    """A count or a rate, thousands apart: 15 188."""
    if missing(v):
        return "–"
    return f"{v:,.0f}".replace(",", " ")


def num(v, digits: int = 2) -> str:
    if missing(v):
        return "–"
    return f"{v:.{digits}f}"


def pct(v, digits: int = 2) -> str:
    if missing(v):
        return "–"
    return f"{v * 100:.{digits}f}%"


def ratio(this, prev) -> str:
    """This run's figure as a multiple of the previous one's: ×1.23, ×0.80 (a reader compares
    latencies that moved 70-fold more easily as ×70 than as +6 900 %)."""
    if missing(this) or missing(prev) or not prev:
        return "–"
    r = this / prev
    return f"×{r:.2f}" if r < 10 else f"×{r:.1f}" if r < 100 else f"×{r:.0f}"


def seconds(v, digits: int = 1) -> str:
    return "–" if missing(v) else f"{v:.{digits}f} s"


def md_text(v) -> str:
    """Text from a run (an error, a label) made safe for a Markdown table cell: no raw HTML, no
    column break."""
    return str(v).replace("<", "&lt;").replace("|", "\\|")


FILTERS = {"ms": ms, "rate": rate, "num": num, "pct": pct, "ratio": ratio, "seconds": seconds, "text": md_text}


def listing(items: list[str], conjunction: str = "and") -> str:
    """"a", "a and b", "a, b and c" (or another conjunction)."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def duration(seconds: float) -> str:
    """"30 min", "4 min 51 s", "40 s"."""
    m, s = divmod(int(round(seconds)), 60)
    if not m:
        return f"{s} s"
    return f"{m} min" + (f" {s} s" if s else "")
