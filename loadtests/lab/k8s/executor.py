"""The lab's Kubernetes executor (make lab LAB_TARGET=k8s): the phases of a run as Jobs inside the
cluster KUBECONFIG points at, against a kvlab release's client Service, the release's pods profiled
through their async-profiler sidecar; the same scenarios, results and report as on one machine.

- The release (lab.k8s.release): its client Service, the URL the load reaches it at, its pods.
- Load (lab.k8s.jobs): k6 as an Indexed Job of k6_pods pods, pod i running the i-th k6 execution
  segment of 0,1/n,...,1, so that together they send exactly the requested rate (and the fill
  writes every key once); wrk as a Job of one pod (wrk2 when its image was built, else Debian's
  wrk). The k6 and wrk scripts, defaults.env and the pods' wrapper (k8s/loadgen/job.sh) reach the
  pods in a ConfigMap: the images hold only the tools (lab.k8s.manifests).
- Start: the pods of a phase wait for a start signal, which the executor writes into all of them
  once they all run (kubectl exec); they then sleep to the same instant.
- Results (lab.k8s.results): the pods' logs (the tool's output, then KVLAB-JOB lines: start and end
  times, exit code, CPU, k6's summary JSON), saved in the phase's directory; the Job is deleted
  once collected. The k6 pods' percentiles are merged from their percentile spectra (lab.k8s.outputs).
- Profiling (lab.k8s.podprofiling): k8s/profile-pod.sh for each pod and window, the script
  `make profile` runs.
- CPU (lab.k8s.cpu): each kvlab container's cgroup CPU time before and after the phase, each load
  generator's CPU from bash's `times` in its pod.
- The pods' management ports (lab.k8s.management): Prometheus pages, healing counters, repair.
- The ledger of a phase with faults (lab.k8s.podledger): a one-pod k6 Job, each pod's records read
  in place.
- The disaster (lab.k8s.disaster): the release backed up, uninstalled with its data claims, and
  installed again in the chart's restore mode.
- Faults (lab.k8s.podfaults): a pod's JVM paused or killed. It has no CleansFaults: a run ends
  every fault it made (close()), and a JVM that a killed run left stopped is restarted by its
  liveness probe.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from .. import healing, load, nodeseries, procstat, profiling, promtext
from ..executor import Executor, MakesFaults, Prepared, ReadsHealing, ReadsNodeMetrics, RestoresBackups, RunsLedger
from ..faults import ScheduledFault
from ..load import LoadSpec, log
from ..loadseries import Samples
from ..settings import RunConfig
from . import cpu, facts, podfaults, results
from .config import K8sConfig
from .jobs import Jobs, PhaseJob
from .kubectl import Kubectl, ready, restarts
from .management import Management
from .manifests import RUN_LABEL
from .outputs import pods_table
from .podprofiling import PodProfiling
from .release import Release


class K8sExecutor(Executor, MakesFaults, ReadsHealing, ReadsNodeMetrics, RestoresBackups, RunsLedger):
    """The phases as Jobs in a namespace of the cluster, against a release of the chart."""

    name = "k8s"

    def __init__(self, cfg: RunConfig, k: K8sConfig):
        self.cfg = cfg
        self.k = k
        self.kubectl = Kubectl(k.kubectl, k.namespace)
        self.run_id = secrets.token_hex(3)
        self.wrk2 = "wrk2" in k.wrk_image.rsplit("/", 1)[-1].split(":")[0]
        self.release = Release(k, self.kubectl)
        self.target = self.release.target
        cfg.targets = [self.target]
        cfg.pids = []
        self.jobs = Jobs(k, self.kubectl, self.run_id, self.target, self.wrk2)
        self.pods = self.release.pods()
        self.nodes = [profiling.Node(p["metadata"]["name"], 0, self.target) for p in self.pods]
        self.restarts = {p["metadata"]["name"]: restarts(p) for p in self.pods}
        self.management = Management(self.kubectl, [n.name for n in self.nodes])
        self.faults: list[ScheduledFault] = []
        self._counted_faults: set[int] = set()  # faults that began in a phase already checked

    def check(self) -> None:
        self.release.check(self.pods, profiled=bool(self.cfg.events))

    def config(self) -> dict:
        return {"k8s": asdict(self.k) | {"run_id": self.run_id, "target": self.target}}

    def env(self) -> dict:
        return facts.environment(
            self.k, self.kubectl, self.pods, self.cfg.tool, self.wrk2, self.release.local, self.run_id, self.target
        )

    def profiling_gap_s(self) -> float:
        return self.k.profile_gap_s

    def profiling(self, windows: list[profiling.Window], out: Path, t0: float) -> profiling.Profiling:
        return PodProfiling(self.nodes, windows, out, t0, namespace=self.k.namespace, kubectl=self.k.kubectl)

    # ---- a phase: its Job started, then its results

    def prepare(self, spec: LoadSpec, out: Path, label: str) -> Prepared:
        ph = self.jobs.create(spec, out, label)
        try:
            running = self.jobs.wait_running(ph)
            ph.cpu_before = cpu.containers(self.kubectl, [n.name for n in self.nodes])
            ph.machine_before = procstat.sample([])
            self.jobs.signal_start(ph, running, label)
        except BaseException:
            self.jobs.delete(ph.job)
            raise
        ph.started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        t0 = time.monotonic() + (ph.start_ns - time.time_ns()) / 1e9
        return Prepared(spec, out, label, t0, ph)

    def run(self, prepared: Prepared, status: Callable[[], str] | None = None) -> load.PhaseRun:
        ph: PhaseJob = prepared.state
        spec, out = prepared.spec, prepared.out
        try:
            self.jobs.wait_done(ph, spec, prepared.label, prepared.t0, status)
            cpu_after = cpu.containers(self.kubectl, [n.name for n in self.nodes])
            machine_after = procstat.sample([])
            finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            outputs = results.collect(self.kubectl, ph, self.jobs.pods(ph.job), out)
        finally:
            if not self.k.keep_jobs:
                self.jobs.delete(ph.job)
        result, parts = results.merged(ph, spec, out, outputs, self.target, self.wrk2)
        used = cpu.of_phase(
            ph.cpu_before, cpu_after, ph.machine_before, machine_after, outputs, result.get("requests") or 0,
            f"{ph.tool}, {ph.pods} pod{'s' if ph.pods > 1 else ''}", self.release.local,
        )
        result["pods"] = pods_table(outputs, parts, used["wall_s"])
        starts = [r["start_ms"] for r in result["pods"] if r["start_ms"] is not None]
        if len(starts) > 1 and max(starts) > 100:
            log(f"{ph.job}: the pods started up to {max(starts):.0f} ms apart")
        csv = sorted(out.glob("k6-samples-*.csv")) if ph.tool == "k6" else []
        # The fill has no fixed length: its series ends with its samples, as a local run's does.
        length = None if spec.scenario == "fill" else spec.duration_s
        return load.PhaseRun(
            result,
            used,
            results.commands(ph, self.k.namespace),
            [o.exit_code for o in outputs],
            ph.started_at,
            finished_at,
            samples=Samples("k6", csv=csv, duration_s=length) if csv else None,
        )

    def after_phase(self, label: str) -> None:
        """Every pod still there and not restarted, unless a fault of the phase did it."""
        began = [f for f in self.faults if f.began_at_s is not None and id(f) not in self._counted_faults]
        faulted = {f.node for f in began}
        self._counted_faults |= {id(f) for f in began}
        now = {p["metadata"]["name"]: p for p in self.release.pods()}
        for n in self.nodes:
            p = now.get(n.name)
            if p is None:
                raise SystemExit(f"pod {n.name} is gone after phase {label}")
            if n.name in faulted:
                self.restarts[n.name] = restarts(p)
            elif restarts(p) > self.restarts.get(n.name, 0):
                raise SystemExit(f"pod {n.name} restarted during phase {label} (restarts {restarts(p)})")
            if not ready(p):
                log(f"warning: pod {n.name} is not ready after phase {label}")

    def close(self) -> None:
        """Ends every fault (a paused JVM goes on), deletes what this run created (Jobs and their
        pods, the ConfigMap), even when it was cut short, and ends the pods' management channels."""
        for f in self.faults:
            f.stop()
        self.management.close()
        what = "configmaps" if self.k.keep_jobs else "jobs,configmaps"
        try:
            self.kubectl.run(
                "delete", what, "-l", f"{RUN_LABEL}={self.run_id}", "--ignore-not-found", "--wait=false", timeout=60
            )
        except RuntimeError as e:
            log(f"could not clean up after the run ({RUN_LABEL}={self.run_id}): {e}")

    # ---- the pods' management ports

    def node_metrics(
        self, timeout: float = nodeseries.SCRAPE_TIMEOUT_S, parse: Callable[[str], dict[str, float]] = promtext.parse
    ) -> dict[str, dict[str, float] | str]:
        """Each pod's Prometheus page (see lab.executor.ReadsNodeMetrics), parsed with parse; within
        about timeout seconds whatever the pods do, and it never raises."""
        try:
            pages = self.management.get_all("/actuator/prometheus", timeout)
            return {pod: parse(page) if isinstance(page, str) else str(page) for pod, page in pages.items()}
        except Exception as e:  # noqa: BLE001 - a sample is never a reason to stop a phase
            return {n.name: f"not read: {e}" for n in self.nodes}

    def heal_sample(self) -> dict:
        """Each pod's healing counters (lab.healing) from its management port; a pod that cannot be
        read gets why instead."""
        return self.node_metrics(timeout=5.0, parse=healing.parse)

    def await_healed(self, timeout_s: float) -> dict:
        """After a fault: every hint replayed, then a repair round between every two pods (lab.healing),
        each pod asked through its management port."""

        def status(pod: str) -> dict | None:
            try:
                return json.loads(self.management.request(pod, "/actuator/kvlab"))
            except (RuntimeError, ValueError):
                return None

        def repair(pod: str) -> str:
            try:
                self.management.request(pod, "/actuator/kvlab/repair", method="POST")
                return ""
            except RuntimeError as e:
                return str(e)

        return healing.await_healed(
            {n.name: n.name for n in self.nodes},
            timeout_s,
            log,
            sampler=lambda _: self.heal_sample(),
            repairer=repair,
            reader=status,
        )

    # ---- the ledger

    def ledger(self):
        """The ledger's way into the release (lab.k8s.podledger): a one-pod k6 Job beside the load, and
        each pod's own records read inside it."""
        from .podledger import PodCluster

        return PodCluster(
            self.kubectl, self.management, self.target, self.jobs.ledger_job_name, self.jobs.ledger_manifest,
            self.k.start_timeout_s,
        )

    # ---- faults

    def fault(self, kind: str, index: int, at_s: float, for_s: float) -> ScheduledFault:
        fault = podfaults.make(self.kubectl, self.pods, kind, index, at_s, for_s)
        self.faults.append(fault)
        return fault

    # ---- the disaster

    def disaster(self, out: Path, timeout_s: float):
        """The disaster's steps on the release (lab.k8s.disaster): it is uninstalled, its data claims
        deleted, and installed again from the backup; timeout_s bounds the restore and the start."""
        from .disaster import K8sDisaster

        return K8sDisaster(self, out, timeout_s=timeout_s)
