"""CPU time of processes and of the whole machine, from /proc."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, all its threads, in seconds (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine since boot, all cores (the cpu line of /proc/stat)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])  # guest time is already in user
    return (total - idle) / CLK_TCK, total / CLK_TCK


@dataclass
class CpuSample:
    wall: float
    machine_busy: float
    machine_total: float
    processes: dict[int, float]


def sample(pids: list[int]) -> CpuSample:
    busy, total = machine_cpu_seconds()
    procs = {}
    for pid in pids:
        try:
            procs[pid] = process_cpu_seconds(pid)
        except (FileNotFoundError, ProcessLookupError):
            procs[pid] = float("nan")
    return CpuSample(time.monotonic(), busy, total, procs)


def delta(before: CpuSample, after: CpuSample) -> dict:
    """CPU used between two samples: per process (seconds and share of one core) and the machine."""
    wall = after.wall - before.wall
    procs = {}
    for pid, t0 in before.processes.items():
        used = after.processes.get(pid, float("nan")) - t0
        procs[pid] = {"cpu_s": used, "cores": used / wall if wall > 0 else float("nan")}
    busy = after.machine_busy - before.machine_busy
    total = after.machine_total - before.machine_total
    return {
        "wall_s": wall,
        "processes": procs,
        "machine_busy_s": busy,
        "machine_busy_share": busy / total if total > 0 else float("nan"),
        "cores": os.cpu_count(),
    }
