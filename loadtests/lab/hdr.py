"""Latency distributions as HdrHistograms (the hdrhistogram package): recorded in microseconds,
written as .hgrm files in milliseconds (HdrHistogram's percentile-distribution format, which the
HdrHistogram plotters read), and read back from such a text (wrk2 prints one); second by second as
HdrHistogram's interval log (.hlog)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader, HistogramLogWriter

# Microseconds from 1 to an hour: no request of the lab's lasts longer (k6 gives up after 60 s).
HIGHEST_US = 3_600_000_000
US_PER_MS = 1000
# The whole phase's distribution: 3 significant digits (0.1 %); a second's: 2 (1 %), enough for its
# p50 and p99, and a seventh of the memory (a phase keeps one per second).
PHASE_DIGITS = 3
SECOND_DIGITS = 2


def histogram(digits: int = PHASE_DIGITS) -> HdrHistogram:
    return HdrHistogram(1, HIGHEST_US, digits)


def record_ms(h: HdrHistogram, ms: float, count: int = 1) -> None:
    """Records a latency in ms (as whole microseconds, at most an hour)."""
    h.record_value(min(HIGHEST_US, max(0, round(ms * US_PER_MS))), count)


def percentiles_ms(h: HdrHistogram, ps: list[float]) -> dict[float, float]:
    """Values in ms at the given percentiles (0..100) of a histogram that holds values."""
    found = h.get_percentile_to_value_dict(ps)
    return {p: found[p] / US_PER_MS for p in ps}


def max_ms(h: HdrHistogram) -> float:
    return h.get_max_value() / US_PER_MS


def hgrm(h: HdrHistogram) -> str:
    """The histogram in HdrHistogram's percentile-distribution format, values in ms (5 ticks per
    half distance, as wrk2 prints it). The package writes the standard deviation in the recorded
    unit (µs) beside a mean in ms; the footer here has both in ms."""
    out = io.BytesIO()
    h.output_percentile_distribution(out, US_PER_MS, ticks_per_half_distance=5)
    text = out.getvalue().decode()
    digits = h.significant_figures
    mean_line = f"#[Mean    = {h.get_mean_value() / US_PER_MS:12.{digits}f}, StdDeviation   = {h.get_stddev() / US_PER_MS:12.{digits}f}]"
    return re.sub(r"^#\[Mean .*$", mean_line, text, count=1, flags=re.MULTILINE)


# A line of a percentile distribution: value, percentile (0..1), total count, 1/(1-percentile).
_ROW = re.compile(r"^\s*([0-9.]+)\s+([0-9.]+)\s+(\d+)(?:\s+\S+)?\s*$")


def from_hgrm(text: str, digits: int = PHASE_DIGITS) -> HdrHistogram:
    """A histogram from a percentile-distribution text in ms (its first table), counts placed at the
    table's values: between two rows, the requests the total count grew by are put at the higher
    row's value, so each is read as at most the latency it stands for above it, never below."""
    h = histogram(digits)
    previous = 0
    rows = 0
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            if rows and line.startswith("#"):
                break  # the table's footer
            continue
        rows += 1
        value_ms, cumulative = float(m.group(1)), int(m.group(3))
        if cumulative > previous:
            record_ms(h, value_ms, cumulative - previous)
            previous = cumulative
    if not rows:
        raise ValueError("no percentile distribution table in the text")
    return h


def from_buckets_us(buckets: list[list[int]], digits: int = PHASE_DIGITS) -> HdrHistogram:
    """A histogram from [[latency in µs, count], ...] (the histogram the lab's wrk scripts print)."""
    h = histogram(digits)
    for value_us, count in buckets:
        if count > 0:
            h.record_value(min(HIGHEST_US, max(0, int(value_us))), int(count))
    return h


def add(parts: list[HdrHistogram]) -> HdrHistogram:
    """The sum of histograms (every request of the parts)."""
    whole = histogram(max((p.significant_figures for p in parts), default=PHASE_DIGITS))
    for p in parts:
        whole.add(p)
    return whole



def write_log(path: Path, t0_epoch: float, intervals: Iterable[tuple[float, HdrHistogram]], length_s: float = 1.0) -> int:
    """HdrHistogram's interval log (.hlog): one histogram per interval, its start in seconds since
    t0_epoch (the #[StartTime] line), for HistogramLogAnalyzer and for any time range's exact
    percentiles later (read_log). Values in µs, the max column in ms. Returns the intervals written."""
    written = 0
    with open(path, "w") as f:
        log = HistogramLogWriter(f)
        log.output_log_format_version()
        # The package's output_start_time cannot format its date: the same line written as a comment.
        stamp = datetime.fromtimestamp(t0_epoch, timezone.utc).isoformat(" ", "milliseconds")
        log.output_comment(f"[StartTime: {t0_epoch:.3f} (seconds since epoch), {stamp}]")
        log.output_legend()
        for start_s, h in intervals:
            log.output_interval_histogram(h, start_s, start_s + length_s, float(US_PER_MS))
            written += 1
    return written


def read_log(path: Path) -> Iterator[tuple[float, HdrHistogram]]:
    """The intervals of a log write_log wrote: (start in seconds since its StartTime, histogram),
    one at a time (a long phase's would not fit in memory decoded at once)."""
    reader = HistogramLogReader(str(path), histogram(SECOND_DIGITS))
    try:
        while (h := reader.get_next_interval_histogram()) is not None:
            yield round(h.get_start_time_stamp() / 1000 - reader.get_start_time_sec(), 3), h
    finally:
        reader.close()
