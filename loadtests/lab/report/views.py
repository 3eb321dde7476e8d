"""A run's records made into what the report's template shows: one view per phase (rates, latency
series, CPU by process and thread, pauses, healing, faults, time series, flame graphs) and the
comparison with the previous run."""

from __future__ import annotations

import math
from pathlib import Path

from .. import healing
from ..results import is_measured, p99
from . import flames, fmt, timeline

TABLE = ["p50", "p75", "p90", "p99", "p99.9", "p99.99", "p99.999", "p100"]


def series(result: dict) -> list[tuple[str, dict]]:
    """The latency series to show: the phase's own (all requests, or one per operation), then each
    target's when one load generator per target sent the load."""
    shown = result.get("latency", {}) | result.get("latency_by_target", {})
    return [(name, s) for name, s in shown.items() if s]


def slo_p99(result: dict) -> float | None:
    """The p99 the SLO is held to (lab.results.p99), never of one target's share of the requests."""
    value = p99(result)
    return None if math.isnan(value) else value


def uncorrected(result: dict) -> bool:
    """The tool timed each request from its send, not from when it was due (Debian's wrk): a
    stalled server delays the sends, and the waiting is not in the figures."""
    return "uncorrected" in (result.get("model") or "")


def is_step(run: dict, phase: dict) -> bool:
    """A step of a saturation search: every measured phase of a search run, or a phase a fixed-rate
    run marked as one of its short search's steps."""
    return bool(phase.get("saturation_step")) or (run.get("kind") == "saturation" and is_measured(phase))


def healing_cells(v: dict) -> dict:
    """One row of a healing table: a node's figures over a phase, or the nodes' sum."""
    g = lambda k: v.get(k, 0.0)  # noqa: E731
    return {
        "written": g("hints_written"),
        "replayed": g("hints_replayed"),
        "dropped": g("hints_dropped"),
        "pending": g("hints_pending"),
        "rounds": g("repair_rounds"),
        "failed": g("repair_rounds_failed"),
        "keys": g("keys_compared"),
        "sent": g("repair_sent"),
        "received": g("repair_received"),
        "repaired": g("repair_sent") + g("repair_received"),
        "moved": g("records_moved"),
        "purged": g("tombstones_purged"),
        "previous_reads": g("previous_owner_reads"),
        "leaving": g("leaving"),
    }


def _held(fault: dict) -> str:
    w = timeline.window(fault)
    if not w:
        return f"{timeline.describe(fault)} did not happen: {fault.get('error') or 'the phase ended first'}"
    return f"{timeline.describe(fault)}: from second {w[0]:.1f} to {w[1]:.1f} of the load"


def heals(phase: dict) -> bool:
    """Whether the phase read the healing counters of two nodes or more: a node without a peer has
    nothing to heal."""
    h = phase.get("healing") or {}
    return len(h.get("nodes", {})) + len(h.get("missing", {})) > 1


def healing_view(phase: dict) -> dict | None:
    """What the nodes did to heal during the phase (lab.healing.delta in run.json), for the tables;
    None when it did not read the counters of two nodes or more."""
    if not heals(phase):
        return None
    h = phase["healing"]
    faults = timeline.faults(phase)
    heal = phase.get("heal")
    text = short = ""
    if faults:
        t = healing_cells(h["total"])
        short = "; ".join(_held(f) for f in faults)
        text = short
        text += (
            f"; {'its' if len(faults) == 1 else 'the'} peers kept {fmt.rate(t['written'])} hints of the writes "
            f"{'it' if len(faults) == 1 else 'the faulty nodes'} missed"
            + (f" ({fmt.rate(t['dropped'])} more not kept)" if t["dropped"] else "")
            + f" and replayed {fmt.rate(t['replayed'])}"
        )
        if heal and heal.get("hints_replayed_s") is not None:
            text += f", all of them {heal['hints_replayed_s']:.1f} s after the load ended"
        if heal and heal.get("repaired_s") is not None:
            text += (
                f"; repair rounds between every two nodes then compared {fmt.rate(t['keys'])} keys one by one and "
                f"copied {fmt.rate(t['repaired'])} records ({fmt.rate(t['sent'])} sent, {fmt.rate(t['received'])} received)"
            )
        text += (
            ": the cluster healed" + (f" within {heal['repaired_s']:.0f} s of the load's end" if heal.get("repaired_s") else "")
            if heal and heal.get("healed")
            else f": the cluster had not healed when the lab stopped waiting ({(heal or {}).get('why') or 'not waited for'})"
        )
    return {
        "rows": [{"name": name, **healing_cells(v)} for name, v in h.get("nodes", {}).items()],
        "total": healing_cells(h.get("total", {})),
        "missing": h.get("missing", {}),
        "anything": healing.anything(h),
        "heal": heal,
        "text": text,
        "short": short,
    }


