"""The report's figures, as PNG bytes. Conventions every plot follows: latency on a log scale (a
tail 100 times the median leaves the median readable), the SLO drawn where latency is, and axes
that end where the data does."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from . import fmt, timeline  # noqa: E402

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def colour(i: int) -> str:
    """The i-th series' colour, the same in every plot of a report."""
    return COLORS[i % len(COLORS)]


SLO_STYLE = {"color": "tab:red", "linestyle": ":", "linewidth": 1.2}
FAULT_COLOR = "tab:red"


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _log_ms(ax, label: str = "latency, ms (log scale)") -> None:
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.set_ylabel(label)


# ------------------------------------------------------------------------------- percentile spectra

PERCENTILE_TICKS = [1, 2, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
PERCENTILE_LABELS = ["0%", "50%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]


def spectrum_xy(spectrum: list, requests: int | None = None) -> tuple[list[float], list[float]]:
    """HdrHistogram's percentile spectrum as points (1/(1-p), ms), up to where the requests end:
    of N requests the highest percentile a measurement shows is about 1 - 1/N (99.97 % of 3 000),
    and points beyond it would only repeat the maximum."""
    end = requests if requests else math.inf
    xs, ys = [], []
    for p, v in spectrum:
        if v is None or p >= 1 or v <= 0:
            continue
        x = 1 / (1 - p)
        if x > end * (1 + 1e-9):
            continue
        xs.append(x)
        ys.append(v)
    return xs, ys


def percentile_label(x: float) -> str:
    """The percentile at x = 1/(1-p), with as many decimals as it needs: 99.97%."""
    p = (1 - 1 / x) * 100
    digits = max(0, math.ceil(math.log10(x)) - 2)
    return f"{p:.{digits}f}%"


def latency_range(spectra: list[list[float]], slo_ms: float | None) -> tuple[float, float]:
    """One latency range for every spectrum of a report, so plots side by side read alike."""
    values = [v for ys in spectra for v in ys if v > 0]
    if not values:
        return 0.1, 10.0
    low, high = min(values), max(values + ([slo_ms] if slo_ms else []))
    return low / 1.3, high * 1.3


def spectrum_plot(
    title: str,
    series: list[tuple[str, list, int | None, dict]],
    slo_ms: float | None,
    ylim: tuple[float, float] | None = None,
) -> bytes:
    """Latency against percentile, one line per series: (label, spectrum [[p, ms], ...], requests,
    matplotlib style). The x axis ends at the last percentile the requests reach."""
    fig, ax = plt.subplots(figsize=(8.5, 4.2), dpi=100)
    end = 2.0
    for label, spectrum, requests, style in series:
        xs, ys = spectrum_xy(spectrum, requests)
        if xs:
            ax.plot(xs, ys, label=label, **style)
            end = max(end, requests or xs[-1])
    if slo_ms:
        ax.axhline(slo_ms, label=f"SLO: p99 ≤ {slo_ms:g} ms", **SLO_STYLE)
    ax.set_xscale("log")
    ticks = [t for t in PERCENTILE_TICKS if t <= end / 1.5]
    ax.xaxis.set_major_locator(FixedLocator(ticks + [end]))
    labels = dict(zip(PERCENTILE_TICKS, PERCENTILE_LABELS))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: labels.get(x) or percentile_label(x)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(1, end)
    _log_ms(ax)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_xlabel("percentile (the axis ends where the requests do)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return _png(fig)


# ------------------------------------------------------------------------------- saturation curve


def saturation_curve(points: list[dict], slo_ms: float, best_rate: float | None, scenario: str) -> bytes:
    """Latency (p50, p99, p99.9) against the achieved rate, one point per step of the search, with
    the SLO and the highest rate that met every condition; beside it, achieved against requested.
    points: [{rate, achieved, p50, p99, p99_9, ok}]; a step that failed is drawn hollow."""
    fig, (curve, held) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100, gridspec_kw={"width_ratios": [2, 1]})
    achieved = [p["achieved"] for p in points]
    lines = (("p50", "p50", "tab:blue"), ("p99", "p99", "tab:orange"), ("p99_9", "p99.9", "tab:purple"))
    for key, label, color in lines:
        ys = [math.nan if p.get(key) is None else p[key] for p in points]
        if all(math.isnan(y) for y in ys):
            continue
        curve.plot(achieved, ys, "-", color=color, label=label)
        curve.plot(
            [a for a, y, p in zip(achieved, ys, points) if p["ok"]],
            [y for y, p in zip(ys, points) if p["ok"]],
            "o", color=color,
        )
        curve.plot(
            [a for a, p in zip(achieved, points) if not p["ok"]],
            [y for y, p in zip(ys, points) if not p["ok"]],
            "o", color=color, markerfacecolor="white",
        )
    curve.axhline(slo_ms, label=f"SLO: p99 ≤ {slo_ms:g} ms", **SLO_STYLE)
    best = next((p for p in points if p["rate"] == best_rate), None)
    if best:
        curve.axvline(best["achieved"], color="tab:green", linewidth=1.2)
        curve.annotate(
            f"highest sustained: {fmt.rate(best_rate)}/s",
            (best["achieved"], slo_ms),
            xytext=(4, 6),
            textcoords="offset points",
            color="tab:green",
            fontsize=8,
        )
    _log_ms(curve)
    curve.set_xlabel("achieved rate, requests/s")
    curve.set_title(f"{scenario}: latency against rate (hollow: the step failed a condition)", fontsize=10)
    curve.grid(True, which="both", alpha=0.3)
    curve.legend(fontsize=8, loc="upper left")
    rates = [p["rate"] for p in points]
    held.plot(rates, achieved, "o-", label="achieved")
    held.plot(rates, rates, "--", color="gray", label="requested")
    held.set_xlabel("requested rate, requests/s")
    held.set_ylabel("achieved rate, requests/s")
    held.grid(True, alpha=0.3)
    held.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


# ------------------------------------------------------------------------------------ time series


def panels(ts: dict) -> list[str]:
    """The panels a phase's time series fills, top to bottom: the load's rate, its latency (when
    the tool gives latency per second), its errors, then the nodes' CPU and GC pauses, their
    healing (when a node missed writes) and the RocksDB events when the nodes were sampled."""
    load = ts.get("load") or {}
    seconds = load.get("seconds") or []
    nodes = ts.get("nodes") or {}
    out = []
    if seconds:
        out.append("rate")
        if load.get("latency") and any(s.get("p99_ms") is not None for s in seconds):
            out.append("latency")
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


def _intervals(ax, starts: list[float], ys: list[float], step: float, **style) -> None:
    """Values that each hold for an interval, drawn as steps from its start to its end."""
    if starts:
        ax.plot(list(starts) + [starts[-1] + step], list(ys) + [ys[-1]], drawstyle="steps-post", **style)


HEIGHTS = {"rate": 1.0, "latency": 1.3, "errors": 0.7, "cpu": 1.0, "gc": 0.8, "healing": 0.9, "events": 0.5}


def timeseries_plot(
    title: str, ts: dict, faults: list[dict], requested_rate: float | None, slo_ms: float | None
) -> bytes:
    """A phase second by second, panels sharing the time axis; fault windows shaded across every
    panel and named on the first, RocksDB flushes and compactions marked on a strip of their own."""
    shown = panels(ts)
    fig, axes = plt.subplots(
        len(shown), 1, sharex=True, dpi=100, figsize=(10, 1.7 * sum(HEIGHTS[p] for p in shown) + 0.6),
        gridspec_kw={"height_ratios": [HEIGHTS[p] for p in shown]}, squeeze=False,
    )
    axes = {name: ax for name, ax in zip(shown, axes[:, 0])}
    step = ts.get("interval_s") or 1.0
    seconds = (ts.get("load") or {}).get("seconds") or []
    nodes = ts.get("nodes") or {}
    starts = [s["t"] for s in seconds]
    mid = [t + step / 2 for t in starts]
    end = max([s["t"] + step for s in seconds] + [r["t"] + step for rows in nodes.values() for r in rows] + [step])

    if "rate" in axes:
        ax = axes["rate"]
        rates = [r / step for r in timeline.values(seconds, "requests")]
        _intervals(ax, starts, rates, step, color="tab:blue", label="achieved")
        if requested_rate:
            label = f"requested {fmt.rate(requested_rate)}/s"
            ax.axhline(requested_rate, color="gray", linestyle="--", linewidth=1, label=label)
        ax.set_ylabel("requests/s")
        ax.set_ylim(bottom=0)
    if "latency" in axes:
        ax = axes["latency"]
        lines = (("max_ms", "max", "tab:gray"), ("p99_ms", "p99", "tab:orange"), ("p50_ms", "p50", "tab:blue"))
        for key, label, color in lines:
            _intervals(ax, starts, timeline.values(seconds, key), step, color=color, label=label, linewidth=1.2)
        if slo_ms:
            ax.axhline(slo_ms, label=f"SLO {slo_ms:g} ms", **SLO_STYLE)
        _log_ms(ax, "ms per second (log)")
    if "errors" in axes:
        ax = axes["errors"]
        errors = [e / step for e in timeline.values(seconds, "errors")]
        ax.bar(mid, errors, width=step * 0.9, color="tab:red", label="failed")
        ax.set_ylabel("errors/s")
        ax.set_ylim(bottom=0, top=max([1.0] + [e for e in errors if not math.isnan(e)]) * 1.15)
    for key, panel, label in (("cpu_cores", "cpu", "CPU, cores"), ("gc_pause_ms", "gc", "GC pause, ms")):
        if panel not in axes:
            continue
        ax = axes[panel]
        for i, (name, rows) in enumerate(sorted(nodes.items())):
            _intervals(ax, [r["t"] for r in rows], timeline.values(rows, key), step, color=colour(i), label=name)
            down = [r["t"] + step / 2 for r in rows if r.get("up") is False]
            if down and panel == "cpu":
                ax.plot(
                    down, [0] * len(down), "x", color=colour(i), markersize=5,
                    label=f"{name} did not answer",
                )
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    if "healing" in axes:
        ax = axes["healing"]
        for i, (name, rows) in enumerate(sorted(nodes.items())):
            _intervals(ax, [r["t"] for r in rows], timeline.values(rows, "hints_pending"), step,
                       color=colour(i), label=f"{name} hints pending")
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
                when = sorted(totals)
                style = {"color": "black", "linestyle": style, "linewidth": 1, "label": label}
                _intervals(ax, when, [totals[t] for t in when], step, **style)
        ax.set_ylabel("hints")
        ax.set_ylim(bottom=0)
    if "events" in axes:
        ax = axes["events"]
        names = sorted({e.get("node", "?") for e in ts["events"]} | set(nodes))
        for kind, marker, color in (("flush", "|", "tab:purple"), ("compaction", "s", "tab:brown")):
            hits = [e for e in ts["events"] if e.get("kind") == kind]
            if hits:
                ax.plot(
                    [e["t"] for e in hits], [names.index(e.get("node", "?")) for e in hits], marker,
                    color=color, markersize=7 if marker == "|" else 4, linestyle="none", label=f"RocksDB {kind}",
                )
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_ylabel("events")
    for f in faults:
        w = timeline.window(f)
        if not w:
            continue
        for ax in axes.values():
            ax.axvspan(w[0], w[1], color=FAULT_COLOR, alpha=0.12, linewidth=0)
        first = next(iter(axes.values()))
        first.annotate(
            timeline.short(f), (w[0], 1), xycoords=("data", "axes fraction"), xytext=(2, -10),
            textcoords="offset points", fontsize=8, color=FAULT_COLOR,
        )
    for ax in axes.values():
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            # Beside the panel, never over the data.
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1), borderaxespad=0)
    last = list(axes.values())[-1]
    last.set_xlim(0, end)
    last.set_xlabel("seconds since the phase's load started")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _png(fig)
