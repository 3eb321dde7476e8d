"""Reads an async-profiler HTML flame graph back into frames, for what the report says about a
graph without opening it: how many samples it holds, its hottest frames, a lock graph's dominant
monitor, and the stacks a differential graph compares.

The HTML (async-profiler 3.x and 4.x) holds the frame names in `const cpool = [...]`, each name
sharing a prefix with the one before it (the first character says how long, offset by 32), and
one call per frame: f(key, level, left, width, ...), u(key, width, ...) for the first child of the
frame before, n(key, width, ...) for its next sibling. key >>> 3 is the name's index."""

from __future__ import annotations

import ast
import re
from collections import Counter
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


def samples(graph: list[Frame]) -> int:
    """What the graph holds: the root's width, every sample (or lock event, or allocation) in it."""
    return graph[0].width


def stacks(graph: list[Frame]) -> dict[tuple[str, ...], int]:
    """Samples per stack, root first, each counting everything under it. async-profiler writes the
    frames depth first, so the frames before one at a lower level are its callers."""
    out: dict[tuple[str, ...], int] = {}
    path: list[str] = []
    for f in graph:
        del path[f.level :]
        path.append(f.name)
        key = tuple(path)
        out[key] = out.get(key, 0) + f.width
    return out


def self_stacks(graph: list[Frame]) -> Counter:
    """Samples per stack spent in its last frame itself, not in what it called."""
    total = stacks(graph)
    inner: Counter = Counter()
    for path, width in total.items():
        if len(path) > 1:
            inner[path[:-1]] += width
    return Counter({path: width - inner[path] for path, width in total.items() if width > inner[path]})


def self_time(graph: list[Frame]) -> Counter:
    """Samples per frame name spent in the frame itself, not in what it called."""
    spent: Counter = Counter()
    for path, width in self_stacks(graph).items():
        if len(path) > 1:  # the root ("all") only adds up its children
            spent[path[-1]] += width
    return spent


def hottest(path: Path, count: int = 6) -> dict:
    """The frames with the most self time in a flame graph: {samples, frames: [(name, share)]}."""
    graph = frames(Path(path).read_text(errors="replace"))
    total = samples(graph)
    top = self_time(graph).most_common(count)
    return {"samples": total, "frames": [(name, width / total) for name, width in top if total]}


def monitors(graph: list[Frame]) -> Counter:
    """A lock graph's contended monitors: samples per (lock class, the frame that took it). Every
    stack of a lock profile ends in the class of the lock it waited for, so the self time is
    all there."""
    out: Counter = Counter()
    for path, width in self_stacks(graph).items():
        if len(path) > 1:
            out[(path[-1], path[-2] if len(path) > 2 else "")] += width
    return out
