"""What a phase's load generator pods leave: their logs (job.sh's KVLAB-JOB lines), one result
merged from the k6 pods' summaries, and the table of the pods."""

from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass

from ..latency import mix_spectra

MARKER = "KVLAB-JOB "


@dataclass
class PodOutput:
    """What a load generator pod's log says (job.sh's KVLAB-JOB lines)."""

    index: int
    pod: str = ""
    node: str = ""
    version: str = ""
    segment: str = ""
    start_ns: int | None = None
    end_ns: int | None = None
    exit_code: int | None = None
    cpu_s: float | None = None
    summary: dict | None = None
    samples: bytes | None = None  # k6's per-request durations, its CSV
    samples_note: str = ""  # why there are none, when the pod said so
    error: str = ""


def _clock(text: str) -> float:
    """bash's `times` figures: 1m2.345s -> 62.345."""
    m = re.fullmatch(r"(\d+)m([\d.]+)s", text)
    if not m:
        raise ValueError(f"bad time {text!r}")
    return int(m.group(1)) * 60 + float(m.group(2))


def parse_job_log(text: str, index: int) -> PodOutput:
    out = PodOutput(index)
    chunks: list[str] = []
    for line in text.splitlines():
        if not line.startswith(MARKER):
            continue
        what, _, rest = line[len(MARKER) :].partition(" ")
        if what == "version":
            out.version = rest.strip()
        elif what == "segment":
            out.segment = rest.split()[0] if rest.strip() else ""
        elif what == "start":
            out.start_ns = int(rest)
        elif what == "end":
            out.end_ns = int(rest)
        elif what == "exit":
            out.exit_code = int(rest)
        elif what == "times":
            fields = rest.split()
            if len(fields) == 4:  # this shell's user and system time, then its children's
                out.cpu_s = _clock(fields[2]) + _clock(fields[3])
        elif what == "summary":
            out.summary = json.loads(base64.b64decode(rest.strip()))
        elif what == "samples":
            chunks.append(rest.strip())
        elif what == "samples-skipped":
            out.samples_note = rest.strip()
        elif what == "error":
            out.error = rest.strip()
    if chunks:
        try:
            out.samples = gzip.decompress(base64.b64decode("".join(chunks)))
        except (ValueError, OSError, EOFError) as e:
            out.samples_note = f"its samples could not be read: {e}"
    return out


def merge_k6(parts: list[dict]) -> dict:
    """One result from the k6 summaries of the pods of a phase (each ran one execution segment)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    requests = sum(p["requests"] for p in parts)
    weights = [p["requests"] for p in parts]
    open_model = first.get("requested_rate") is not None
    statuses: dict[str, int] = {}
    for p in parts:
        for code, n in p.get("status_counts", {}).items():
            statuses[code] = statuses.get(code, 0) + n
    latency = {}
    for name in first["latency"]:
        latency[name] = mix_spectra([(w, p["latency"].get(name)) for w, p in zip(weights, parts)])
    duration = first["duration_s"] if open_model else max(p["duration_s"] for p in parts)
    # Thresholds: the latency ones again on the merged percentiles; any other holds when it held in every pod.
    slo = first.get("slo_p99_ms")
    thresholds = {}
    for name in first.get("thresholds", {}):
        m = re.fullmatch(r"http_req_duration(?:\{op:(\w+)\})?", name)
        # A scenario of one operation has only the "all" series.
        series = (latency.get(m.group(1) or "all") or latency.get("all")) if m else None
        if series and slo is not None and open_model:
            thresholds[name] = series["percentiles"]["p99"] < slo
        else:
            thresholds[name] = all(p.get("thresholds", {}).get(name, True) for p in parts)
    merged = dict(first)
    merged.update(
        {
            "model": f"{first['model']}, {len(parts)} pods with k6 execution segments",
            "duration_s": duration,
            "test_run_duration_s": max(p.get("test_run_duration_s", 0) for p in parts),
            "requests": requests,
            "achieved_rate": (
                sum(p["achieved_rate"] for p in parts) if open_model else (requests / duration if duration else 0.0)
            ),
            "dropped_iterations": sum(p.get("dropped_iterations") or 0 for p in parts),
            "vus_max": sum(p.get("vus_max") or 0 for p in parts),
            "error_rate": sum(p.get("error_rate", 0) * w for p, w in zip(parts, weights)) / requests
            if requests
            else 0.0,
            "status_counts": statuses,
            "bytes_received": sum(p.get("bytes_received", 0) for p in parts),
            "bytes_sent": sum(p.get("bytes_sent", 0) for p in parts),
            "latency": latency,
            "thresholds": thresholds,
            "latency_merge": "the pods' percentile spectra mixed, weighted by requests (min, max and mean exact)",
        }
    )
    return merged


def pods_table(outputs: list[PodOutput], parts: list[dict | None], cpu_wall_s: float) -> list[dict]:
    """Per load generator pod: when it started (ms after the first), what it sent, its latency."""
    starts = [o.start_ns for o in outputs if o.start_ns is not None]
    first = min(starts) if starts else None
    rows = []
    for o, r in zip(outputs, parts):
        lat = (r or {}).get("latency", {}).get("all") or {}
        rows.append(
            {
                "index": o.index,
                "pod": o.pod,
                "node": o.node,
                "segment": o.segment,
                "start_ms": (o.start_ns - first) / 1e6 if o.start_ns is not None and first is not None else None,
                "exit_code": o.exit_code,
                "requests": (r or {}).get("requests"),
                "achieved_rate": (r or {}).get("achieved_rate"),
                "dropped": (r or {}).get("dropped_iterations"),
                "p50": lat.get("percentiles", {}).get("p50"),
                "p99": lat.get("percentiles", {}).get("p99"),
                "max": lat.get("max"),
                "cpu_s": o.cpu_s,
                "cores": o.cpu_s / cpu_wall_s if o.cpu_s is not None and cpu_wall_s > 0 else None,
            }
        )
    return rows

