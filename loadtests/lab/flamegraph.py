"""Reads an async-profiler HTML flame graph back into frames, for the report's list of the
hottest frames of a phase: what a reader would look for first in the graph, without opening it.

The HTML (async-profiler 3.x and 4.x) holds the frame names in `const cpool = [...]`, each name
sharing a prefix with the one before it (the first character says how long, offset by 32), and
one call per frame: f(key, level, left, width, ...), u(key, width, ...) for the first child of the
frame before, n(key, width, ...) for its next sibling. key >>> 3 is the name's index."""

from __future__ import annotations

import ast
import bisect
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import NamedTuple

_CALL = re.compile(r"^([fun])\(([0-9,]*)\)$", re.M)


class Frame(NamedTuple):
    level: int
    left: int
    width: int
    name: str


def frames(html: str) -> list[Frame]:
    """Every frame of the graph, the root first; ValueError when the page is not a flame graph."""
    start = html.find("const cpool = [")
    end = html.find("];", start)
    if start < 0 or end < 0:
        raise ValueError("no frame pool: not an async-profiler flame graph")
    pool = [ast.literal_eval(line.strip().rstrip(",")) for line in html[start + 15 : end].splitlines() if line.strip()]
    for i in range(1, len(pool)):
        pool[i] = pool[i - 1][: ord(pool[i][0]) - 32] + pool[i][1:]
    out: list[Frame] = []
    level = left = width = 0
    for m in _CALL.finditer(html, end):
        kind, args = m.group(1), [int(x) for x in m.group(2).split(",") if x]
        if kind == "f":
            level, left, width = args[1], left + args[2], (args[3] if len(args) > 3 and args[3] else width)
        elif kind == "u":
            level, width = level + 1, (args[1] if len(args) > 1 and args[1] else width)
        else:
            left, width = left + width, (args[1] if len(args) > 1 and args[1] else width)
        out.append(Frame(level, left, width, pool[args[0] >> 3]))
    if not out:
        raise ValueError("no frames in the flame graph")
    return out


def self_time(graph: list[Frame]) -> Counter:
    """Samples per frame name spent in the frame itself, not in what it called."""
    by_level: dict[int, list[Frame]] = defaultdict(list)
    for f in graph:
        by_level[f.level].append(f)
    spent: Counter = Counter()
    for level, here in by_level.items():
        children = sorted(by_level.get(level + 1, []), key=lambda f: f.left)
        starts = [c.left for c in children]
        for f in here:
            i = bisect.bisect_left(starts, f.left)
            inner = 0
            while i < len(children) and children[i].left < f.left + f.width:
                inner += children[i].width
                i += 1
            if f.level > 0:  # the root ("all") only adds up its children
                spent[f.name] += f.width - inner
    return spent


def hottest(path: Path, count: int = 6) -> dict:
    """The frames with the most self time in a flame graph: {samples, frames: [(name, share)]}."""
    graph = frames(Path(path).read_text(errors="replace"))
    total = graph[0].width
    top = self_time(graph).most_common(count)
    return {"samples": total, "frames": [(name, width / total) for name, width in top if total]}
