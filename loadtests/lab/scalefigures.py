"""The scale benchmark's figures of one node at one size: its key counts (SIZES), what the process
wrote to disk, its memory, the data directory's size, and what its Prometheus page says about
RocksDB (write amplification, block-cache hit rates, the share of GETs served from the cache
without leaving the event loop). A metric the node does not export is None, shown as "–"."""

from __future__ import annotations

import os
import re
from pathlib import Path

import psutil

from . import promtext

UNITS = {"": 1, "k": 1000, "m": 1_000_000}
BLOCKS = ("data", "index", "filter")
HITS = "kvlab_rocksdb_block_cache_hits_total"
MISSES = "kvlab_rocksdb_block_cache_misses_total"
READS = "kvlab_storage_reads_total"
FLUSH_BYTES = "kvlab_rocksdb_flush_bytes_total"
COMPACTION_BYTES = "kvlab_rocksdb_compaction_bytes_total"
HEAP_USED = "jvm_memory_used_bytes"
HEAP_MAX = "jvm_memory_max_bytes"
PROPERTIES = (
    "block-cache-usage",
    "cur-size-all-mem-tables",
    "total-sst-files-size",
    "estimate-num-keys",
    "estimate-table-readers-mem",
)


def parse_size(text: str) -> int:
    """A key count: 20000, 20k, 1M, 1.5M."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not m:
        raise ValueError(f"bad size {text!r}: a key count like 100000, 100k or 1M")
    n = round(float(m.group(1)) * UNITS[m.group(2).lower()])
    if n <= 0:
        raise ValueError(f"bad size {text!r}: at least one key")
    return n


def parse_sizes(text: str) -> list[int]:
    """SIZES: key counts in ascending order, each step filling what the one before did not."""
    sizes = [parse_size(s) for s in text.split(",") if s.strip()]
    if not sizes:
        raise ValueError("SIZES names no size")
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"SIZES must grow: {text!r}")
    return sizes


def short(n: int) -> str:
    """A key count as SIZES writes it: 100k, 1M, 1.5M, 1234."""
    for unit, scale in (("M", 1_000_000), ("k", 1000)):
        if n >= scale and n % (scale // 10) == 0:
            return f"{n / scale:g}{unit}"
    return str(n)


def io_write_bytes(pid: int) -> int | None:
    """Bytes the process has caused to be written to storage (/proc/<pid>/io write_bytes)."""
    try:
        return psutil.Process(pid).io_counters().write_bytes
    except psutil.Error:
        return None


def rss_bytes(pid: int) -> int | None:
    """The process's resident memory (VmRSS)."""
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return None


def disk_bytes(path: Path, suffix: str = "") -> int:
    """Bytes of the files under path whose names end with suffix (what they hold, not the blocks
    they take)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f.endswith(suffix):
                try:
                    total += os.lstat(os.path.join(root, f)).st_size
                except OSError:
                    pass
    return total


def disk_use(path: Path) -> dict:
    """The data directory's bytes, and those of RocksDB's write-ahead logs (NNNNNN.log) in it."""
    return {"bytes": disk_bytes(path), "wal_bytes": disk_bytes(path, ".log")}


def counters(page: dict[str, float] | str) -> dict[str, float | None]:
    """The counters and gauges the benchmark reads from a node's parsed page (None: absent, or
    the page could not be read)."""
    ok = isinstance(page, dict)

    def t(name: str, **labels: str) -> float | None:
        return promtext.total(page, name, **labels) if ok else None

    out = {f"hits.{b}": t(HITS, block=b) for b in BLOCKS}
    out |= {f"misses.{b}": t(MISSES, block=b) for b in BLOCKS}
    out |= {"reads.cache": t(READS, tier="cache"), "reads.disk": t(READS, tier="disk")}
    out |= {"flush_bytes": t(FLUSH_BYTES), "compaction_bytes": t(COMPACTION_BYTES)}
    out |= {"heap_used": t(HEAP_USED, area="heap")}
    if ok:
        maxes = [v for s, v in page.items() if s.startswith(HEAP_MAX + "{") and 'area="heap"' in s and v > 0]
        out["heap_max"] = sum(maxes) if maxes else None
    else:
        out["heap_max"] = None
    out |= {f"property.{p}": t("kvlab_rocksdb", property=p) for p in PROPERTIES}
    return out


def delta(before: dict, after: dict, key: str) -> float | None:
    a, b = before.get(key), after.get(key)
    if a is None or b is None:
        return None
    return max(0.0, b - a)


def share(part: float | None, rest: float | None) -> float | None:
    """part / (part + rest); None when either is unknown or nothing was counted."""
    if part is None or rest is None or part + rest <= 0:
        return None
    return part / (part + rest)


def hit_rates(before: dict, after: dict) -> dict[str, float | None]:
    """Block-cache hit rates over an interval (data blocks, and all blocks), and the share of reads
    served from the cache tier (without leaving the event loop)."""
    hits = {b: delta(before, after, f"hits.{b}") for b in BLOCKS}
    misses = {b: delta(before, after, f"misses.{b}") for b in BLOCKS}
    known = [b for b in BLOCKS if hits[b] is not None and misses[b] is not None]
    return {
        "data_hit_rate": share(hits["data"], misses["data"]),
        "all_hit_rate": share(sum(hits[b] for b in known), sum(misses[b] for b in known)) if known else None,
        "event_loop_share": share(delta(before, after, "reads.cache"), delta(before, after, "reads.disk")),
        "data_hits": hits["data"],
        "data_misses": misses["data"],
    }


def write_amplification(io_before: int | None, io_after: int | None, before: dict, after: dict, keys: int, value_size: int) -> dict:
    """Bytes the node wrote to disk over a fill (and the settle after it) per byte of values
    written, and RocksDB's own share of it (flushes + compactions)."""
    values = keys * value_size
    written = io_after - io_before if io_before is not None and io_after is not None else None
    flush, compaction = delta(before, after, "flush_bytes"), delta(before, after, "compaction_bytes")
    rocksdb = flush + compaction if flush is not None and compaction is not None else None
    return {
        "value_bytes": values,
        "disk_write_bytes": written,
        "write_amplification": written / values if written is not None and values else None,
        "flush_bytes": flush,
        "compaction_bytes": compaction,
        "rocksdb_write_bytes": rocksdb,
        "rocksdb_write_amplification": rocksdb / values if rocksdb is not None and values else None,
    }
