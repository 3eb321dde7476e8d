"""What a run asks of its executor, the part that sends the load and watches the nodes:
lab.local.LocalExecutor (load generators and profilers as processes on this machine, nodes by pid)
and lab.k8s.K8sExecutor (Jobs in a Kubernetes cluster, a release's pods profiled through their
sidecar).

Executor is what every executor does. What an executor may do besides is a capability of its own,
below it: a run tests for one with isinstance before it asks for it (a phase with faults needs
MakesFaults, the nodes' time series ReadsNodeMetrics). An executor names the capabilities it has
by subclassing them; their methods are abstract, so a missing one stops it from being made.

    LocalExecutor(Executor, MakesFaults, CleansFaults, ReadsHealing, ReadsNodeMetrics, RunsLedger)
    K8sExecutor(Executor, MakesFaults, ReadsHealing, ReadsNodeMetrics, RunsLedger)
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from .faults import ScheduledFault
from .load import LoadSpec, PhaseRun
from .profiling import Node, Profiling, Window


@dataclass
class Prepared:
    """A phase ready to go: t0 is the time.monotonic() at which its load starts (the profiling
    windows and the faults count from it); state is the executor's own."""

    spec: LoadSpec
    out: Path
    label: str
    t0: float
    state: object = None


@runtime_checkable
class Executor(Protocol):
    """Runs the phases of a run against its nodes.

    name: run.json's "executor" ("local", "k8s"); nodes: the nodes under test, in the order the
    run names them (n0, n1, ... locally; the pods' names in Kubernetes)."""

    name: str
    nodes: list[Node]

    @abstractmethod
    def check(self) -> None:
        """Before the first phase: SystemExit saying what is wrong when the nodes cannot be loaded."""

    @abstractmethod
    def config(self) -> dict:
        """The executor's own settings, merged into run.json's "config"."""

    @abstractmethod
    def env(self) -> dict:
        """Facts about the machine, the nodes and the tools, for the report (env.json)."""

    @abstractmethod
    def profiling_gap_s(self) -> float:
        """Seconds between two profiling windows of a phase."""

    @abstractmethod
    def profiling(self, windows: list[Window], out: Path, t0: float) -> Profiling:
        """The profiler of a phase's windows, counted from t0, its flame graphs written to out."""

    @abstractmethod
    def prepare(self, spec: LoadSpec, out: Path, label: str) -> Prepared:
        """Everything a phase needs before its load starts; the load starts at the result's t0."""

    @abstractmethod
    def run(self, prepared: Prepared, status: Callable[[], str] | None = None) -> PhaseRun:
        """The phase's load to its end, with progress lines (status() adds to them)."""

    @abstractmethod
    def after_phase(self, label: str) -> None:
        """SystemExit when a node is gone (or restarted) after a phase that should have left it be."""

    @abstractmethod
    def close(self) -> None:
        """Ends what the executor started, whatever happened to the run."""


@runtime_checkable
class MakesFaults(Protocol):
    """Breaks nodes on a schedule (lab.faults), and tells when the cluster has healed after."""

    @abstractmethod
    def fault(self, kind: str, index: int, at_s: float, for_s: float) -> ScheduledFault:
        """A fault of node index (-1: the last), at_s into a phase's load, for for_s; not started.
        SystemExit when the executor cannot make it, saying what it needs."""

    @abstractmethod
    def await_healed(self, timeout_s: float) -> dict:
        """After a phase with faults: waits (at most timeout_s) for every hint to be replayed and a
        repair round between every two nodes (lab.healing.await_healed); what it saw."""


@runtime_checkable
class CleansFaults(Protocol):
    """Removes what a killed run may have left of its faults (a cut-off's firewall table)."""

    @abstractmethod
    def clean_faults(self) -> None: ...


@runtime_checkable
class ReadsHealing(Protocol):
    """Reads the nodes' healing counters (hints, repair, handoff)."""

    @abstractmethod
    def heal_sample(self) -> dict:
        """The counters now (lab.healing), by node name; a node that cannot be read gets why."""


@runtime_checkable
class ReadsNodeMetrics(Protocol):
    """Reads the nodes' Prometheus pages, for the phases' time series (lab.nodeseries)."""

    @abstractmethod
    def node_metrics(self) -> dict[str, dict[str, float] | str]:
        """Every node's page now, by node name: parsed (lab.promtext.parse), or a string that says
        why it could not be read. Called once a second during every phase: it returns within about
        nodeseries.SCRAPE_TIMEOUT_S whatever the nodes do and raises for no single node's failure."""


@runtime_checkable
class RunsLedger(Protocol):
    """Runs the ledger of a phase that breaks something (lab.ledger): its workload beside the load,
    and each replica's own records read back after."""

    @abstractmethod
    def ledger(self):
        """The ledger's way to the nodes: an object with workload(plan, out), topology(), reader()
        and close() (lab.ledger.local.LocalCluster, lab.k8s.podledger.PodCluster)."""


@runtime_checkable
class RestoresBackups(Protocol):
    """Destroys every node's data and restores it from a backup (the disaster scenario)."""

    @abstractmethod
    def disaster(self, out: Path, timeout_s: float):
        """The disaster's steps on these nodes: an object with target(), backup(timeout_s), destroy(),
        restore(name), start() and read(keys, tag) (lab.disasterlocal.LocalDisaster,
        lab.k8s.disaster.K8sDisaster); out is the run's directory."""
