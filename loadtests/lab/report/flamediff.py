"""A differential flame graph: this run's graph, each frame as wide as this run's samples in it,
coloured by how its share of all samples changed against the previous run's graph of the same
phase, node and event: red where this run spent a larger share there, blue a smaller one, white
the same. Shares, not samples, so runs of different lengths and rates compare. One self-contained
HTML page with an inline SVG; hover a frame for its figures."""

from __future__ import annotations

import html
import re
from pathlib import Path

from .. import flamegraph

WIDTH = 1200  # px of the whole graph
ROW = 16  # px per stack level
MIN_PX = 0.25  # narrower frames are left out: invisible, and they would only make the page heavy
RED, BLUE, WHITE = (214, 39, 40), (31, 119, 180), (255, 255, 255)


def _mix(to: tuple[int, int, int], strength: float) -> str:
    s = max(0.0, min(1.0, strength))
    r, g, b = (round(w + (t - w) * s) for w, t in zip(WHITE, to))
    return f"rgb({r},{g},{b})"


def colour(change: float, scale: float) -> str:
    """The fill of a frame whose share changed by `change` (a fraction of all samples), full
    colour at `scale` or more."""
    if not scale or not change:
        return _mix(RED, 0)
    return _mix(RED if change > 0 else BLUE, abs(change) / scale)


# Generated classes (lambdas, method handles) carry their address, new in every JVM: 0x...
_ADDRESS = re.compile(r"\.?0x[0-9a-f]{6,}")


def _stable(path: tuple[str, ...]) -> tuple[str, ...]:
    """A stack as two runs can share it: generated classes without their address."""
    return tuple(_ADDRESS.sub("", name) for name in path)


def _stacks(graph: list[flamegraph.Frame]) -> dict[tuple[str, ...], int]:
    out: dict[tuple[str, ...], int] = {}
    for path, width in flamegraph.stacks(graph).items():
        key = _stable(path)
        out[key] = out.get(key, 0) + width
    return out


def compare(this: list[flamegraph.Frame], prev: list[flamegraph.Frame]) -> list[dict]:
    """Each frame of this graph with its share of this run's samples and of the previous run's
    (0 where the previous graph had no such stack)."""
    total, prev_total = flamegraph.samples(this), flamegraph.samples(prev)
    before = _stacks(prev)
    out, path = [], []
    for f in this:
        del path[f.level :]
        path.append(f.name)
        share = f.width / total if total else 0.0
        old = before.get(_stable(tuple(path)), 0) / prev_total if prev_total else 0.0
        out.append({"frame": f, "share": share, "prev_share": old, "change": share - old})
    return out


def before_only(prev: list[flamegraph.Frame], now: dict[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
    """The previous graph's stacks this one lacks, each where it begins (not its callees again)."""
    return {
        path: width
        for path, width in _stacks(prev).items()
        if path not in now and path[:-1] in now
    }


def page(this_path: Path, prev_path: Path, title: str, prev_title: str) -> str:
    """The differential graph of two async-profiler HTML graphs as an HTML page."""
    this = flamegraph.frames(this_path.read_text(errors="replace"))
    prev = flamegraph.frames(prev_path.read_text(errors="replace"))
    rows = compare(this, prev)
    total, prev_total = flamegraph.samples(this), flamegraph.samples(prev)
    # Full colour at the largest change but at least 5 points: noise of a few samples stays pale.
    scale = max([abs(r["change"]) for r in rows[1:]] + [0.05])
    depth = max(f.level for f in this) + 1
    height = depth * ROW
    shapes = []
    for r in rows:
        f = r["frame"]
        w = f.width / total * WIDTH
        if w < MIN_PX:
            continue
        x, y = f.left / total * WIDTH, height - (f.level + 1) * ROW
        ratio = f"×{r['share'] / r['prev_share']:.2f}" if r["prev_share"] else "not in the previous graph"
        tip = (
            f"{f.name}\nthis run: {r['share'] * 100:.2f} % ({f.width} of {total} samples)\n"
            f"previous run: {r['prev_share'] * 100:.2f} %\nchange: {r['change'] * 100:+.2f} points ({ratio})"
        )
        label = ""
        if w > 30:
            chars = int((w - 4) / 6.5)
            name = f.name if len(f.name) <= chars else f.name[: max(0, chars - 2)] + ".."
            label = f'<text x="{x + 2:.1f}" y="{y + ROW - 4:.1f}">{html.escape(name)}</text>'
        shapes.append(
            f'<g><title>{html.escape(tip)}</title><rect x="{x:.2f}" y="{y:.1f}" width="{w:.2f}" '
            f'height="{ROW - 1}" fill="{colour(r["change"], scale)}"/>{label}</g>'
        )
    now = _stacks(this)
    gone = sorted(
        ((width / prev_total, path) for path, width in before_only(prev, now).items()), reverse=True
    )[:5]
    gone_text = "".join(
        f"<li>{share * 100:.2f} %: <code>{html.escape(' ; '.join(path[-3:]))}</code></li>" for share, path in gone
    )
    heading = html.escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>differential flame graph: {heading}</title>
<style>
  body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1em; color: #1d1d1f; }}
  svg text {{ font: 11px monospace; fill: #111; pointer-events: none; }}
  svg rect {{ stroke: #fff; stroke-width: .5; }}
  svg g:hover rect {{ stroke: #000; }}
  .key span {{ display: inline-block; width: 3em; height: 1em; vertical-align: middle; border: 1px solid #ccc; }}
</style>
</head>
<body>
<h1 style="font-size:1.3em">Differential flame graph: {heading}</h1>
<p>Against {html.escape(prev_title)}. Each frame is as wide as this run's samples in it ({total} in all;
the previous graph held {prev_total}). Its colour is how its share of all samples changed:
<span class="key"><span style="background:{_mix(RED, 1)}"></span></span> red, a larger share in this run;
<span class="key"><span style="background:{_mix(BLUE, 1)}"></span></span> blue, a smaller one; white, the same.
Full colour at {scale * 100:.1f} points of change. Frames the previous run did not have are red by their whole share;
what only the previous run had is not drawn. Hover a frame for its figures.</p>
{f"<p>The largest stacks only the previous run had (their last frames):</p><ul>{gone_text}</ul>" if gone else ""}
<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}">
{chr(10).join(shapes)}
</svg>
</body>
</html>
"""


def write(this_path: Path, prev_path: Path, out: Path, title: str, prev_title: str) -> Path:
    out.write_text(page(this_path, prev_path, title, prev_title))
    return out
