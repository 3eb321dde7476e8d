"""The scale benchmark's part of a report (run.json's "scale", lab.scale): one row per size with
every figure, and the figures against the key count (its targets are the verdict's:
lab.report.verdicts.scale)."""

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
        "properties": properties,
        "memory": memory,
        "limit_mib": memory["limit_bytes"] / MIB if memory.get("limit_bytes") else None,
        "plots": [],
    }
