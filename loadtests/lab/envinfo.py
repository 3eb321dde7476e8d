"""Facts about the machine, the JVMs under test and the tools, for the report."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import psutil

from . import tools


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=cwd)
        return (out.stdout + out.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown ({e})"


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_gib() -> float:
    return psutil.virtual_memory().total / 1024**3


def os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


@functools.cache
def java_version(exe: str) -> str:
    return _run([exe, "-version"]).replace("\n", "; ")


def jvm(pid: int) -> dict:
    try:
        p = psutil.Process(pid)
        exe, cmdline = p.exe(), p.cmdline()
    except psutil.Error:
        exe, cmdline = "", []
    return {
        "pid": pid,
        "java": exe,
        "version": java_version(exe) if exe else "unknown",
        "command_line": " ".join(a for a in cmdline if a),
    }


def scheduling_group(pid: int | str = "self") -> tuple[str, str]:
    """What the kernel shares the CPU between before it shares it between threads: the process's
    cpu cgroup (cgroup v1's cpu controller, else v2's one hierarchy) and, when autogroups are on,
    its autogroup (one per session)."""
    lines = [line.split(":", 2) for line in _read(f"/proc/{pid}/cgroup").splitlines() if line.count(":") >= 2]
    cgroup = next((path for _, controllers, path in lines if "cpu" in controllers.split(",")), None)
    if cgroup is None:
        cgroup = next((path for _, controllers, path in lines if controllers == ""), "")
    autogroups = _read("/proc/sys/kernel/sched_autogroup_enabled").strip() == "1"
    return cgroup, (_read(f"/proc/{pid}/autogroup").split() or [""])[0] if autogroups else ""


def nodes_apart(pids: list[int]) -> list[int]:
    """The nodes that run in another scheduling group than this process, and so than the load
    generators (tools.spawn keeps those in the lab's): such a node gets the CPU as part of its group."""
    ours = scheduling_group()
    return [pid for pid in pids if scheduling_group(pid) != ours]


def scheduling(pids: list[int]) -> str:
    """The report's line on how the kernel shares the CPU between the nodes and the load generators."""
    apart = nodes_apart(pids)
    if not apart:
        return "the nodes and the load generators share one scheduling group: the kernel shares the CPU between their threads alike"
    return (
        f"node pid {', '.join(map(str, apart))} runs in another scheduling group than the load generators "
        "(another cgroup or session): the kernel shares the CPU between groups before threads, which on a "
        "busy machine lengthens the nodes' tail"
    )


def git() -> dict:
    commit = _run(["git", "rev-parse", "HEAD"], cwd=tools.ROOT)
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=tools.ROOT)
    return {"commit": commit, "dirty": bool(dirty.strip())}


def collect(pids: list[int], load_tool: str) -> dict:
    facts = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": platform.node(),
        "os": os_name(),
        "kernel": platform.release(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(memory_gib(), 1),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": sys.version.split()[0],
        "git": git(),
        "jvms": [jvm(pid) for pid in pids],
        "scheduling": scheduling(pids),
        "load_tool": load_tool,
        "k6": tools.k6_version(),
        "async_profiler": tools.PINS["ASYNC_PROFILER_VERSION"],
        "jattach": _run([tools.jattach()]).splitlines()[0],
    }
    try:
        w = tools.wrk()
        facts["wrk"] = {"path": w.path, "is_wrk2": w.is_wrk2, "version": w.version, "label": w.label}
    except SystemExit as e:
        facts["wrk"] = {"path": None, "is_wrk2": False, "version": str(e), "label": str(e)}
    return facts
