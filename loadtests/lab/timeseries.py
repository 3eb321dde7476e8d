"""A phase's time series and latency distribution as files: <phase dir>/timeseries.json (the load
tool's seconds, the nodes' samples, the latency they measured, the RocksDB events, all against the
phase's second 0), <phase dir>/latency.hgrm (HdrHistogram's percentile distribution of every
request, in ms; a phase of several ops has latency-<op>.hgrm beside it) and, when the load tool timed every request
(k6), <phase dir>/latency.hlog (HdrHistogram's interval log: every request's latency second by
second, in µs, from which any span of seconds has its exact percentiles: lab.hdr.read_log).

timeseries.json:
  interval_s  1.0
  t0_epoch    wall-clock time of second 0, when the phase's load started
  load        {source, latency, began_s?, ended_s?, note?, ops?,
               seconds: [{t, requests, errors, p50_ms, p99_ms, max_ms, partial?}]}
              (lab.loadseries); null when the load tool left nothing to read. A partial second is
              one the load did not run for whole (its first, when the tool started late, and its
              last): its count is no rate and its latency that of the last requests only
  nodes       {node: [{t, cpu_cores, gc_pause_ms, hints_pending, hints_replayed, records_repaired, up}]}
  events      [{t, node, kind: flush | compaction}]
  server      {source, note, seconds: [{t, span_s, requests, p50_ms, p99_ms, partial?}]}: the
              latency the nodes measured per interval (from t, span_s long), all nodes together
              (lab.nodeseries); partial as in load, when the load's span is known. nodes, events
              and server are null when the executor cannot read the nodes' metrics; server too
              when no node timed a request
Missing figures are null, never invented.

The raw per-request samples (k6's CSV, gzipped) are removed once read, unless KEEP_SAMPLES=1 is set.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from . import hdr
from .loadseries import LoadSeries, Samples, mark_partial
from .nodeseries import Sampler

INTERVAL_S = 1.0
KEEP_SAMPLES_ENV = "KEEP_SAMPLES"


def epoch_of(monotonic_t: float) -> float:
    """The wall-clock time (seconds since the epoch) of a time.monotonic() reading."""
    return time.time() - (time.monotonic() - monotonic_t)


def keep_samples() -> bool:
    return os.environ.get(KEEP_SAMPLES_ENV, "") not in ("", "0")


def write(out: Path, t0_epoch: float, samples: Samples | None, sampler: Sampler | None,
          log: Callable[[str], None] = lambda message: None) -> dict[str, object]:
    """Writes the phase's files into out and returns what the phase record gets: "timeseries" and
    "hgrm" (paths), "hgrm_ops" ({op: path}) when the phase had several ops, and "hlog" (a path)
    when its load tool timed every request. A load series that cannot be read is logged and left
    null: the files never stop a phase."""
    load: LoadSeries | None = None
    if samples is not None:
        try:
            load = samples.series(t0_epoch)
        except (OSError, ValueError, KeyError, TypeError) as e:
            log(f"no load time series: {e}")
        finally:
            if not keep_samples():
                samples.discard()
    nodes, events = sampler.part(t0_epoch) if sampler is not None else (None, None)
    server = sampler.server_part(t0_epoch) if sampler is not None else None
    if server and load and load.began_s is not None and load.ended_s is not None:
        mark_partial(server["seconds"], load.began_s, load.ended_s, sampler.interval_s)
    doc = {
        "interval_s": INTERVAL_S,
        "t0_epoch": round(t0_epoch, 3),
        "load": load.part() if load else None,
        "nodes": nodes,
        "events": events,
        "server": server,
    }
    path = out / "timeseries.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    files: dict[str, object] = {"timeseries": path, "hgrm": None}
    histograms = load.histograms if load else {}
    if "all" in histograms:
        files["hgrm"] = out / "latency.hgrm"
        files["hgrm"].write_text(hdr.hgrm(histograms["all"]))
    if load and load.per_second is not None and load.latency:
        path = out / "latency.hlog"
        if hdr.write_log(path, t0_epoch, load.per_second.intervals()):
            files["hlog"] = path
    ops = {op: h for op, h in histograms.items() if op != "all"}
    if ops:
        files["hgrm_ops"] = {}
        for op, h in ops.items():
            files["hgrm_ops"][op] = out / f"latency-{op}.hgrm"
            files["hgrm_ops"][op].write_text(hdr.hgrm(h))
    return files


def relative(files: dict[str, object], root: Path) -> dict[str, object]:
    """The paths of write()'s answer relative to root (the run directory), for run.json."""

    def rel(v):
        if isinstance(v, Path):
            return str(v.relative_to(root))
        if isinstance(v, dict):
            return {k: rel(x) for k, x in v.items()}
        return v

    return {k: rel(v) for k, v in files.items()}
