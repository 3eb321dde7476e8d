"""Stop-the-world pauses of local JVMs, from the counters every HotSpot JVM publishes in
/tmp/hsperfdata_<user>/<pid> (the file jstat reads): safepoints and the time all Java threads stood
still in them, and of those, the garbage collector's pauses."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import psutil

MAGIC = 0xCAFEC0C0
HEADER = "iiqii"  # used, overflow, modification time, offset of the first entry, number of entries
ENTRY = "iiicccci"  # entry length, name offset, vector length, type, flags, units, variability, data offset


def perf_file(pid: int) -> str:
    """Where the JVM of this process keeps its counters: /tmp (not java.io.tmpdir), by its user's name."""
    return f"/tmp/hsperfdata_{psutil.Process(pid).username()}/{pid}"


def read_counters(data: bytes) -> dict[str, int]:
    """The scalar long counters of a perf data file, by name (strings and arrays are skipped)."""
    if len(data) < 32 or struct.unpack(">I", data[:4])[0] != MAGIC:
        raise ValueError("not a HotSpot perf data file")
    order = "<" if data[4] == 1 else ">"
    _, _, _, offset, count = struct.unpack(order + HEADER, data[8:32])
    counters = {}
    for _ in range(count):
        length, name_at, vector, kind, _, _, _, data_at = struct.unpack(order + ENTRY, data[offset : offset + 20])
        if length <= 0:
            raise ValueError("a perf data entry of no length")
        name_start = offset + name_at
        name = data[name_start : data.index(b"\0", name_start)].decode("ascii", "replace")
        if kind == b"J" and vector == 0:
            counters[name] = struct.unpack(order + "q", data[offset + data_at : offset + data_at + 8])[0]
        offset += length
    return counters


@dataclass(frozen=True)
class Pauses:
    """A JVM's pause counters since it started."""

    safepoints: int
    stopped_s: float  # reaching the safepoints and standing in them
    gc_pauses: int
    gc_s: float


def pauses(counters: dict[str, int]) -> Pauses:
    ticks = counters["sun.os.hrt.frequency"]
    collectors = {name.rsplit(".", 1)[0] for name in counters if name.startswith("sun.gc.collector.")}
    return Pauses(
        counters["sun.rt.safepoints"],
        (counters["sun.rt.safepointSyncTime"] + counters["sun.rt.safepointTime"]) / ticks,
        sum(counters[f"{c}.invocations"] for c in collectors),
        sum(counters[f"{c}.time"] for c in collectors) / ticks,
    )


def sample(pids: list[int]) -> dict[int, Pauses]:
    """The pause counters of those processes that publish them: a JVM run with -XX:-UsePerfData, a
    process that is gone, or one that is not a JVM is left out."""
    found = {}
    for pid in pids:
        try:
            with open(perf_file(pid), "rb") as f:
                found[pid] = pauses(read_counters(f.read()))
        except (OSError, KeyError, ValueError, struct.error, psutil.Error):
            continue
    return found


def delta(before: dict[int, Pauses], after: dict[int, Pauses], wall_s: float) -> dict[int, dict]:
    """Per process sampled both times: its pauses in between, and the share of the time it stood still."""
    out = {}
    for pid, old in before.items():
        new = after.get(pid)
        if new is None:
            continue
        stopped = new.stopped_s - old.stopped_s
        out[pid] = {
            "safepoints": new.safepoints - old.safepoints,
            "stopped_s": stopped,
            "stopped_share": stopped / wall_s if wall_s > 0 else float("nan"),
            "gc_pauses": new.gc_pauses - old.gc_pauses,
            "gc_s": new.gc_s - old.gc_s,
        }
    return out
