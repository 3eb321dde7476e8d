"""Cutting a local process off the network for a while, as a node on the wrong side of a partition:
what it sends and what is sent to it is dropped, silently, in both directions, and nothing else on
the machine is touched.

An nftables table of its own (inet kvlab_cutoff_<key>) drops
  - every packet to or from the node's listening ports (its clients and its peers calling it);
  - every packet of the TCP connections the node holds when the cut begins (its own calls to its
    peers: a socket keeps the cgroup it was made in, so these are matched by their addresses);
  - every packet from a socket made in the cgroup v2 the node is moved into (kvlab-cutoff-<key>):
    whatever it connects to meanwhile.
Releasing deletes the table, moves the node back to its own cgroup and removes the one made for it.
A table of its own is never rewritten by iptables-restore (as a Kubernetes network-policy agent on
the same machine does with the iptables tables), and deleting it removes every rule at once.

Needs root, the nft command (Debian: nftables) and cgroup v2 mounted under /sys/fs/cgroup (alone
or beside v1, as /sys/fs/cgroup/unified): unavailable() says which is missing."""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import shutil
import subprocess
from pathlib import Path

import psutil

TABLE_PREFIX = "kvlab_cutoff_"
CGROUP_PREFIX = "kvlab-cutoff-"
# nft names a cgroup by its path under this directory, whatever the cgroup2 mount point below it.
NFT_CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup2_mount(mountinfo: str | None = None) -> Path | None:
    """Where cgroup v2 is mounted, when under /sys/fs/cgroup (where nft looks for cgroups)."""
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    for line in mountinfo.splitlines():
        fields, _, after = line.partition(" - ")
        parts = fields.split()
        if after.split()[:1] == ["cgroup2"] and len(parts) > 4:
            point = Path(parts[4])
            if point == NFT_CGROUP_ROOT or NFT_CGROUP_ROOT in point.parents:
                return point
    return None


def _nft() -> str:
    # Debian puts it in /usr/sbin, which a user's PATH may leave out.
    return shutil.which("nft") or shutil.which("nft", path="/usr/sbin:/sbin") or "nft"


