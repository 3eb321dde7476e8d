"""What the load tool saw second by second, and its whole phase's latency distribution: the "load"
part of a phase's timeseries.json and the histogram of its latency.hgrm.

- k6 writes a sample per request (`--out csv`); its http_req_duration rows carry the latency, the
  time the request ended, whether it failed (expected_response) and its op (mixed: get or put).
  They are read as a stream after the phase into HdrHistograms: one per second (p50, p99) and one
  for the whole phase, per op too when a phase has several.
- wrk and wrk2 give Lua no latency per request: the lab's wrk scripts count answers, and those of
  status 400 or more, per second (kvlab.lua), and the series has no latency ("latency": false).
  The whole phase's histogram comes from Debian's wrk's histogram (histogram_us) or from the
  percentile spectrum wrk2 prints.

A second t holds the requests that ended in [t0 + t, t0 + t + 1), t0 being the phase's second 0.
The load ran from began_s to ended_s (k6: its first and last request sent; wrk: second 0 to the end
of its run as wrk measured it); a second it did not run for whole is marked partial (the first when
the tool started late, the last, which holds only the answers to the last requests): its count is
not a rate, and its latency is that of the stragglers.
"""

from __future__ import annotations

import csv
import gzip
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hdrh.histogram import HdrHistogram

from . import hdr

K6_METRIC = "http_req_duration"
# How much of a second the load may miss and the second still count as whole (a wrk process starts
# a few ms after second 0).
SLACK_S = 0.05
# How far behind the newest second a second's histogram stays decoded: k6 writes a request's
# samples within a second or two of its end.
LIVE_S = 30
# What k6 needs to write the samples the series is made of; the scripts keep their tags to the
# status, expected_response and op (lib/kvlab.js), and a timestamp in µs tells the seconds apart.
K6_CSV_ENV = {"K6_CSV_TIME_FORMAT": "unix_micro"}
# The local k6 compresses its samples (a soak's would take gigabytes): k6 gzips a CSV named *.gz.
K6_SAMPLES_FILE = "k6-samples.csv.gz"
COUNT_COLUMN = "count"
SUMMED_NOTE = (
    "the load generator pods summed their samples per second, outcome and latency rounded up to two "
    "significant digits (a long phase's samples would not fit their logs)"
)


def k6_output_args(path: Path | str) -> list[str]:
    """k6 run's options that write the per-request samples to a CSV file (with K6_CSV_ENV)."""
    return ["--out", f"csv={path}"]


@dataclass
class LoadSeries:
    """The load part of a phase's time series; histograms: "all", and each op's when several."""

    source: str  # k6 | wrk | wrk2
    latency: bool
    seconds: list[dict]
    ops: dict[str, list[dict]] = field(default_factory=dict)
    histograms: dict[str, HdrHistogram] = field(default_factory=dict)
    note: str = ""
    began_s: float | None = None
    ended_s: float | None = None
    # Every request's latency second by second (k6), for the phase's interval log (hdr.write_log).
    per_second: _Seconds | None = None

    def part(self) -> dict:
        """The "load" object of timeseries.json."""
        out = {"source": self.source, "latency": self.latency, "seconds": self.seconds}
        if self.began_s is not None and self.ended_s is not None:
            out |= {"began_s": round(self.began_s, 3), "ended_s": round(self.ended_s, 3)}
        if self.ops:
            out["ops"] = self.ops
        if self.note:
            out["note"] = self.note
        return out


