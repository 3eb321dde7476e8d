"""What the report says about a phase's flame graphs without opening them: how many samples each
holds (few samples make shares noisy), the hottest frames of CPU and allocation graphs, the
dominant monitor of the lock graphs, and a differential graph against the previous run's."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from .. import flamegraph
from . import flamediff

HOT_EVENTS = ("cpu", "itimer", "ctimer", "alloc")
# Below this a frame's share moves by several points between two graphs of the same load.
FEW_SAMPLES = 1000


def read(path: Path) -> list[flamegraph.Frame] | None:
    """The graph's frames, or None when the file is missing or no async-profiler graph."""
    if not path.is_file():
        return None
    try:
        return flamegraph.frames(path.read_text(errors="replace"))
    except (OSError, ValueError, SyntaxError):
        return None


def short(name: str) -> str:
    """A Java frame without its package (a/b/C.m -> C.m); other names as they are."""
    return name.rsplit("/", 1)[-1][:70]


def hot_frames(graph: Path | list[flamegraph.Frame], event: str) -> dict | None:
    """The hottest frames of a CPU or allocation flame graph (a file, or its frames) by self time,
    names without their Java package; None for other events (wall and lock graphs are mostly
    threads waiting) or a graph that cannot be read."""
    if event not in HOT_EVENTS:
        return None
    frames = read(graph) if isinstance(graph, Path) else graph
    if not frames:
        return None
    total = flamegraph.samples(frames)
    top = [(short(name), width / total) for name, width in flamegraph.self_time(frames).most_common(6) if total]
    text = ", ".join(f"`{name}` {share * 100:.1f} %" for name, share in top)
    return {"samples": total, "frames": top, "text": text}


def noise(samples: int) -> str:
    """How far a frame's share may move by chance in a graph of this many samples: at most one
    standard error of a share, 0.5/sqrt(n), in points."""
    return f"±{50 / math.sqrt(samples):.0f} points" if samples else "–"


def dominant_monitor(graphs: list[list[flamegraph.Frame]]) -> dict | None:
    """The lock the phase's threads waited for most, over its lock graphs (all nodes): its class,
    the frame that took it, and its share of every lock sample."""
    found: Counter = Counter()
    total = 0
    for g in graphs:
        found += flamegraph.monitors(g)
        total += flamegraph.samples(g)
    if not found or not total:
        return None
    (lock, caller), n = found.most_common(1)[0]
    return {
        "lock": lock,
        "caller": short(caller),
        "samples": n,
        "total": total,
        "share": n / total,
        "graphs": len(graphs),
    }


def profile_views(
    run_dir: Path | None, phase: dict, prev_dir: Path | None, prev_phase: dict | None
) -> tuple[list[dict], dict | None]:
    """The phase's profiles for the report (each with its link, samples, hottest frames and the
    previous run's graph of the same node and event to compare with) and the dominant monitor of
    its lock graphs."""
    views, locks = [], []
    prev_graphs = {}
    if prev_dir and prev_phase:
        for p in prev_phase.get("profiles", []):
            if p.get("file"):
                prev_graphs[(p.get("node"), p.get("event"))] = prev_dir / prev_phase["dir"] / "profiles" / p["file"]
    for p in phase.get("profiles", []):
        href = f"{phase['dir']}/profiles/{p['file']}" if p.get("file") else None
        frames = read(run_dir / href) if href and run_dir else None
        view = p | {"href": href, "samples": None, "noise": "", "hot": None, "previous": None, "diff": None}
        if frames:
            n = flamegraph.samples(frames)
            view |= {"samples": n, "few": n < FEW_SAMPLES, "noise": noise(n)}
            view["hot"] = hot_frames(frames, p.get("event", ""))
            if p.get("event") == "lock":
                locks.append(frames)
            old = prev_graphs.get((p.get("node"), p.get("event")))
            if old and read(old):
                view["previous"] = old
        views.append(view)
    return views, dominant_monitor(locks)


def write_diffs(run_dir: Path, view: dict, prev_dir: Path | None) -> None:
    """The differential graph of each of the phase's profiles that has the previous run's graph to
    compare with, written beside it; the view links it."""
    for p in view["profiles"]:
        if not p["previous"]:
            continue
        out = run_dir / p["href"].replace(".html", "-diff.html")
        flamediff.write(
            run_dir / p["href"], p["previous"], out,
            f"{view['label']}, {p.get('node')} {p.get('event')}",
            f"the previous run's {view['label']}, {p.get('node')} {p.get('event')}"
            + (f" ({prev_dir.name})" if prev_dir else ""),
        )
        p["diff"] = out.relative_to(run_dir).as_posix()