def nft(script: str, check: bool = False) -> None:
    """Runs an nft script (one transaction: all of it or nothing); RuntimeError with nft's words."""
    argv = [_nft(), *(["--check"] if check else []), "-f", "-"]
    r = subprocess.run(argv, input=script, capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(f"nft: {r.stderr.strip() or r.stdout.strip() or f'exit {r.returncode}'}")


@functools.cache
def unavailable() -> str:
    """Why a node cannot be cut off on this machine, or "" when it can (checked once: root, nft, a
    cgroup v2 mount, and the kernel accepting the rules)."""
    if os.geteuid() != 0:
        return (
            "cutting a node off needs root (it adds an nftables table and moves the node into a cgroup); "
            "run the lab as root, as CI does"
        )
    if _nft() == "nft":
        return "cutting a node off needs the nft command: apt-get install nftables (make lab does, as root)"
    mount = cgroup2_mount()
    if mount is None:
        return "cutting a node off needs cgroup v2 mounted under /sys/fs/cgroup (alone or as .../unified)"
    probe = mount / f"{CGROUP_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir(exist_ok=True)
        nft(ruleset(f"probe_{os.getpid()}", (1,), [], probe), check=True)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return f"this machine refuses the cut-off's rules: {e}"
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()
    return ""


def table(key: str) -> str:
    return f"{TABLE_PREFIX}{key}"


def ruleset(key: str, ports: tuple[int, ...], flows: list[tuple[str, int, str, int]], cgroup: Path) -> str:
    """The nft script that makes the cut: ports are the node's listening ports, flows its
    connections (local address, port, remote address, port), cgroup the one it is moved into."""
    listed = ", ".join(str(p) for p in ports)
    out = [
        f"    tcp dport {{ {listed} }} drop",
        f"    tcp sport {{ {listed} }} drop",
    ]
    for family, ip in (("ip", 4), ("ip6", 6)):
        both = [f for f in flows if ipaddress.ip_address(f[0]).version == ip]
        # Each connection in both directions: what the node sends and what its peer answers.
        tuples = sorted({t for la, lp, ra, rp in both for t in (f"{la} . {lp} . {ra} . {rp}", f"{ra} . {rp} . {la} . {lp}")})
        if tuples:
            out.append(f"    {family} saddr . tcp sport . {family} daddr . tcp dport {{ {', '.join(tuples)} }} drop")
    # The cut-off cgroup is a child of the cgroup2 root: level 1 of its sockets' cgroup ancestry.
    out.append(f'    socket cgroupv2 level 1 "{cgroup.relative_to(NFT_CGROUP_ROOT)}" drop')
    rules = "\n".join(out)
    return (
        f"table inet {table(key)} {{\n"
        "  chain output {\n    type filter hook output priority -10; policy accept;\n"
        f"{rules}\n  }}\n"
        "  chain input {\n    type filter hook input priority -10; policy accept;\n"
        f"    tcp dport {{ {listed} }} drop\n  }}\n}}\n"
    )


def flows_of(pid: int) -> list[tuple[str, int, str, int]]:
    """The TCP connections process pid holds (not its listening sockets): local address, port,
    remote address, port. IPv4-mapped IPv6 addresses (a JVM's sockets) are given as IPv4."""

    def plain(address: str) -> str:
        a = ipaddress.ip_address(address)
        return str(a.ipv4_mapped) if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped else str(a)

    return [
        (plain(c.laddr.ip), c.laddr.port, plain(c.raddr.ip), c.raddr.port)
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.raddr and c.status != psutil.CONN_LISTEN
    ]


def cgroup_of(pid: int) -> str:
    """The process's cgroup v2 path (from the "0::" line of /proc/<pid>/cgroup)."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:] or "/"
    return "/"


def _move(pid: int, mount: Path, path: str) -> None:
    (mount / path.lstrip("/") / "cgroup.procs").write_text(str(pid))


def cut(key: str, pid: int, ports: tuple[int, ...]) -> str:
    """Cuts process pid off; returns its own cgroup, to give to release(). The node is moved first,
    so no connection it makes escapes both the list of its connections and the cgroup match."""
    mount = cgroup2_mount()
    if mount is None:
        raise RuntimeError("no cgroup v2 mount under /sys/fs/cgroup")
    own = cgroup_of(pid)
    group = mount / f"{CGROUP_PREFIX}{key}"
    group.mkdir(exist_ok=True)
    try:
        _move(pid, mount, group.name)
        nft(ruleset(key, ports, flows_of(pid), group))
    except BaseException:
        release(key, pid, own)
        raise
    return own


def release(key: str, pid: int | None, own: str = "/") -> list[str]:
    """Undoes cut(): the table deleted, the node back in its cgroup (if it still runs), the cut-off
    cgroup removed. Also removes what a run that was killed left behind (pid None: the processes
    still in the cut-off cgroup go to the root). Returns what went wrong; [] when all is clean."""
    errors = []
    r = subprocess.run([_nft(), "delete", "table", "inet", table(key)], capture_output=True, text=True, timeout=20)
    if r.returncode != 0 and "No such file" not in r.stderr:
        errors.append(f"nft: {r.stderr.strip()}")
    mount = cgroup2_mount()
    group = mount / f"{CGROUP_PREFIX}{key}" if mount else None
    if group is None or not group.exists():
        return errors
    try:
        members = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        for p in members:
            with contextlib.suppress(ProcessLookupError):
                _move(p, mount, own if p == pid else "/")
        group.rmdir()
    except OSError as e:
        errors.append(f"cgroup {group}: {e}")
    return errors



def leftover(key: str) -> bool:
    """Is there a cut-off table or cgroup of this key (left by a run that was killed)?"""
    r = subprocess.run([_nft(), "list", "table", "inet", table(key)], capture_output=True, text=True, timeout=20)
    mount = cgroup2_mount()
    return r.returncode == 0 or bool(mount and (mount / f"{CGROUP_PREFIX}{key}").exists())
