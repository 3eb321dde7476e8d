"""The scale benchmark's figures against the key count (log x axis), as PNG bytes: one figure per
kind of figure, a line per series, points only where the run has a value."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from . import fmt, plots  # noqa: E402

Series = tuple[str, Callable[[dict], float | None]]

# file name, title, y label, series, y on a log scale, a horizontal line (value, label) or None
FIGURES: list[tuple[str, str, str, list[Series], bool, tuple | None]] = [
    ("scale-fill-rate.png", "fill rate", "keys/s", [("fill", lambda r: r["fill_rate"])], False, None),
    ("scale-p99.png", "GET and PUT latency", "ms (log scale)",
     [("GET p99", lambda r: r["get"]["p99"]), ("PUT p99", lambda r: r["put"]["p99"]),
      ("GET p50", lambda r: r["get"]["p50"]), ("PUT p50", lambda r: r["put"]["p50"])], True, None),
    ("scale-cpu.png", "server CPU per request", "µs",
     [("status", lambda r: r["status"]["us"]), ("GET", lambda r: r["get"]["us"]), ("PUT", lambda r: r["put"]["us"])],
     False, None),
    ("scale-memory.png", "the node's memory", "MiB",
     [("heap used", lambda r: r["heap_used_mib"]), ("RSS", lambda r: r["rss_mib"]),
      ("cgroup memory.current (page cache included)", lambda r: r["cgroup_current_mib"]),
      ("cgroup memory.peak (page cache included)", lambda r: r["cgroup_peak_mib"])],
     False, None),
    # On a log scale: sizes ten times apart each, and the space over the values' own size readable at every one.
    ("scale-disk.png", "disk use", "MiB (log scale)",
     [("data directory after the fill", lambda r: r["disk_after_fill_mib"]),
      ("of it write-ahead logs", lambda r: r["wal_after_fill_mib"]),
      ("data directory after the PUT phase", lambda r: r["disk_mib"]),
      ("values (keys x value size)", lambda r: r["values_mib"])],
     True, None),
    ("scale-write-amplification.png", "write amplification of each fill step", "bytes written per value byte",
     [("the node's process (/proc/PID/io)", lambda r: r["write_amplification"]),
      ("RocksDB flush + compaction", lambda r: r["rocksdb_write_amplification"])], False,
     (1.0, "1: each value byte written once")),
    ("scale-cache.png", "block-cache hit rates and event-loop share (GET phase)", "share",
     [("data-block hit rate", lambda r: r["data_hit_rate"]), ("all-block hit rate", lambda r: r["all_hit_rate"]),
      ("GETs served on the event loop", lambda r: r["event_loop_share"])], False, (1.0, "")),
]


def figure(title: str, ylabel: str, rows: list[dict], series: list[Series], log_y: bool, line) -> bytes:
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    drawn = 0
    for i, (name, get) in enumerate(series):
        xs = [r["keys"] for r in rows if not fmt.missing(get(r))]
        ys = [get(r) for r in rows if not fmt.missing(get(r))]
        if xs:
            ax.plot(xs, ys, marker="o", label=name, color=plots.colour(i))
            drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "not measured in this run (the node exports no such figure)", ha="center",
                va="center", transform=ax.transAxes, color="grey")
    ax.set_xscale("log")
    keys = [r["keys"] for r in rows]
    ax.xaxis.set_major_locator(FixedLocator(keys))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt.rate(x)))
    if len(keys) == 1:
        ax.set_xlim(keys[0] / 2, keys[0] * 2)
    if log_y and drawn:
        ax.set_yscale("log")
        plots.log_axis(ax.yaxis)
    elif drawn:
        ax.set_ylim(bottom=0)
    if line is not None and drawn:
        ax.axhline(line[0], color="grey", linestyle=":", linewidth=1, label=line[1] or None)
    ax.set_xlabel("keys (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(fontsize=8)
    return plots._png(fig)


def write(view: dict, plots_dir) -> None:
    """Every figure into plots_dir; view["plots"] gets their names and titles."""
    rows = view["rows"]
    for name, title, ylabel, series, log_y, line in FIGURES:
        (plots_dir / name).write_bytes(figure(title, ylabel, rows, series, log_y, line))
        view["plots"].append({"file": f"plots/{name}", "title": title})