def thread_rows(cpu: dict) -> list[dict]:
    """The nodes' threads by role, the busiest first: where their CPU went, and how often they waited
    (a context switch to sleep, then one more to wake) or were preempted, per request."""
    wall = cpu.get("wall_s") or 0
    rows = []
    for role, t in cpu.get("threads", {}).items():
        used = t["user_s"] + t["sys_s"]
        rows.append(
            {
                "role": role,
                "cores": used / wall if wall > 0 else None,
                "us_per_request": t.get("us_per_request"),
                "kernel_share": t["sys_s"] / used if used > 0 else None,
                "waits_per_request": t.get("waits_per_request"),
                "preemptions_per_request": t.get("preemptions_per_request"),
            }
        )
    return sorted(rows, key=lambda row: -(row["cores"] or 0))


def pause_rows(cpu: dict, labels: dict[str, str]) -> list[dict]:
    """Each node JVM's stop-the-world pauses in the phase: all its safepoints, and of them the GC's."""
    rows = []
    for pid, p in cpu.get("jvm_pauses", {}).items():
        rows.append(
            {
                "label": labels.get(str(pid), f"pid {pid}"),
                "safepoints": p["safepoints"],
                "stopped_ms": p["stopped_s"] * 1e3,
                "stopped_share": p["stopped_share"],
                "gc_pauses": p["gc_pauses"],
                "gc_ms": p["gc_s"] * 1e3,
                "mean_gc_ms": p["gc_s"] * 1e3 / p["gc_pauses"] if p["gc_pauses"] else None,
            }
        )
    return rows


def _node_names(run: dict) -> dict[int, str]:
    """Each process a local node ran as, by pid: a node started again during the run had several."""
    names = {}
    for n in run.get("nodes", []):
        for pid in n.get("pids") or [n["pid"]]:
            names[int(pid)] = n["name"]
    return names


def _restarted_as(phase: dict) -> dict[int, int]:
    """pid -> the pid its node was started again as, for each kill of the phase."""
    return {
        int(f["pid_before"]): int(f["pid_after"])
        for f in timeline.faults(phase)
        if f.get("pid_before") and f.get("pid_after")
    }


def series_cpu_s(samples: list[dict], interval_s: float) -> float | None:
    """A node's CPU seconds over the phase from its per-second samples: each answered sample's
    cores times the time since the node's previous answer (the first answer after seconds without
    one holds what the node used since its last answer, or since it started again)."""
    total, since, known = 0.0, None, False
    for i, s in enumerate(samples):
        since = s["t"] if since is None else since
        if not s.get("up") or s.get("cpu_cores") is None:
            continue
        end = samples[i + 1]["t"] if i + 1 < len(samples) else s["t"] + interval_s
        total += s["cpu_cores"] * (end - since)
        since, known = None, True
    return total if known else None


def node_rows(run: dict, phase: dict, ts: dict | None) -> list[dict]:
    """CPU per node: local nodes are processes (keyed by pid), in Kubernetes pods (keyed by name).
    A node killed during the phase has no figure of its process over the whole phase; its row is
    the sum of its per-second samples, both processes, when the phase recorded them."""
    cpu = phase.get("cpu", {})
    names, restarted = _node_names(run), _restarted_as(phase)
    requests = phase.get("result", {}).get("requests")
    rows = []
    for pid, v in cpu.get("processes", {}).items():
        local = str(pid).isdigit()
        name = names.get(int(pid), str(pid)) if local else str(pid)
        row = {
            "name": name,
            "pid": pid,
            "label": f"node {name} (pid {pid})" if local else f"pod {name}",
            "cores": v.get("cores"),
            "us_per_request": v.get("us_per_request"),
            "note": "",
        }
        if local and int(pid) in restarted:
            chain, now = [], int(pid)
            while now in restarted:
                now = restarted[now]
                chain.append(str(now))
            row["label"] = f"node {name} (pid {pid}, started again as {', then '.join(chain)})"
            samples = ((ts or {}).get("nodes") or {}).get(name)
            cpu_s = series_cpu_s(samples, ts.get("interval_s", 1.0)) if samples else None
            if fmt.missing(row["cores"]) and cpu_s is not None and cpu.get("wall_s"):
                row["cores"] = cpu_s / cpu["wall_s"]
                row["us_per_request"] = cpu_s * 1e6 / requests if requests else None
                row["note"] = (
                    f"Node {name} was killed and started again during the phase: its row adds up "
                    "what its per-second samples recorded, of both processes."
                )
        rows.append(row)
    return rows