class _Seconds:
    """Requests, failures and (when kept) latency per second: a histogram of 2 significant digits
    per second for p50 and p99, the exact maximum beside it.

    A phase of an hour holds thousands of seconds: a second more than LIVE_S behind the newest one
    seen is kept encoded (a few hundred bytes instead of some 26 KB) and decoded again only when a
    late sample still arrives for it, so memory grows with the phase's seconds by little."""

    def __init__(self, latency: bool):
        self.latency = latency
        self.counts: dict[int, list] = {}  # second -> [requests, errors, histogram or None when encoded, max ms]
        self.encoded: dict[int, bytes] = {}
        self.live: set[int] = set()  # the seconds whose histogram is not encoded
        self.newest = -1

    def add(self, second: int, ms: float | None, requests: int = 1, errors: int = 0) -> None:
        """requests that ended in that second, errors of them; ms: their latency, when kept."""
        row = self._row(second)
        row[0] += requests
        row[1] += errors
        if ms is not None and row[2] is not None:
            hdr.record_ms(row[2], ms, requests)
            if ms > row[3]:
                row[3] = ms

    def _row(self, second: int) -> list:
        row = self.counts.get(second)
        if row is None:
            row = self.counts[second] = [0, 0, hdr.histogram(hdr.SECOND_DIGITS) if self.latency else None, 0.0]
            if self.latency:
                self.live.add(second)
        elif self.latency and row[2] is None:
            row[2] = HdrHistogram.decode(self.encoded.pop(second))
            self.live.add(second)
        if second > self.newest:
            self.newest = second
            for old in [s for s in self.live if s < second - LIVE_S]:
                self.encoded[old] = self.counts[old][2].encode()
                self.counts[old][2] = None
                self.live.discard(old)
        return row

    def histogram(self, second: int) -> HdrHistogram | None:
        """The second's latency histogram (decoded when it was encoded), None without one."""
        row = self.counts.get(second)
        if row is None or not self.latency:
            return None
        return row[2] if row[2] is not None else HdrHistogram.decode(self.encoded[second])

    def last(self) -> int:
        return max(self.counts, default=-1)

    @classmethod
    def merged(cls, parts: list[_Seconds]) -> _Seconds:
        """The seconds of every part together (their histograms added up), second by second."""
        if len(parts) == 1:
            return parts[0]
        out = cls(latency=all(p.latency for p in parts))
        for second in sorted(set().union(*(p.counts for p in parts))):
            for p in parts:
                if second not in p.counts:
                    continue
                requests, errors, _, top = p.counts[second]
                row = out._row(second)
                row[0] += requests
                row[1] += errors
                h = p.histogram(second)
                if row[2] is not None and h is not None:
                    row[2].add(h)
                    row[3] = max(row[3], top)
        return out

    def entries(self, until: int) -> list[dict]:
        """One entry per second 0..until; a second without an answer has 0 requests and no latency."""
        out = []
        for t in range(until + 1):
            row = self.counts.get(t)
            entry = {"t": t, "requests": row[0] if row else 0, "errors": row[1] if row else 0}
            if self.latency:
                if row and row[0]:
                    p = hdr.percentiles_ms(self.histogram(t), [50, 99])
                    # The histogram reads a value as the top of its bucket: never above the real maximum.
                    entry |= {"p50_ms": min(p[50], row[3]), "p99_ms": min(p[99], row[3]), "max_ms": row[3]}
                else:
                    entry |= {"p50_ms": None, "p99_ms": None, "max_ms": None}
            out.append(entry)
        return out

    def intervals(self):
        """(second, its latency histogram) for every second with requests, in order."""
        for t in sorted(self.counts):
            if self.counts[t][0] and self.latency:
                yield t, self.histogram(t)


def covered(t: float, step: float, began: float, ended: float) -> bool:
    """Whether the load ran for the whole interval [t, t + step) (give or take SLACK_S)."""
    return began <= t + SLACK_S and t + step <= ended + SLACK_S


def mark_partial(rows: list[dict], began: float, ended: float, step: float = 1.0) -> list[dict]:
    """Each row (an interval from its "t", span_s or step long) with "partial": whether the load
    ran for less than it."""
    for row in rows:
        row["partial"] = not covered(row["t"], row.get("span_s", step), began, ended)
    return rows


def _seconds_of(stamp: int) -> float:
    """A k6 CSV timestamp in seconds since the epoch, whichever unix unit it was written in."""
    if stamp > 10**17:
        return stamp / 1e9
    if stamp > 10**14:
        return stamp / 1e6
    if stamp > 10**11:
        return stamp / 1e3
    return float(stamp)


def _op(extra_tags: str) -> str:
    for pair in extra_tags.split("&"):
        if pair.startswith("op="):
            return pair[3:]
    return ""


