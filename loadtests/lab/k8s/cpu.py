"""CPU accounting of a phase in Kubernetes: each kvlab container's CPU time from its cgroup (read
with kubectl exec before and after the phase), each load generator pod's from bash's `times`
(lab.k8s.outputs), and this machine's busy time, which is the cluster's when it runs here."""

from __future__ import annotations

import math
import os
import re

from .. import procstat
from .kubectl import Kubectl, parallel
from .outputs import PodOutput

CGROUP_CPU = (
    "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null"
    " || cat /sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"
)


def container_cpu_seconds(text: str) -> float:
    """CPU seconds of a container from its cgroup: cgroup v2's cpu.stat (usage_usec) or v1's
    cpuacct.usage (nanoseconds)."""
    m = re.search(r"^usage_usec (\d+)$", text, re.M)
    if m:
        return int(m.group(1)) / 1e6
    text = text.strip()
    if text.isdigit():
        return int(text) / 1e9
    raise ValueError(f"no CPU usage in {text[:80]!r}")


def containers(kubectl: Kubectl, pods: list[str]) -> dict[str, float]:
    """Each pod's kvlab container's CPU seconds now; NaN for a pod that could not be read."""
    found = parallel(lambda pod: kubectl.run("exec", pod, "-c", "kvlab", "--", "sh", "-c", CGROUP_CPU, timeout=30), pods)
    out = {}
    for name, text in zip(pods, found):
        try:
            out[name] = container_cpu_seconds(text) if isinstance(text, str) else math.nan
        except ValueError:
            out[name] = math.nan
    return out


def of_phase(
    before: dict[str, float],
    after: dict[str, float],
    machine_before: procstat.CpuSample,
    machine_after: procstat.CpuSample,
    outputs: list[PodOutput],
    requests: int,
    loadgen: str,
    local: bool,
) -> dict:
    """The phase's CPU figures in the shape of lab.procstat.delta's (by pod name instead of pid),
    with the load generator's (loadgen: what it was) and, when the cluster runs on this machine,
    what other processes used."""
    wall = machine_after.wall - machine_before.wall
    processes = {}
    for name, start in before.items():
        used = after.get(name, math.nan) - start
        processes[name] = {
            "cpu_s": used,
            "cores": used / wall if wall > 0 else math.nan,
            "us_per_request": used * 1e6 / requests if requests else math.nan,
        }
    gen = sum(o.cpu_s for o in outputs if o.cpu_s is not None)
    busy = machine_after.machine_busy - machine_before.machine_busy
    total = machine_after.machine_total - machine_before.machine_total
    cpu = {
        "wall_s": wall,
        "processes": processes,
        "machine_busy_s": busy,
        "machine_busy_share": busy / total if total > 0 else math.nan,
        "cores": os.cpu_count(),
        "loadgen": {
            "cpu_s": gen,
            "cores": gen / wall if wall > 0 else math.nan,
            "tool": loadgen,
            "us_per_request": gen * 1e6 / requests if requests else math.nan,
        },
    }
    if local:
        ours = gen + sum(v["cpu_s"] for v in processes.values() if not math.isnan(v["cpu_s"]))
        cpu["others_cpu_s"] = max(0.0, busy - ours)
    return cpu
