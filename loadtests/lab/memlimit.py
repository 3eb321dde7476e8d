"""The memory a node gets as the Helm chart gives it: the chart's javaOpts and memory limit, read
from its values.yaml (so the benchmark cannot drift from the chart), and, when this machine can,
the limit enforced on the node's JVM by a cgroup of its own (v2, or v1 where v1 holds the memory
controller), made before the JVM starts so the
JVM sizes its heap from the limit exactly as in the container. Where it cannot (not root, no
memory controller), the heap is capped with -Xmx at half the limit instead, and the
report says the limit was not enforced."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import isolation, tools

CGROUP_PREFIX = "kvlab-scale-"
UNITS = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "ki": 1024, "mi": 1024**2, "gi": 1024**3, "ti": 1024**4}


def chart_values() -> Path:
    """The kvlab chart's values.yaml (helm/<chart>/, the chart whose Chart.yaml names kvlab)."""
    for chart in sorted((tools.ROOT / "helm").glob("*/Chart.yaml")):
        if re.search(r"^name:\s*kvlab\s*$", chart.read_text(), re.M):
            return chart.with_name("values.yaml")
    raise SystemExit(f"no kvlab Helm chart under {tools.rel(tools.ROOT / 'helm')}")


def _unquote(v: str) -> str:
    v = v.split(" #", 1)[0].strip()
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'" else v