class K6Reader:
    """Reads k6 CSV outputs (several, when several k6 processes shared a phase) as streams: only
    the http_req_duration rows are parsed; memory grows with the phase's seconds, not its requests."""

    def __init__(self, t0_epoch: float):
        self.t0_epoch = t0_epoch
        # Per op only (most phases have one): the whole phase's are added up at the end.
        self.by_op: dict[str, HdrHistogram] = {}
        self.op_seconds: dict[str, _Seconds] = {}
        self.sent: tuple[float, float] | None = None  # the first and the last request's send (epoch)
        self.summed = False

    @property
    def whole(self) -> HdrHistogram:
        return hdr.add(list(self.by_op.values())) if len(self.by_op) != 1 else next(iter(self.by_op.values()))

    def read(self, lines: Iterable[str]) -> None:
        """One CSV output, its header first."""
        lines = iter(lines)
        header = next(lines, "")
        columns = next(csv.reader([header]), [])
        try:
            stamp, value = columns.index("timestamp"), columns.index("metric_value")
        except ValueError:
            raise ValueError(f"not a k6 CSV output (header {header.strip()[:120]!r})") from None
        expected = columns.index("expected_response") if "expected_response" in columns else None
        status = columns.index("status") if "status" in columns else None
        extra = columns.index("extra_tags") if "extra_tags" in columns else None
        # A row of requests alike (k8s/loadgen/job.sh sums a long phase's samples per second and latency).
        count = columns.index(COUNT_COLUMN) if COUNT_COLUMN in columns else None
        self.summed |= count is not None
        prefix = K6_METRIC + ","
        for row in csv.reader(line for line in lines if line.startswith(prefix)):
            try:
                ended = _seconds_of(int(row[stamp]))
                ms = float(row[value])
                n = int(row[count]) if count is not None else 1
            except (ValueError, IndexError):
                continue
            if expected is not None:
                failed = row[expected] == "false"
            else:  # without the tag, what k6 counts as failed by default: no answer, or 400 and above
                failed = status is None or not row[status].isdigit() or not 0 < int(row[status]) < 400
            self.add(ended, ms, failed, _op(row[extra]) if extra is not None else "", n)

    def add(self, ended: float, ms: float, failed: bool, op: str, count: int = 1) -> None:
        whole = self.by_op.get(op)
        if whole is None:
            whole = self.by_op[op] = hdr.histogram()
            self.op_seconds[op] = _Seconds(latency=True)
        hdr.record_ms(whole, ms, count)
        sent = ended - ms / 1000
        self.sent = (min(self.sent[0], sent), max(self.sent[1], sent)) if self.sent else (sent, sent)
        second = math.floor(ended - self.t0_epoch)
        if second >= 0:
            self.op_seconds[op].add(second, ms, count, count if failed else 0)

    def series(self, duration_s: float | None = None) -> LoadSeries:
        """Seconds from 0 to the last one with an answer, or to the end of duration_s if later."""
        seconds = _Seconds.merged(list(self.op_seconds.values())) if self.op_seconds else _Seconds(latency=True)
        until = max(seconds.last(), math.ceil(duration_s) - 1 if duration_s else -1)
        whole = self.whole
        histograms = {"all": whole} if whole.get_total_count() else {}
        series = LoadSeries("k6", True, seconds.entries(until), histograms=histograms, per_second=seconds,
                            note=SUMMED_NOTE if self.summed else "")
        if len(self.by_op) > 1:
            series.ops = {op: s.entries(until) for op, s in sorted(self.op_seconds.items())}
            series.histograms |= dict(sorted(self.by_op.items()))
        if self.sent:
            series.began_s, series.ended_s = max(0.0, self.sent[0] - self.t0_epoch), self.sent[1] - self.t0_epoch
            for rows in [series.seconds, *series.ops.values()]:
                mark_partial(rows, series.began_s, series.ended_s)
        return series


