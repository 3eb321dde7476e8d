"""A phase second by second as one figure of panels sharing the time axis (PNG bytes): the load's
rate, its latency (the client's per second, the nodes' per interval), its errors, the nodes' CPU and
GC pauses, their healing, and the RocksDB events. Across every panel: the faults, the profiler's
windows, and the time the load was not running, shaded. A second the load ran for only part of
(its first when the tool started late, its last) is left out of the rate and latency lines: its
count is no rate, and its latency is that of the last requests only."""

from __future__ import annotations

import math

from matplotlib.patches import Patch

from . import fmt, timeline
from .plots import FAULT_COLOR, SLO_STYLE, _log_ms, _png, colour, plt

HEIGHTS = {"rate": 1.0, "latency": 1.3, "errors": 0.7, "cpu": 1.0, "gc": 0.8, "healing": 0.9, "events": 0.5}
PROFILE_COLORS = {"cpu": "tab:green", "alloc": "tab:purple", "lock": "tab:brown", "wall": "tab:cyan"}
IDLE_COLOR = "0.55"


def _server(ts: dict) -> list[dict]:
    return (ts.get("server") or {}).get("seconds") or []


def panels(ts: dict) -> list[str]:
    """The panels a phase's time series fills, top to bottom: the rate (the load tool's, or the
    nodes' when the tool counted nothing per second), the latency (the tool's per second, the
    nodes' or both), the errors (the tool's), the nodes' CPU and GC pauses, their healing (when a
    node missed writes) and the RocksDB events when the nodes were sampled."""
    load = ts.get("load") or {}
    seconds = load.get("seconds") or []
    server = _server(ts)
    nodes = ts.get("nodes") or {}
    out = []
    if seconds or any(s.get("requests") for s in server):
        out.append("rate")
    client_latency = load.get("latency") and any(s.get("p99_ms") is not None for s in seconds)
    if client_latency or any(s.get("p99_ms") is not None for s in server):
        out.append("latency")
    if seconds:
        out.append("errors")
    if any(r.get("cpu_cores") is not None for rows in nodes.values() for r in rows):
        out.append("cpu")
    if any(r.get("gc_pause_ms") is not None for rows in nodes.values() for r in rows):
        out.append("gc")
    healing = ("hints_pending", "hints_replayed", "records_repaired")
    if any(r.get(k) for rows in nodes.values() for r in rows for k in healing):
        out.append("healing")
    if ts.get("events"):
        out.append("events")
    return out


def _intervals(ax, rows: list[dict], ys: list[float], step: float, **style) -> None:
    """Values that each hold for an interval (a row from its "t", until the next row's or for its
    span_s or step), drawn as steps from its start to its end."""
    if rows:
        starts = [r["t"] for r in rows]
        ax.plot(starts + [starts[-1] + rows[-1].get("span_s", step)], list(ys) + [ys[-1]], drawstyle="steps-post", **style)


def _rate(ax, ts: dict, span, step: float, requested_rate: float | None) -> None:
    seconds = timeline.whole((ts.get("load") or {}).get("seconds") or [], span, step)
    label = "achieved"
    if not seconds:
        seconds, label = timeline.whole(_server(ts), span, step), "answered by the nodes"
    rates = [r / s.get("span_s", step) for r, s in zip(timeline.values(seconds, "requests"), seconds)]
    _intervals(ax, seconds, rates, step, color="tab:blue", label=label)
    if requested_rate:
        ax.axhline(requested_rate, color="gray", linestyle="--", linewidth=1,
                   label=f"requested {fmt.rate(requested_rate)}/s")
    ax.set_ylabel("requests/s")
    ax.set_ylim(0, max([1.0, requested_rate or 0.0] + [r for r in rates if not math.isnan(r)]) * 1.12)


def _latency(ax, ts: dict, span, step: float, slo_ms: float | None) -> None:
    load = ts.get("load") or {}
    if load.get("latency"):
        seconds = timeline.whole(load.get("seconds") or [], span, step)
        lines = (("max_ms", "max", "tab:gray"), ("p99_ms", "p99", "tab:orange"), ("p50_ms", "p50", "tab:blue"))
        for key, name, color in lines:
            _intervals(ax, seconds, timeline.values(seconds, key), step, color=color, linewidth=1.2,
                       label=f"{name}, client")
    server = timeline.whole(_server(ts), span, step)
    for key, name, color in (("p99_ms", "p99", "tab:red"), ("p50_ms", "p50", "tab:cyan")):
        _intervals(ax, server, timeline.values(server, key), step, color=color, linewidth=1.2, linestyle="--",
                   label=f"{name}, at the nodes")
    if slo_ms:
        ax.axhline(slo_ms, label=f"SLO {slo_ms:g} ms", **SLO_STYLE)
    _log_ms(ax, "latency, ms (log)")


def _errors(ax, ts: dict, step: float) -> None:
    seconds = (ts.get("load") or {}).get("seconds") or []
    errors = [e / step for e in timeline.values(seconds, "errors")]
    ax.bar([s["t"] + step / 2 for s in seconds], errors, width=step * 0.9, color="tab:red", label="failed")
    ax.set_ylabel("errors/s")
    ax.set_ylim(bottom=0, top=max([1.0] + [e for e in errors if not math.isnan(e)]) * 1.15)


def _per_node(ax, nodes: dict, key: str, label: str, step: float, downs: bool) -> None:
    for i, (name, rows) in enumerate(sorted(nodes.items())):
        _intervals(ax, rows, timeline.values(rows, key), step, color=colour(i), label=name)
        down = [r["t"] + step / 2 for r in rows if r.get("up") is False]
        if down and downs:
            ax.plot(down, [0] * len(down), "x", color=colour(i), markersize=5, label=f"{name} did not answer")
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)