def chart_memory(text: str) -> tuple[str, str]:
    """The chart's top-level javaOpts and resources.limits.memory from values.yaml's text (the two
    keys only: a YAML parser is not among the lab's packages)."""
    java_opts = memory = None
    path: list[tuple[int, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        while path and path[-1][0] >= indent:
            path.pop()
        keys = [k for _, k in path] + [key]
        if keys == ["javaOpts"]:
            java_opts = _unquote(value)
        elif keys == ["resources", "limits", "memory"]:
            memory = _unquote(value)
        if not value.strip():
            path.append((indent, key))
    if java_opts is None or memory is None:
        raise ValueError("values.yaml has no top-level javaOpts or resources.limits.memory")
    return java_opts, memory


def parse_bytes(text: str) -> int:
    """Bytes from a Kubernetes quantity: 1Gi, 512Mi, 1G, 2000000."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]i?)?\s*", text)
    if not m or (m.group(2) or "").lower() not in UNITS:
        raise ValueError(f"bad memory size {text!r}: use 1Gi, 512Mi, 2G or bytes")
    return int(float(m.group(1)) * UNITS[(m.group(2) or "").lower()])


@dataclass
class MemoryPlan:
    """How the node's memory is bounded: its limit (None: none), the JVM options, where they come
    from, whether a cgroup enforces the limit (and why not), and that cgroup."""

    limit_bytes: int | None
    limit_text: str
    java_options: str
    source: str
    enforced: bool = False
    why_not: str = ""
    cgroup: Path | None = None
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict:
        return {
            "limit_bytes": self.limit_bytes,
            "limit": self.limit_text,
            "java_options": self.java_options,
            "source": self.source,
            "enforced": self.enforced,
            "why_not": self.why_not,
            "cgroup": str(self.cgroup) if self.cgroup else None,
        }


def cgroup_unavailable(mount: Path | None, root: bool) -> str:
    """Why a memory-limited cgroup v2 cannot be made here, or "" when it can."""
    if not root:
        return "the lab does not run as root"
    if mount is None:
        return "cgroup v2 is not mounted under /sys/fs/cgroup"
    try:
        controllers = (mount / "cgroup.subtree_control").read_text().split()
    except OSError as e:
        return f"{mount}/cgroup.subtree_control cannot be read: {e}"
    if "memory" not in controllers:
        return f"the cgroup v2 at {mount} does not hand its children the memory controller (cgroup v1 holds it)"
    return ""


def memory_cgroup_v1(mountinfo: str | None = None, own: str | None = None) -> Path | None:
    """This process's cgroup in the cgroup v1 memory hierarchy (a child made there is ours to
    limit), or None where there is none."""
    mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
    own = own if own is not None else Path("/proc/self/cgroup").read_text()
    point = None
    for line in mountinfo.splitlines():
        fields, _, after = line.partition(" - ")
        parts, fs = fields.split(), after.split()
        if fs[:1] == ["cgroup"] and len(fs) > 2 and "memory" in fs[2].split(",") and len(parts) > 4 and parts[3] == "/":
            point = Path(parts[4])
    if point is None:
        return None
    for line in own.splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return point / path.lstrip("/")
    return None


def plan(memory_limit: str, values: Path | None = None, mount: Path | None = None, root: bool | None = None) -> MemoryPlan:
    """memory_limit: "helm" (the chart's), "none", or a size (1Gi). The JVM options are the chart's."""
    values = values or chart_values()
    java_opts, chart_limit = chart_memory(values.read_text())
    source = f"{tools.rel(values)}: javaOpts, resources.limits.memory"
    if memory_limit.strip().lower() == "none":
        return MemoryPlan(None, "none", java_opts, source, why_not="MEMORY_LIMIT=none: no limit")
    text = chart_limit if memory_limit.strip().lower() in ("", "helm") else memory_limit.strip()
    if text != chart_limit:
        source = f"{tools.rel(values)}: javaOpts; MEMORY_LIMIT={text}"
    limit = parse_bytes(text)
    if root is None:
        root = os.geteuid() == 0
    if mount is None and root:
        mount = isolation.cgroup2_mount()
        why = cgroup_unavailable(mount, root)
        if why and memory_cgroup_v1():
            mount, why = memory_cgroup_v1(), ""  # a hybrid host: cgroup v1 holds the memory controller
    else:
        why = cgroup_unavailable(mount, root)
    p = MemoryPlan(limit, text, java_opts, source, enforced=True, cgroup=mount / f"{CGROUP_PREFIX}{os.getpid()}" if mount else None)
    return unenforced(p, why) if why else p


def unenforced(p: MemoryPlan, why: str) -> MemoryPlan:
    """The plan without a cgroup: the heap capped at half the limit with -Xmx, and why."""
    half = f"-Xmx{p.limit_bytes // 2 // 1024**2}m"
    return MemoryPlan(p.limit_bytes, p.limit_text, f"{p.java_options} {half}", p.source,
                      why_not=f"{why}: the heap capped with {half} instead")


def make_cgroup(p: MemoryPlan) -> None:
    """The plan's cgroup, made with the limit on memory and no swap."""
    p.cgroup.mkdir()
    p.notes.extend(set_limit(p.cgroup, p.limit_bytes))


def set_limit(cgroup: Path, limit_bytes: int) -> list[str]:
    """Caps the cgroup's memory at limit_bytes, swap included (v1: memory.limit_in_bytes and
    memory.memsw.limit_in_bytes; v2: memory.max and memory.swap.max = 0); notes on what the kernel
    lacks."""
    if (cgroup / "memory.limit_in_bytes").exists():
        (cgroup / "memory.limit_in_bytes").write_text(str(limit_bytes))
        swap, no_swap = cgroup / "memory.memsw.limit_in_bytes", str(limit_bytes)
    else:
        (cgroup / "memory.max").write_text(str(limit_bytes))
        swap, no_swap = cgroup / "memory.swap.max", "0"
    if not swap.exists():
        return [f"the kernel has no {swap.name} (no swap accounting)"]
    swap.write_text(no_swap)
    return []


def enter(cgroup: Path):
    """A preexec function: the child process moves itself into cgroup before it runs the JVM."""

    def move() -> None:
        (cgroup / "cgroup.procs").write_text(str(os.getpid()))

    return move


def remove_cgroup(cgroup: Path | None) -> str:
    """Removes the cgroup (its processes must have exited); what went wrong, or ""."""
    if cgroup is None or not cgroup.exists():
        return ""
    try:
        cgroup.rmdir()
        return ""
    except OSError as e:
        return f"could not remove {cgroup}: {e}"


def cgroup_memory(cgroup: Path | None) -> dict:
    """memory.current, memory.peak (bytes) and memory.events' oom and oom_kill counts; None for
    what cannot be read (no cgroup, an older kernel)."""
    out = {"current": None, "peak": None, "oom": None, "oom_kill": None}
    if cgroup is None:
        return out
    v1 = (cgroup / "memory.usage_in_bytes").exists()
    files = {"current": "memory.usage_in_bytes", "peak": "memory.max_usage_in_bytes"} if v1 else \
        {"current": "memory.current", "peak": "memory.peak"}
    for name, file in files.items():
        try:
            out[name] = int((cgroup / file).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    try:
        # v1's memory.oom_control has oom_kill only (and no count of OOM events apart from it)
        for line in (cgroup / ("memory.oom_control" if v1 else "memory.events")).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key in ("oom", "oom_kill"):
                out[key] = int(value)
    except (OSError, ValueError):
        pass
    return out