def read_k6_csv(paths: list[Path], t0_epoch: float, duration_s: float | None = None) -> LoadSeries:
    """The series of k6 CSV outputs, plain or gzipped (a name ending in .gz, as k6 writes it then);
    a gzipped output cut short (k6 killed) gives the samples it holds, and the series says so."""
    reader = K6Reader(t0_epoch)
    cut = []
    for path in paths:
        opened = gzip.open if path.suffix == ".gz" else open
        with opened(path, "rt", newline="", errors="replace") as f:
            try:
                reader.read(f)
            except EOFError:
                cut.append(path.name)
    series = reader.series(duration_s)
    if cut:
        ended = f"{', '.join(cut)} ended early (k6 stopped while writing it): the samples it holds"
        series.note = "; ".join(filter(None, [series.note, ended]))
    return series


WRK_NOTE = (
    "answers per second counted by the wrk script as they arrive; errors are those of status 400 or "
    "more (a socket error is counted only in the phase's total); wrk gives no latency per request"
)


def from_wrk(parts: list[dict], t0_epoch: float, source: str, duration_s: float | None = None,
             spectra: list[str] | None = None) -> LoadSeries:
    """The series of a phase's wrk processes: parts are their KVLAB-WRK-JSON objects (with
    per_second, counted from the t0_ms they were given), spectra the output of each wrk2 (its
    percentile spectrum) where the parts have no histogram_us."""
    seconds = _Seconds(latency=False)
    for p in parts:
        per = p.get("per_second")
        if not per:
            continue
        shift = round(per["t0_ms"] / 1000 - t0_epoch)
        for i, (n, errors) in enumerate(zip(per["requests"], per["errors"])):
            if n and i + shift >= 0:
                seconds.add(i + shift, None, n, errors)
    histograms = []
    if parts and all(p.get("histogram_us") for p in parts):
        histograms = [hdr.from_buckets_us(p["histogram_us"]) for p in parts]
    elif spectra:
        histograms = [hdr.from_hgrm(s) for s in (wrk2_spectrum(text) for text in spectra) if s]
    whole = hdr.add(histograms) if histograms else None
    counted = any(p.get("per_second") for p in parts)
    until = max(seconds.last(), math.ceil(duration_s) - 1 if duration_s and counted else -1)
    series = LoadSeries(
        source,
        False,
        seconds.entries(until) if counted else [],
        histograms={"all": whole} if whole is not None and whole.get_total_count() else {},
        note=WRK_NOTE if counted else "the wrk script counted no answers per second",
    )
    ran = [p["duration_s"] for p in parts if p.get("duration_s")]
    if counted and ran:
        # wrk starts within milliseconds of second 0 and measures how long it ran.
        series.began_s, series.ended_s = 0.0, max(ran)
        mark_partial(series.seconds, series.began_s, series.ended_s)
    return series


_SPECTRUM = re.compile(r"^\s*Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)\s*$", re.MULTILINE)


def wrk2_spectrum(text: str) -> str | None:
    """The percentile distribution wrk2 prints (--latency), from its header to its footer; None
    when the text has none (Debian's wrk, or the lab's own spectrum without counts)."""
    m = _SPECTRUM.search(text)
    if not m:
        return None
    end = text.find("#[Buckets", m.start())
    end = text.find("\n", end) if end >= 0 else len(text)
    return text[m.start() : end if end >= 0 else len(text)]


@dataclass
class Samples:
    """What a phase's load generators left for its time series, read once the phase is over (in
    Run.phase, against the phase's t0): k6's CSV outputs, or the wrk processes' KVLAB-WRK-JSON
    objects and, for wrk2, their outputs (the percentile spectrum)."""

    tool: str  # k6 | wrk | wrk2
    csv: list[Path] = field(default_factory=list)
    wrk_parts: list[dict] = field(default_factory=list)
    wrk_outputs: list[str] = field(default_factory=list)
    duration_s: float | None = None

    def series(self, t0_epoch: float) -> LoadSeries:
        if self.tool == "k6":
            present = [p for p in self.csv if p.exists()]
            if not present:
                raise FileNotFoundError(f"k6 wrote no samples ({', '.join(map(str, self.csv))})")
            return read_k6_csv(present, t0_epoch, self.duration_s)
        return from_wrk(self.wrk_parts, t0_epoch, self.tool, self.duration_s, self.wrk_outputs)

    def discard(self) -> None:
        """Removes the raw per-request files (they take about 700 bytes a request)."""
        for p in self.csv:
            p.unlink(missing_ok=True)
