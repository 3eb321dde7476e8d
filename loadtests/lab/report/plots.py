"""The report's figures, as PNG bytes. Conventions every plot follows: latency on a log scale (a
tail 100 times the median leaves the median readable), the SLO drawn where latency is, and axes
that end where the data does."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, NullLocator  # noqa: E402
from PIL import Image  # noqa: E402

from . import fmt  # noqa: E402

COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def colour(i: int) -> str:
    """The i-th series' colour, the same in every plot of a report."""
    return COLORS[i % len(COLORS)]


SLO_STYLE = {"color": "tab:red", "linestyle": ":", "linewidth": 1.2}
FAULT_COLOR = "tab:red"


def _png(fig) -> bytes:
    """The figure as a PNG of 256 colours at most: a plot of lines and shades loses nothing a reader
    sees, and its file is a third of the full-colour one (report.html embeds every plot)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    image = Image.open(buf).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


class PlainLogFormatter(LogFormatter):
    """Labels a log axis's minor ticks where matplotlib would (when the axis spans about a decade
    or less, else none), as plain numbers: 3, not 3×10⁰."""

    def __call__(self, x, pos=None):
        return f"{x:g}" if super().__call__(x, pos) else ""


def log_axis(axis) -> None:
    """A log-scale axis labelled in plain numbers, major and minor ticks alike."""
    axis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


def _log_ms(ax, label: str = "latency, ms (log scale)") -> None:
    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.set_ylabel(label)


# ------------------------------------------------------------------------------- percentile spectra

PERCENTILE_TICKS = [1, 2, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
PERCENTILE_LABELS = ["0%", "50%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
# Which label stays when two would touch: the median and p99 first, the minimum (0 %) last.
PERCENTILE_PRIORITY = [2, 100, 10, 1_000, 10_000, 100_000, 1_000_000, 1]


def spectrum_xy(spectrum: list, requests: int | None = None) -> tuple[list[float], list[float]]:
    """HdrHistogram's percentile spectrum as points (1/(1-p), ms), up to where the requests end:
    of N requests the highest percentile a measurement shows is about 1 - 1/N (99.97 % of 3 000),
    which is where the maximum (the spectrum's p = 1) goes; points beyond it would only repeat it."""
    end = requests if requests else math.inf
    xs, ys = [], []
    for p, v in spectrum:
        if v is None or v <= 0:
            continue
        if p >= 1:
            if requests and requests > (xs[-1] if xs else 1):
                xs.append(float(requests))
                ys.append(v)
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


def spectrum_figure(
    title: str,
    series: list[tuple[str, list, int | None, dict]],
    slo_ms: float | None,
    ylim: tuple[float, float] | None = None,
):
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
    ax.set_xlim(1, end)
    labels = dict(zip(PERCENTILE_TICKS, PERCENTILE_LABELS))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: labels.get(x) or percentile_label(x)))
    ax.xaxis.set_minor_locator(NullLocator())
    _log_ms(ax)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_xlabel("percentile (the axis ends where the requests do)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    _spread(ax, [t for t in PERCENTILE_TICKS if t < end] + [end])
    return fig


def spectrum_plot(*args, **kwargs) -> bytes:
    return _png(spectrum_figure(*args, **kwargs))


def _spread(ax, ticks: list[float], pad_px: float = 5) -> None:
    """The x ticks (ascending, the last where the axis ends), less those whose label would touch
    another's: the last is kept, then the others in PERCENTILE_PRIORITY's order while they fit."""
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.figure.canvas.draw()
    boxes = dict(zip(ticks, (label.get_window_extent() for label in ax.xaxis.get_ticklabels())))
    if len(boxes) != len(ticks):
        return
    kept = [ticks[-1]]
    for t in sorted(ticks[:-1], key=PERCENTILE_PRIORITY.index):
        box = boxes[t]
        if all(box.x1 + pad_px <= boxes[k].x0 or boxes[k].x1 + pad_px <= box.x0 for k in kept):
            kept.append(t)
    ax.xaxis.set_major_locator(FixedLocator(sorted(kept)))


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
