"""The local executor (the default): load generators and profilers as processes on this machine,
the nodes by their pids, their faults made with signals, a restart from /proc and nft."""

from __future__ import annotations

import os
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

import psutil

from . import envinfo, faults, healing, isolation, load, nodeseries, profiling, promtext
from .executor import (
    CleansFaults, Executor, MakesFaults, Prepared, ReadsHealing, ReadsNodeMetrics, RestoresBackups, RunsLedger,
)
from .load import LoadSpec, log
from .settings import RunConfig


def check_nodes(targets: list[str], pids: list[int]) -> None:
    for t in targets:
        if not re.match(r"^https?://(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?/?$", t):
            raise SystemExit(f"target {t}: the lab sends load only to loopback addresses")
        try:
            with urllib.request.urlopen(f"{t.rstrip('/')}/v0/status", timeout=5) as r:
                if r.status != 200:
                    raise SystemExit(f"{t}/v0/status answered {r.status}")
        except OSError as e:
            raise SystemExit(f"{t} does not answer /v0/status: {e}") from e
    for pid in pids:
        try:
            exe = os.path.basename(psutil.Process(pid).exe())
        except psutil.NoSuchProcess as e:
            raise SystemExit(f"no process {pid}") from e
        if exe != "java":
            raise SystemExit(f"process {pid} is {exe}, not a JVM")


def nodes_of(cfg: RunConfig) -> list[profiling.Node]:
    same = len(cfg.pids) == len(cfg.targets)
    return [profiling.Node(f"n{i}", pid, cfg.targets[i] if same else "") for i, pid in enumerate(cfg.pids)]


class LocalExecutor(Executor, MakesFaults, CleansFaults, ReadsHealing, ReadsNodeMetrics, RunsLedger, RestoresBackups):
    """Load generators and profilers as processes on this machine, nodes by PID."""

    name = "local"

    def __init__(self, cfg: RunConfig):
        self.cfg = cfg
        self.nodes = nodes_of(cfg)

    def check(self) -> None:
        check_nodes(self.cfg.targets, self.cfg.pids)

    def config(self) -> dict:
        return {}

    def env(self) -> dict:
        return envinfo.collect(self.cfg.pids, self.cfg.tool)

    def profiling_gap_s(self) -> float:
        return 0.0

    def profiling(self, windows: list[profiling.Window], out: Path, t0: float) -> profiling.Profiling:
        return profiling.Profiling(self.nodes, windows, out, t0)

    def prepare(self, spec: LoadSpec, out: Path, label: str) -> Prepared:
        return Prepared(spec, out, label, time.monotonic())

    def run(self, prepared: Prepared, status: Callable[[], str] | None = None) -> load.PhaseRun:
        return load.run(prepared.spec, prepared.out, self.cfg.pids, prepared.label, status=status, t0=prepared.t0)

    def after_phase(self, label: str) -> None:
        for n in self.nodes:
            if not psutil.pid_exists(n.pid):
                raise SystemExit(f"node {n.name} (pid {n.pid}) is gone after phase {label}")

    def close(self) -> None:
        pass

    # ---- the nodes' management ports: healing counters and Prometheus pages

    def management(self) -> dict[str, str]:
        """Each node's management URL by name: its client port + 1000, the node's default."""
        return {f"n{i}": healing.management_url(t) for i, t in enumerate(self.cfg.targets)}

    def heal_sample(self) -> dict:
        return healing.sample(self.management())

    def await_healed(self, timeout_s: float) -> dict:
        # The repairs it asks for need the cluster's secret: the one the nodes were started with.
        from .ledger.local import LocalCluster

        token = LocalCluster(self.cfg.targets, self.cfg.pids).cluster_secret()
        return healing.await_healed(self.management(), timeout_s, log, repairer=lambda m: healing.request_repair(m, token=token))

    def node_metrics(self) -> dict[str, dict[str, float] | str]:
        return promtext.fetch_all(self.management(), nodeseries.SCRAPE_TIMEOUT_S)

    # ---- faults

    def fault(self, kind: str, index: int, at_s: float, for_s: float) -> faults.ScheduledFault:
        if len(self.nodes) < 2 or len(self.cfg.pids) != len(self.cfg.targets):
            raise SystemExit("faults need two nodes or more, each with its PID (--pids) in --targets' order")
        index %= len(self.nodes)
        node = self.nodes[index]

        def pid_of() -> int:
            return self.nodes[index].pid

        if kind == "pause":
            return faults.Pause(node.name, at_s, for_s, pid=node.pid, pid_of=pid_of)
        if kind == "kill":
            return faults.Kill(
                node.name, at_s, for_s, pid=node.pid, pid_of=pid_of, target=node.target,
                restarted=lambda pid: self.restarted(index, pid),
            )
        if kind == "cutoff":
            why = isolation.unavailable()
            if why:
                raise SystemExit(f"cannot cut node {node.name} off: {why}")
            return faults.CutOff(node.name, at_s, for_s, pid=node.pid, pid_of=pid_of, ports=self.ports(index))
        raise SystemExit(f"the {self.name} executor cannot make a {kind} fault")

    def ports(self, index: int) -> tuple[int, int]:
        """Node index's listening ports: its client port and its management port."""
        return tuple(urlparse(u).port for u in (self.cfg.targets[index], healing.management_url(self.cfg.targets[index])))

    def restarted(self, index: int, pid: int) -> None:
        """Node index runs again as pid: profiling, CPU accounting and the liveness check follow it."""
        node = self.nodes[index]
        log(f"node {node.name} runs again as pid {pid} (was {node.pid})")
        node.pid = pid
        self.cfg.pids[index] = pid
        if index < len(self.cfg.pid_files):
            Path(self.cfg.pid_files[index]).write_text(f"{pid}\n")
        else:
            log(f"no pid file of node {node.name} (--pid-files): stop pid {pid} yourself when done")

    def ledger(self):
        """The ledger's way to the nodes (lab.ledger.local): its threads here, each replica read over HTTP."""
        from .ledger.local import LocalCluster

        return LocalCluster(self.cfg.targets, self.cfg.pids)

    def disaster(self, out: Path, timeout_s: float):
        """The disaster's steps on these processes (lab.disasterlocal): stopped, wiped, restored, started."""
        from .disasterlocal import LocalDisaster

        return LocalDisaster(self, out)

    def clean_faults(self) -> None:
        """Removes what a killed run may have left of a cut-off on these nodes' ports."""
        if isolation.unavailable():
            return
        for i, node in enumerate(self.nodes):
            key = str(self.ports(i)[0])
            if isolation.leftover(key):
                errors = isolation.release(key, None)
                why = f" ({'; '.join(errors)})" if errors else ""
                log(f"removed a cut-off of port {key} that an earlier run left{why}")
