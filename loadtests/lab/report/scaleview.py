"""The scale benchmark's part of a report (run.json's "scale", lab.scale): one row per size with
every figure, the targets and whether each was met, and the figures against the key count."""

from __future__ import annotations

from . import fmt

MIB = 1024**2


def _get(d: dict | None, *path, default=None):
    for key in path:
        if not isinstance(d, dict) or d.get(key) is None:
            return default
        d = d[key]
    return d


def _number(v) -> float | None:
    return None if fmt.missing(v) else v


def row(step: dict, value_size: int) -> dict:
    """One size's figures (None where the run has none), in the units the table shows."""
    fill = step.get("fill") or {}
    rows = step.get("rows") or {}
    memory = step.get("memory") or {}
    cache = step.get("get_cache") or {}
    out = {
        "keys": step["keys"],
        "filled_here": bool(fill),
        "fill_rate": fill.get("rate"),
        "fill_s": fill.get("seconds"),
        "fill_failed": fill.get("failed"),
        "settle_s": _get(fill, "settle", "settle_s", default=_get(step, "settle", "settle_s")),
        "write_amplification": fill.get("write_amplification"),
        "rocksdb_write_amplification": fill.get("rocksdb_write_amplification"),
        "disk_write_mib": _mib(fill.get("disk_write_bytes")),
        "disk_mib": _mib(step.get("disk_bytes")),
        "disk_after_fill_mib": _mib(_get(step, "disk_after_fill", "bytes")),
        "wal_after_fill_mib": _mib(_get(step, "disk_after_fill", "wal_bytes")),
        "values_mib": step["keys"] * value_size / MIB,
        "disk_per_value_byte": (
            step["disk_after_fill"]["bytes"] / (step["keys"] * value_size) if _get(step, "disk_after_fill", "bytes") is not None else None
        ),
        "heap_used_mib": _mib(memory.get("heap_used")),
        "heap_max_mib": _mib(memory.get("heap_max")),
        "rss_mib": _mib(memory.get("rss")),
        "cgroup_current_mib": _mib(_get(memory, "cgroup", "current")),
        "cgroup_peak_mib": _mib(_get(memory, "cgroup", "peak")),
        "oom_kill": _get(memory, "cgroup", "oom_kill"),
        "data_hit_rate": cache.get("data_hit_rate"),
        "all_hit_rate": cache.get("all_hit_rate"),
        "event_loop_share": cache.get("event_loop_share"),
        "alive": step.get("alive"),
        "properties": step.get("properties") or {},
    }
    for name in ("status", "get", "put"):
        r = rows.get(name) or {}
        out[name] = {
            "achieved": r.get("achieved"),
            "p50": _number(r.get("p50")),
            "p99": _number(r.get("p99")),
            "us": _number(r.get("server_us")),
            "ratio": _number(r.get("ratio")),
            "ratio_text": "–" if fmt.missing(r.get("ratio")) else f"{r['ratio']:.2f}x",
            "errors": r.get("error_rate"),
        }
    return out


def _mib(v):
    return v / MIB if v is not None else None


def checks(scale: dict, rows: list[dict]) -> list[dict]:
    """The targets: GET p99 at the largest size within max_p99_growth of the smallest's; the fill
    at min_fill_rate or faster at every size filled in this run; the node alive, not OOM-killed."""
    targets = scale.get("targets", {})
    growth_max, fill_min = targets.get("max_p99_growth", 2.0), targets.get("min_fill_rate", 20_000)
    out = []
    p99s = [(r["keys"], r["get"]["p99"]) for r in rows if r["get"]["p99"] is not None]
    if len(p99s) >= 2 and p99s[0][1] > 0:
        growth = p99s[-1][1] / p99s[0][1]
        out.append({
            "target": f"GET p99 at the largest size within {growth_max:g}x of the smallest size's",
            "met": growth <= growth_max,
            "detail": f"{fmt.ms(p99s[-1][1])} ms at {fmt.rate(p99s[-1][0])} keys, {fmt.ms(p99s[0][1])} ms at "
            f"{fmt.rate(p99s[0][0])} keys: {growth:.2f}x",
        })
    else:
        out.append({"target": f"GET p99 at the largest size within {growth_max:g}x of the smallest size's",
                    "met": None, "detail": "fewer than two sizes measured"})
    filled = [(r["keys"], r["fill_rate"]) for r in rows if r["fill_rate"] is not None]
    slow = [(k, v) for k, v in filled if v < fill_min]
    out.append({
        "target": f"fill at {fmt.rate(fill_min)} keys/s or faster at every size",
        "met": (not slow) if filled else None,
        "detail": "; ".join(f"{fmt.rate(v)} keys/s to {fmt.rate(k)}" for k, v in filled) or "no fill ran (data reused)",
    })
    oom = (scale.get("cgroup_after") or {}).get("oom_kill")
    survived = scale.get("survived")
    why = scale.get("failure") or ""
    if scale.get("exit_code") is not None and "exited" not in why:
        why = f"{why}; the node's process exited with {scale['exit_code']}".lstrip("; ")
    if oom:
        why = f"{why}; the cgroup counted {oom} OOM kill(s)".lstrip("; ")
    out.append({
        "target": "the node survived: no OOM kill, still running and answering",
        "met": survived,
        "detail": why or "still running and answering after the last size",
    })
    return out


def view(run: dict) -> dict | None:
    scale = run.get("scale")
    if not scale:
        return None
    rows = [row(s, scale.get("value_size", 1024)) for s in scale.get("steps", [])]
    properties = sorted({p for r in rows for p in r["properties"]})
    memory = scale.get("memory", {})
    return {
        "doc": scale,
        "rows": rows,
        "checks": checks(scale, rows),
        "properties": properties,
        "memory": memory,
        "limit_mib": memory["limit_bytes"] / MIB if memory.get("limit_bytes") else None,
        "plots": [],
    }
