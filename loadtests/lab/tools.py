"""Where the lab's tools are, and which versions they are."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

LOADTESTS = Path(__file__).resolve().parent.parent
ROOT = LOADTESTS.parent
TOOLS = Path(os.environ.get("KVLAB_TOOLS", ROOT / ".tools"))
INSTALL = LOADTESTS / "tools" / "install.sh"
PROFILE_SH = LOADTESTS / "profiler" / "profile.sh"


def _versions() -> dict[str, str]:
    pins = {}
    for line in (LOADTESTS / "tools" / "versions.env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            name, value = line.split("=", 1)
            pins[name.strip()] = value.strip()
    return pins


PINS = _versions()


@functools.cache
def project_version() -> str:
    """kvlab's version, the root pom.xml's own (the images are tagged with it: mk/image.mk)."""
    pom = ElementTree.parse(ROOT / "pom.xml").getroot()
    return pom.findtext("{http://maven.apache.org/POM/4.0.0}version")


def spawn(argv: list[str], out, **popen) -> subprocess.Popen:
    """Starts a process of the lab's (a load generator, a profiler, a node) with stdin closed and
    stdout and stderr to `out`, in a process group of its own: the lab stops it with os.killpg, and
    a Ctrl-C in the terminal reaches the lab, which stops it, not the process itself.

    It stays in the lab's session on purpose. On Linux a session is a scheduler autogroup
    (/proc/sys/kernel/sched_autogroup_enabled), and the kernel shares the CPU between autogroups
    before it shares it between their threads: a wrk in a session of its own weighed as much as the
    three nodes of `make lab` together (their session is the lab's), and on two busy cores the
    cluster's PUT p99 was 1.5-5 ms longer in alternated runs (docs/notes/2026-11-22-lab-measurements.md)."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, process_group=0, **popen)


def rel(path: Path | str) -> str:
    """A path relative to the repository root when it is inside it (for readable commands)."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def first_line(cmd: list[str]) -> str:
    """The first line a command prints (a version, typically), or why it could not run."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown ({e})"
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


@dataclass(frozen=True)
class Wrk:
    path: str
    is_wrk2: bool
    version: str

    @property
    def label(self) -> str:
        if self.is_wrk2:
            return f"wrk2 ({self.path})"
        return (
            f"Debian's wrk, not wrk2 ({self.path}): a closed-loop tool; the lab paces it with a "
            "Lua delay() hook, and its latency is measured from the send, not corrected for "
            "coordinated omission"
        )


@functools.cache
def k6() -> str:
    path = TOOLS / "bin" / "k6"
    if not path.exists():
        raise SystemExit(f"no k6 at {path}: run {rel(INSTALL)}")
    return str(path)


@functools.cache
def k6_version() -> str:
    return first_line([k6(), "version"])


@functools.cache
def wrk() -> Wrk:
    """wrk2 when one is on PATH (as wrk2, or a wrk with -R), else Debian's wrk."""
    for name in ("wrk2", "wrk"):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path], capture_output=True, text=True)
        usage = out.stdout + out.stderr
        is_wrk2 = name == "wrk2" or "--rate" in usage
        if name == "wrk" and not is_wrk2 and shutil.which("wrk2"):
            continue
        version = first_line([path, "-v"])
        return Wrk(path, is_wrk2, version)
    raise SystemExit(f"no wrk or wrk2 on PATH: run {rel(INSTALL)}")


@functools.cache
def jattach() -> str:
    path = shutil.which(os.environ.get("JATTACH", "jattach"))
    if not path:
        raise SystemExit(f"no jattach on PATH: run {rel(INSTALL)}")
    return path


@functools.cache
def profiler_lib() -> Path:
    lib = Path(
        os.environ.get(
            "ASYNC_PROFILER_LIB",
            TOOLS / "async-profiler" / PINS["ASYNC_PROFILER_VERSION"] / "lib" / "libasyncProfiler.so",
        )
    )
    if not lib.exists():
        raise SystemExit(f"no async-profiler library at {lib}: run {rel(INSTALL)}")
    return lib