def _file(run_dir: Path | None, rel: str | None) -> str | None:
    """A file the phase record names, when it is there to link to."""
    return rel if rel and run_dir and (run_dir / rel).is_file() else None


def phase_view(
    run: dict, phase: dict, prev: dict | None, run_dir: Path | None = None, prev_dir: Path | None = None
) -> dict:
    r = phase["result"]
    requested = r.get("requested_rate")
    cpu = phase.get("cpu", {})
    ts = timeline.load(run_dir, phase) if run_dir else None
    nodes = node_rows(run, phase, ts)
    slo = run["config"].get("slo_p99_ms")
    p99 = slo_p99(r)
    profiles, monitor = flames.profile_views(run_dir, phase, prev_dir, prev)
    return {
        "label": phase["label"],
        "scenario": phase["scenario"],
        "warmup": phase.get("warmup", False),
        "measured": is_measured(phase),
        "step": is_step(run, phase),
        "tool": r.get("tool", ""),
        "model": r.get("model", ""),
        "uncorrected": uncorrected(r),
        "commands": phase.get("commands", []),
        "requested": requested,
        "achieved": r.get("achieved_rate"),
        "achieved_share": r["achieved_rate"] / requested if requested and r.get("achieved_rate") is not None else None,
        "duration_s": r.get("duration_s"),
        # A request that carries many keys (the multi-get): the keys it asked for, and per second.
        "keys_per_request": r.get("keys_per_request"),
        "keys_rate": r.get("keys_rate"),
        "requests": r.get("requests"),
        "dropped": r.get("dropped_iterations"),
        "error_rate": r.get("error_rate", 0.0),
        "statuses": sorted(r.get("status_counts", {}).items()),
        "conditional": conditional_updates(r),
        "series": [{"name": n, "p": s["percentiles"], "mean": s.get("mean")} for n, s in series(r)],
        # What the SLO is held to: the phase's own series, not a single target's.
        "p99": p99,
        "slo_met": p99 is not None and slo is not None and p99 <= slo,
        "failed_thresholds": [k for k, ok in r.get("thresholds", {}).items() if not ok],
        "profiles": profiles,
        "monitor": monitor,
        "one_monitor": flames.one_monitor_line(profiles, monitor),
        "nodes": nodes,
        "threads": thread_rows(cpu),
        "pauses": pause_rows(cpu, {str(n["pid"]): n["label"] for n in nodes}),
        "loadgen": cpu.get("loadgen", {}),
        # Not measured when the nodes run elsewhere (a cluster on other machines).
        "others_cores": (cpu["others_cpu_s"] / cpu["wall_s"]) if cpu.get("wall_s") and "others_cpu_s" in cpu else None,
        "pods": r.get("pods", []),
        "latency_merge": r.get("latency_merge", ""),
        "machine_busy_share": cpu.get("machine_busy_share"),
        "healing": healing_view(phase),
        "faults": timeline.fault_rows(phase),
        "fault_records": timeline.faults(phase),
        "hgrm": _file(run_dir, phase.get("hgrm")),
        "timeseries": ts,
        "prev": prev,
    }


def comparison_rows(run: dict, prev_run: dict) -> list[dict]:
    """Each phase both runs have, series by series: this run's figures, the previous run's, and
    this one's as a multiple of the previous one's."""
    prev_phases = {p["label"]: p for p in prev_run.get("phases", [])}
    rows = []
    for phase in run.get("phases", []):
        old = prev_phases.get(phase["label"])
        if not old or not is_measured(phase):
            continue
        new_s, old_s = dict(series(phase["result"])), dict(series(old["result"]))
        for name in new_s:
            if name not in old_s:
                continue
            new_p, old_p = new_s[name]["percentiles"], old_s[name]["percentiles"]
            rates = phase["result"].get("achieved_rate"), old["result"].get("achieved_rate")
            pairs = [("achieved req/s", *rates, fmt.rate)]
            pairs += [(f"{key} ms", new_p.get(key), old_p.get(key), fmt.ms) for key in ("p50", "p99", "p99.9", "p100")]
            rows.append(
                {
                    "phase": phase["label"],
                    "series": name,
                    "cells": [
                        {"title": title, "this": f(a), "prev": f(b), "ratio": fmt.ratio(a, b)}
                        for title, a, b, f in pairs
                    ],
                }
            )
    return rows


def conditional_updates(result: dict) -> dict | None:
    """A conditional phase's updates made and refused with 412 (k6/conditional.js); None for others."""
    if "conditional_updates" not in result:
        return None
    return {"updates": result["conditional_updates"], "conflicts": result.get("conditional_conflicts", 0),
            "share": result.get("conflict_share", 0.0)}
