"""A wrk phase's result: the line of JSON the kvlab Lua scripts print when wrk is done
(loadtests/wrk2/kvlab.lua), one per wrk process, merged into one result in the shape of the k6
scripts' summary; and a wrk fill's own figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from . import tools
from .latency import add_histograms, mix_spectra

if TYPE_CHECKING:
    from .load import LoadSpec

WRK_MARKER = "KVLAB-WRK-JSON "

# Requests one iteration of a scenario sends, where it is not one: RATE counts iterations, as on k6
# (a conditional update is a GET and a PUT), and wrk is paced in requests.
REQUESTS_PER_ITERATION = {"conditional": 2}


def parse_wrk(log: Path, target: str) -> dict:
    """The JSON line the kvlab Lua scripts' done() printed into a wrk's output (log), for target."""
    text = log.read_text(errors="replace")
    lines = [line for line in text.splitlines() if line.startswith(WRK_MARKER)]
    if not lines:
        raise RuntimeError(f"wrk printed no {WRK_MARKER.strip()} line; see {log}")
    raw = json.loads(lines[-1][len(WRK_MARKER) :])
    raw["target"] = target
    return raw


def merge_wrk(spec: LoadSpec, parts: list[dict], wrk: tools.Wrk | None = None) -> dict:
    """One result from one wrk per target. Its latency ("all") is every request's, as one wrk
    against one node measures it: the sum of the processes' histograms, or where a wrk printed
    none (wrk2) the mixture of their spectra; each target's own is kept in latency_by_target.
    wrk: the wrk that ran (default: the one on PATH here)."""
    wrk = wrk or tools.wrk()
    requests = sum(p["requests"] for p in parts)
    errors = {k: sum(p["errors"][k] for p in parts) for k in parts[0]["errors"]}
    statuses: dict[str, int] = {}
    for p in parts:
        for code, n in p["status_counts"].items():
            statuses[code] = statuses.get(code, 0) + n
    socket_errors = errors["connect"] + errors["read"] + errors["write"] + errors["timeout"]
    if socket_errors:
        statuses["0"] = statuses.get("0", 0) + socket_errors
    duration = max(p["duration_s"] for p in parts)
    latency_by_target = {urlparse(p["target"]).netloc: p["latency"] for p in parts} if len(parts) > 1 else {}
    latency_merge = ""
    if len(parts) == 1:
        combined = parts[0]["latency"]
    elif all(p.get("histogram_us") for p in parts):
        combined = add_histograms([(p["latency"], p["histogram_us"]) for p in parts])
        latency_merge = "every request of the phase: the wrk processes' latency histograms added up"
    else:
        combined = mix_spectra([(p["requests"], p["latency"]) for p in parts])
        latency_merge = "the wrk processes' percentile spectra mixed, weighted by requests (min, max and mean exact)"
    # Answers that are an outcome of the workload, not a failure: a conditional update refused with
    # 412 (wrk's own count of errors has every status over 399).
    expected = statuses.get("412", 0) if spec.scenario == "conditional" else 0
    result = {
        "tool": "wrk2" if wrk.is_wrk2 else "wrk",
        "tool_version": wrk.version,
        "model": (
            "open (wrk2 -R; latency corrected for coordinated omission)"
            if wrk.is_wrk2
            else "paced closed loop (Debian's wrk + Lua delay(); latency from the send, uncorrected)"
        ),
        "scenario": spec.scenario,
        "targets": spec.targets,
        "requested_rate": spec.rate,
        "duration_s": duration,
        "requests": requests,
        "achieved_rate": requests / duration if duration else 0.0,
        "dropped_iterations": None,
        "connections": sum(max(1, spec.connections // len(spec.targets)) for _ in spec.targets),
        "error_rate": (errors["status"] - expected + socket_errors) / requests if requests else 0.0,
        "errors": errors,
        "status_counts": statuses,
        "bytes_received": sum(p["bytes_received"] for p in parts),
        "keys": spec.keys,
        "value_size": spec.value_size,
        "replicas": spec.replicas,
        "slo_p99_ms": spec.slo_p99_ms,
        "latency": {"all": combined},
        "latency_by_target": latency_by_target,
        "latency_merge": latency_merge,
    }
    return result | workload_figures(spec, result)


def workload_figures(spec: LoadSpec, result: dict) -> dict:
    """What a phase's k6 script adds to its summary, from a wrk result: the multi-get's keys per
    request and per second; the conditional updates made (201) and refused (412), two requests each
    (a GET, then the PUT: wrk times both in one latency), its achieved rate in updates as k6's."""
    if spec.scenario == "multiget":
        return {"keys_per_request": spec.multiget_size, "keys_rate": result["achieved_rate"] * spec.multiget_size}
    if spec.scenario == "conditional":
        made = result["status_counts"].get("201", 0)
        refused = result["status_counts"].get("412", 0)
        return {
            "achieved_rate": result["achieved_rate"] / REQUESTS_PER_ITERATION["conditional"],
            "requests_per_update": REQUESTS_PER_ITERATION["conditional"],
            "conditional_updates": made,
            "conditional_conflicts": refused,
            "conflict_share": refused / (made + refused) if made + refused else 0.0,
        }
    return {}


def fill_figures(spec: LoadSpec, result: dict, threads_done: int, threads: int) -> dict:
    """A wrk fill's own figures: keys asked, stored (answered 201), PUTs failed (another status
    than 201 and 200, or a socket error), threads that finished, and the fill rate in keys/s."""
    statuses = result.get("status_counts", {})
    stored = statuses.get("201", 0)
    failed = sum(n for code, n in statuses.items() if code not in ("200", "201"))
    duration = result.get("duration_s") or 0
    return {
        "keys_filled": [spec.key_start, spec.key_start + spec.keys],
        "keys_asked": spec.keys,
        "keys_stored": stored,
        "puts_failed": failed,
        "threads_done": threads_done,
        "threads": threads,
        "achieved_rate": stored / duration if duration else 0.0,
        "model": "closed (wrk, unpaced: every connection sends its next PUT on the last one's answer)",
    }
