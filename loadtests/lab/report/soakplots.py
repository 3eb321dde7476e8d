"""A soak's figures, one per quantity over the whole soak, a line per node: p99 (every request's,
per sampling interval, from the interval log), then each resource lab.resources samples. The first
and the last window are shaded; each node's level in them (the median the verdict compares) is a
bold segment, and the limit the last window is held to a dashed one."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .. import hdr, soakdrift  # noqa: E402
from . import plots  # noqa: E402

WINDOW_SHADE = {"color": "tab:gray", "alpha": 0.12, "linewidth": 0}


def p99_per_interval(hlog: Path, step_s: float) -> tuple[list[float], list[float]]:
    """p99 of every request of each step_s of the log: (starts, ms)."""
    starts: list[float] = []
    values: list[float] = []
    merged, current = None, None
    for start, h in hdr.read_log(hlog):
        bucket = math.floor(start / step_s) * step_s
        if bucket != current:
            if merged is not None and merged.get_total_count():
                starts.append(current)
                values.append(hdr.percentiles_ms(merged, [99])[99])
            merged, current = hdr.histogram(hdr.SECOND_DIGITS), bucket
        merged.add(h)
    if merged is not None and merged.get_total_count():
        starts.append(current)
        values.append(hdr.percentiles_ms(merged, [99])[99])
    return starts, values


def _windows(ax, d: dict) -> None:
    for span in (d["first"], d["last"]):
        ax.axvspan(*span, **WINDOW_SHADE)


def _levels(ax, j: dict, d: dict, scale: float, color: str) -> None:
    """The node's first and last level as bold segments over their windows, its limit dashed."""
    for key, span in (("first", d["first"]), ("last", d["last"])):
        if j.get(key) is not None:
            ax.plot(span, [j[key] / scale] * 2, color=color, linewidth=3, alpha=0.8, solid_capstyle="butt")
    if j.get("limit") is not None:
        ax.plot(d["last"], [j["limit"] / scale] * 2, color=color, linestyle="--", linewidth=1.2)


def figure(title: str, ylabel: str, d: dict, lines: list[tuple[str, list[float], list[float], dict | None]],
           scale: float = 1.0, log_y: bool = False, slo: float | None = None) -> bytes:
    """lines: (name, times, values, the verdict's judgement of it or None)."""
    fig, ax = plt.subplots(figsize=(10, 3.4), dpi=100)
    _windows(ax, d)
    drawn = 0
    for i, (name, ts, ys, j) in enumerate(lines):
        pts = [(t, y / scale) for t, y in zip(ts, ys) if y is not None and 0 <= t <= d["duration_s"]]
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=plots.colour(i), linewidth=1.1, label=name)
        if j:
            _levels(ax, j, d, scale, plots.colour(i))
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", transform=ax.transAxes, color="grey")
    if slo:
        ax.axhline(slo, label=f"SLO {slo:g} ms", **plots.SLO_STYLE)
    if log_y and drawn:
        plots._log_ms(ax, ylabel)
    else:
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
    ax.set_xlim(0, d["duration_s"])
    ax.set_xlabel("seconds since the soak's load started (shaded: the windows compared; bold: their medians, "
                  "dashed: the limit)", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    if drawn:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1), borderaxespad=0)
    fig.tight_layout()
    return plots._png(fig)


def write(run: dict, view: dict, plots_dir: Path) -> None:
    """Every figure of the soak into plots_dir; view["plots"] gets their names and titles."""
    d = view["drift"]
    run_dir = Path(run["dir"])
    phase = soakdrift.soak_phase(run)
    step = run["config"]["soak"]["sample_s"]
    figures = {f["tolerance"].figure: f for f in d["figures"]}
    out = []
    if d.get("latency") is not None:
        ts, ys = p99_per_interval(run_dir / phase["hlog"], step)
        j = figures["p99_ms"]["nodes"].get("all")
        png = figure(f"p99 of every request, per {step} s", "p99, ms (log scale)", d,
                     [("p99", ts, ys, j)], log_y=True, slo=run["config"].get("slo_p99_ms"))
        out.append(("soak-p99.png", "p99 over the soak", png))
    series = soakdrift.load_resources(run_dir, phase)
    for tol in soakdrift.TOLERANCES:
        f = figures[tol.figure]
        lines = []
        for node, rows in sorted((series or {}).get("nodes", {}).items()):
            lines.append((node, [r["t"] for r in rows], [r.get(tol.figure) for r in rows], f["nodes"].get(node)))
        scale = soakdrift.MIB if tol.unit == "MiB" else 1.0
        png = figure(f"{tol.title}, per node (every {step} s)", tol.unit if tol.unit != "files" else "open files",
                     d, lines, scale=scale)
        out.append((f"soak-{tol.figure.removesuffix('_bytes').replace('_', '-')}.png", f"{tol.title} over the soak", png))
    for name, what, png in out:
        (plots_dir / name).write_bytes(png)
        view["plots"].append({"file": f"plots/{name}", "title": what})
