"""What the report says about a phase's flame graphs without opening them: how many samples each
holds (few samples make shares noisy), the hottest frames of CPU and allocation graphs, the
dominant monitor of the lock graphs, which lock graphs hold one monitor alone (the report names
them in a line instead of listing graphs with nothing more to see), and a differential graph
against the previous run's when that run is published beside this one."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from .. import flamegraph
from . import flamediff, fmt, runs

HOT_EVENTS = ("cpu", "itimer", "ctimer", "alloc")
# Below this a frame's share moves by several points between two graphs of the same load.
FEW_SAMPLES = 1000
# A lock graph whose one monitor, taken in one place, holds this share of its samples reads as
# "100 %": one tower, nothing more to see in it.
ONE_MONITOR_SHARE = 0.995
DIFF_SUFFIX = "-diff.html"


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


def one_monitor(frames: list[flamegraph.Frame]) -> dict | None:
    """The lock and the frame that took it when a lock graph holds that one monitor alone."""
    found = flamegraph.monitors(frames)
    total = flamegraph.samples(frames)
    if not found or not total:
        return None
    (lock, caller), n = found.most_common(1)[0]
    return {"lock": lock, "caller": short(caller), "samples": total} if n / total >= ONE_MONITOR_SHARE else None


def profile_views(
    run_dir: Path | None, phase: dict, prev_dir: Path | None, prev_phase: dict | None
) -> tuple[list[dict], dict | None]:
    """The phase's profiles for the report (each with its link, samples, hottest frames, whether it
    is a lock graph of one monitor alone, and the previous run's graph of the same node and event
    to compare with when that run lies beside this one) and the dominant monitor of its lock
    graphs."""
    views, locks = [], []
    prev_graphs = {}
    if prev_dir and prev_phase and run_dir and runs.next_to(run_dir, prev_dir):
        for p in prev_phase.get("profiles", []):
            if p.get("file"):
                prev_graphs[(p.get("node"), p.get("event"))] = prev_dir / prev_phase["dir"] / "profiles" / p["file"]
    for p in phase.get("profiles", []):
        href = f"{phase['dir']}/profiles/{p['file']}" if p.get("file") else None
        frames = read(run_dir / href) if href and run_dir else None
        view = p | {"href": href, "samples": None, "noise": "", "hot": None, "previous": None, "diff": None, "alone": None}
        if frames:
            n = flamegraph.samples(frames)
            view |= {"samples": n, "few": n < FEW_SAMPLES, "noise": noise(n)}
            view["hot"] = hot_frames(frames, p.get("event", ""))
            if p.get("event") == "lock":
                locks.append(frames)
                view["alone"] = one_monitor(frames)
            old = prev_graphs.get((p.get("node"), p.get("event")))
            if old and read(old) and not view["alone"]:
                view["previous"] = old
        views.append(view)
    return views, dominant_monitor(locks)


def _words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def one_monitor_line(profiles: list[dict], monitor: dict | None) -> str:
    """The lock graphs left out of the list because each holds one monitor alone, in one sentence."""
    alone = [p for p in profiles if p.get("alone")]
    if not alone:
        return ""
    places = {(p["alone"]["lock"], p["alone"]["caller"]) for p in alone}
    if monitor and places == {(monitor["lock"], monitor["caller"])}:
        what = "that monitor"
    else:
        what = " or ".join(f"`{lock}` taken in `{caller}`" for lock, caller in sorted(places))
    one = len(alone) == 1
    return (
        f"The lock graph{'' if one else 's'} of {_words([str(p.get('node')) for p in alone])} "
        f"{'is' if one else 'are'} not listed: {'it holds' if one else 'each holds'} {what} alone "
        f"({fmt.pct(ONE_MONITOR_SHARE, 1)} or more of {'its' if one else 'their'} "
        f"{_words([fmt.rate(p['samples']) for p in alone])} samples)."
    )


def write_diffs(run_dir: Path, view: dict, prev_dir: Path | None) -> None:
    """The differential graph of each of the phase's listed profiles that has the previous run's
    graph to compare with, written beside it; the view links it. Differential graphs an earlier
    rendering left in the phase's profiles folder, against a run no longer compared with, go."""
    written = set()
    for p in view["profiles"]:
        if not p["previous"]:
            continue
        out = run_dir / p["href"].replace(".html", DIFF_SUFFIX)
        flamediff.write(
            run_dir / p["href"], p["previous"], out,
            f"{view['label']}, {p.get('node')} {p.get('event')}",
            f"the previous run's {view['label']}, {p.get('node')} {p.get('event')}"
            + (f" ({prev_dir.name})" if prev_dir else ""),
        )
        p["diff"] = out.relative_to(run_dir).as_posix()
        written.add(out)
    for folder in {(run_dir / p["href"]).parent for p in view["profiles"] if p["href"]}:
        for stale in folder.glob(f"*{DIFF_SUFFIX}"):
            if stale not in written:
                stale.unlink()