def _healing(ax, nodes: dict, step: float) -> None:
    for i, (name, rows) in enumerate(sorted(nodes.items())):
        _intervals(ax, rows, timeline.values(rows, "hints_pending"), step, color=colour(i),
                   label=f"{name} hints pending")
    totals_of = (
        ("hints_replayed", "hints replayed/s, all nodes", "--"),
        ("records_repaired", "records repaired/s, all nodes", ":"),
    )
    for key, label, style in totals_of:
        totals: dict[float, float] = {}
        for rows in nodes.values():
            for r in rows:
                if r.get(key) is not None:
                    totals[r["t"]] = totals.get(r["t"], 0.0) + r[key] / step
        if any(totals.values()):
            when = [{"t": t} for t in sorted(totals)]
            _intervals(ax, when, [totals[w["t"]] for w in when], step, color="black", linestyle=style,
                       linewidth=1, label=label)
    ax.set_ylabel("hints")
    ax.set_ylim(bottom=0)


def _events(ax, events: list[dict], nodes: dict) -> None:
    names = sorted({e.get("node", "?") for e in events} | set(nodes))
    for kind, marker, color in (("flush", "|", "tab:purple"), ("compaction", "s", "tab:brown")):
        hits = [e for e in events if e.get("kind") == kind]
        if hits:
            ax.plot(
                [e["t"] for e in hits], [names.index(e.get("node", "?")) for e in hits], marker,
                color=color, markersize=7 if marker == "|" else 4, linestyle="none", label=f"RocksDB {kind}",
            )
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.set_ylabel("events")


def _shade(axes: list, phase: dict, span, start: float, end: float) -> list[Patch]:
    """The faults, the profiler's windows and the time the load was not running, shaded across
    every panel; the faults named on the first. Returns the legend entries of the shading."""
    keys = []
    if span:
        idle = [(start, span[0]), (span[1], end)]
        for a, b in idle:
            if b - a > 0.05:
                for ax in axes:
                    ax.axvspan(a, b, color=IDLE_COLOR, alpha=0.15, linewidth=0)
        if any(b - a > 0.05 for a, b in idle):
            keys.append(Patch(color=IDLE_COLOR, alpha=0.3, label="load not running"))
    for event, a, b in timeline.profile_windows(phase):
        color = PROFILE_COLORS.get(event, "tab:olive")
        for ax in axes:
            ax.axvspan(a, b, color=color, alpha=0.1, linewidth=0)
        if event not in [k.get_label().removeprefix("profiler: ") for k in keys]:
            keys.append(Patch(color=color, alpha=0.25, label=f"profiler: {event}"))
    for f in timeline.faults(phase):
        w = timeline.window(f)
        if not w:
            continue
        for ax in axes:
            ax.axvspan(w[0], w[1], color=FAULT_COLOR, alpha=0.12, linewidth=0)
        axes[0].annotate(
            timeline.short(f), (w[0], 1), xycoords=("data", "axes fraction"), xytext=(2, -10),
            textcoords="offset points", fontsize=8, color=FAULT_COLOR,
        )
    return keys


def timeseries_plot(title: str, ts: dict, phase: dict, requested_rate: float | None, slo_ms: float | None) -> bytes:
    """The figure of a phase's time series (timeseries.json) with its phase record (faults, profiles)."""
    return _png(timeseries_figure(title, ts, phase, requested_rate, slo_ms))


def timeseries_figure(title: str, ts: dict, phase: dict, requested_rate: float | None, slo_ms: float | None):
    shown = panels(ts)
    fig, grid = plt.subplots(
        len(shown), 1, sharex=True, dpi=100, figsize=(10, 1.7 * sum(HEIGHTS[p] for p in shown) + 0.6),
        gridspec_kw={"height_ratios": [HEIGHTS[p] for p in shown]}, squeeze=False,
    )
    axes = dict(zip(shown, grid[:, 0]))
    step = ts.get("interval_s") or 1.0
    span = timeline.load_span(ts, phase)
    nodes = ts.get("nodes") or {}
    rows = ((ts.get("load") or {}).get("seconds") or []) + _server(ts) + [r for rs in nodes.values() for r in rs]
    start = min([0.0] + [r["t"] for r in rows])
    end = max([r["t"] + step for r in rows] + [step])

    if "rate" in axes:
        _rate(axes["rate"], ts, span, step, requested_rate)
    if "latency" in axes:
        _latency(axes["latency"], ts, span, step, slo_ms)
    if "errors" in axes:
        _errors(axes["errors"], ts, step)
    if "cpu" in axes:
        _per_node(axes["cpu"], nodes, "cpu_cores", "CPU, cores", step, downs=True)
    if "gc" in axes:
        _per_node(axes["gc"], nodes, "gc_pause_ms", "GC pauses,\nms in each second", step, downs=False)
    if "healing" in axes:
        _healing(axes["healing"], nodes, step)
    if "events" in axes:
        _events(axes["events"], ts["events"], nodes)
    shading = _shade(list(axes.values()), phase, span, start, end)
    for i, ax in enumerate(axes.values()):
        ax.grid(True, which="both", alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        handles += shading if i == 0 else []
        if handles:
            # Beside the panel, never over the data.
            ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1), borderaxespad=0)
    last = list(axes.values())[-1]
    last.set_xlim(start, end)
    last.set_xlabel("seconds since the phase's load started")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
