"""CPU time of processes and of the whole machine (psutil), and of the processes' threads by role
(/proc: psutil's threads() has a thread's CPU times but not its name, start time or context
switches, which the roles and the per-thread waits need, and reads the same files for them)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import psutil

CLK_TCK = os.sysconf("SC_CLK_TCK")


def read_stat(path: str) -> tuple[str, list[str]]:
    """A /proc stat file: the name in parentheses, and the fields after it (field 3 is at index 0)."""
    with open(path) as f:
        stat = f.read()
    return stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads (not its children's); a process
    that is gone raises ProcessLookupError."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.NoSuchProcess as e:
        raise ProcessLookupError(pid) from e
    return times.user + times.system


def running(pid: int) -> bool:
    """Whether the process exists and has not exited (a child not yet reaped is a zombie)."""
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.Error:
        return False


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine since boot, all cores; idle and iowait are not busy,
    and guest time is counted once (it is part of user)."""
    t = psutil.cpu_times()
    total = t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal
    return total - t.idle - t.iowait, total


# A node JVM's threads by what they do, from the first characters of their names (Linux keeps 15).
THREAD_ROLES = (
    ("reactor-http-", "event loops (HTTP, peers)"),
    ("kvlab-storage", "storage calls (RocksDB reads, writes)"),
    ("rocksdb:high", "RocksDB flushes"),
    ("rocksdb:low", "RocksDB compactions"),
    ("C1 CompilerThre", "JIT compilers"),
    ("C2 CompilerThre", "JIT compilers"),
    ("GC Thread", "garbage collector, safepoints"),
    ("G1 ", "garbage collector, safepoints"),
    ("VM Thread", "garbage collector, safepoints"),
)
OTHER_THREADS = "other threads"


def thread_role(name: str) -> str:
    return next((role for prefix, role in THREAD_ROLES if name.startswith(prefix)), OTHER_THREADS)


@dataclass(frozen=True)
class ThreadTimes:
    """One thread's counters: CPU seconds in user space and in the kernel, and context switches, the
    voluntary ones (it waited: a lock, a queue, I/O) and the involuntary ones (it was preempted)."""

    role: str
    started: int  # clock ticks after boot: tells a thread from a later one with the same id
    user_s: float
    sys_s: float
    waits: int
    preemptions: int


COUNTERS = ("user_s", "sys_s", "waits", "preemptions")


def thread_times(pid: int) -> dict[int, ThreadTimes]:
    """The counters of every thread of a process, by thread id; threads that end meanwhile are skipped."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name, fields = read_stat(f"/proc/{pid}/task/{tid}/stat")
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except (FileNotFoundError, ProcessLookupError):
            continue
        threads[int(tid)] = ThreadTimes(
            thread_role(name),
            int(fields[19]),
            int(fields[11]) / CLK_TCK,
            int(fields[12]) / CLK_TCK,
            int(status["voluntary_ctxt_switches"]),
            int(status["nonvoluntary_ctxt_switches"]),
        )
    return threads


@dataclass
class CpuSample:
    wall: float
    machine_busy: float
    machine_total: float
    processes: dict[int, float]
    # Per process, its threads' counters; only when asked for (reading them costs a file per thread).
    threads: dict[int, dict[int, ThreadTimes]] = field(default_factory=dict)


def sample(pids: list[int], threads: bool = False) -> CpuSample:
    busy, total = machine_cpu_seconds()
    procs, per_thread = {}, {}
    for pid in pids:
        try:
            procs[pid] = process_cpu_seconds(pid)
            if threads:
                per_thread[pid] = thread_times(pid)
        except (FileNotFoundError, ProcessLookupError):
            procs[pid] = float("nan")
    return CpuSample(time.monotonic(), busy, total, procs, per_thread)


def roles_delta(before: CpuSample, after: CpuSample) -> dict[str, dict]:
    """What the processes' threads used between two samples, summed by role over all the processes.
    A thread started meanwhile counts from zero; one that ended meanwhile is not counted."""
    roles: dict[str, dict] = {}
    for pid, threads in after.threads.items():
        old_threads = before.threads.get(pid, {})
        for tid, now in threads.items():
            old = old_threads.get(tid)
            if old is None or old.started != now.started:  # new, or a new thread with an ended one's id
                old = ThreadTimes(now.role, now.started, 0.0, 0.0, 0, 0)
            r = roles.setdefault(now.role, dict.fromkeys(COUNTERS, 0))
            for counter in COUNTERS:
                r[counter] += getattr(now, counter) - getattr(old, counter)
    return roles


def delta(before: CpuSample, after: CpuSample) -> dict:
    """CPU used between two samples: per process (seconds and share of one core), the machine, and
    when the samples hold threads, the processes' threads by role."""
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
    } | ({"threads": roles_delta(before, after)} if after.threads else {})
