"""A run's record: its directory under reports/, its env.json, and its run.json, rewritten after
every phase so that a run cut short keeps what it measured; then its report. A scenario
(lab.scenarios) makes a Run and calls run.phase() for each phase (lab.phase runs it)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
from dataclasses import asdict
from pathlib import Path

from . import envinfo, faults, nodeseries, tools
from .executor import Executor, MakesFaults, ReadsHealing, ReadsNodeMetrics
from .load import LoadSpec, log
from .local import LocalExecutor
from .phase import Phase
from .settings import RunConfig


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def new_run_dir(reports_dir: Path, name: str) -> Path:
    run_dir = reports_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(name)}"
    run_dir.mkdir(parents=True)
    return run_dir


def json_default(o):
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, float) and math.isnan(o):
        return None
    raise TypeError(type(o))


@contextlib.contextmanager
def checked(cfg: RunConfig, executor: Executor | None = None):
    """The run's executor (local processes by default), its nodes checked first, closed after."""
    executor = executor or LocalExecutor(cfg)
    try:
        executor.check()
        yield executor
    finally:
        executor.close()


class Run:
    """The run directory and its run.json. kind: run.json's "kind" (phases, saturation, faults,
    hotpath, scale, ...); extra_config: the kind's own settings, added to run.json's "config"."""

    def __init__(self, cfg: RunConfig, kind: str, extra_config: dict | None = None, executor: Executor | None = None):
        self.cfg = cfg
        self.executor = executor or LocalExecutor(cfg)
        self.dir = new_run_dir(cfg.reports_dir, cfg.name)
        self.nodes = self.executor.nodes
        config = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()}
        self.doc = {
            "name": cfg.name,
            "kind": kind,
            "executor": self.executor.name,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "finished": None,
            "config": config | (extra_config or {}) | self.executor.config(),
            "invocation": os.environ.get("KVLAB_LAB_INVOCATION", ""),
            "nodes": [asdict(n) for n in self.nodes],
            "phases": [],
        }
        self.pids = {n.name: [n.pid] for n in self.nodes}
        # The scenario's own companions (lab.phase.Companion factories), asked by every phase of this run.
        self.companions: list = []
        log(f"run directory {tools.rel(self.dir)}")
        self._warn_of_noise()
        (self.dir / "env.json").write_text(json.dumps(self.executor.env(), indent=1))
        self.save()

    def _warn_of_noise(self) -> None:
        load1 = os.getloadavg()[0]
        if load1 > (os.cpu_count() or 1):
            log(
                f"warning: the machine is busy before the run (load average {load1:.1f} on "
                f"{os.cpu_count()} cores); latency and CPU figures will carry that noise"
            )
        apart = envinfo.nodes_apart(self.cfg.pids)
        if apart:
            log(
                f"warning: node pid {', '.join(map(str, apart))} runs in another scheduling group (cgroup or "
                "session) than the load generators; the kernel shares the CPU between the groups first"
            )

    def save(self) -> None:
        # A node started again during the run (a kill fault) has a new pid: "pid" is its last,
        # "pids" every one it had, in order (CPU figures of earlier phases name the older).
        for n, doc in zip(self.nodes, self.doc["nodes"]):
            seen = self.pids.setdefault(n.name, [n.pid])
            if seen[-1] != n.pid:
                seen.append(n.pid)
            doc["pid"] = n.pid
            if len(seen) > 1:
                doc["pids"] = list(seen)
        self.write_json(self.dir / "run.json", self.doc)

    def phase(
        self,
        spec: LoadSpec,
        label: str,
        events: list[str],
        warmup: bool = False,
        outage: bool = False,
        with_faults: list[faults.ScheduledFault] | None = None,
    ) -> dict:
        """Runs one phase and records it (lab.phase); a warm-up phase is kept out of the report's
        summaries. An outage phase freezes the last node for the middle third of its load; a phase
        given with_faults (not started) runs them on their schedule. Either then waits until the
        cluster has healed (hints replayed, a repair round between every two nodes) before it ends."""
        outage_fault = self.outage(spec.duration_s / 3, spec.duration_s / 3) if outage else None
        return Phase(self, spec, label, events, warmup, outage_fault, list(with_faults or [])).execute()

    def outage(self, at_s: float, for_s: float) -> faults.ScheduledFault:
        """The outage's fault, the last node paused, not started yet; refused where the executor cannot pause a node."""
        if not isinstance(self.executor, MakesFaults):
            raise SystemExit(f"the outage phase pauses a node: the {self.executor.name} executor cannot")
        return self.executor.fault("pause", -1, at_s, for_s)

    def heal_sample(self) -> dict | None:
        """The nodes' healing counters, when the executor can read them."""
        if not isinstance(self.executor, ReadsHealing):
            return None
        try:
            return self.executor.heal_sample()
        except Exception as e:  # noqa: BLE001 - the counters are a report's extra, never a reason to stop
            log(f"the nodes' healing counters could not be read: {e}")
            return None

    def node_sampler(self) -> nodeseries.Sampler | None:
        """The nodes sampled once a second from now on, when the executor can read their metrics."""
        if not isinstance(self.executor, ReadsNodeMetrics):
            return None
        return nodeseries.Sampler(self.executor.node_metrics, log=log).start()

    def phase_dir(self, label: str) -> Path:
        """The next phase's directory: phases/<its number>-<its label>."""
        out = self.dir / "phases" / f"{len(self.doc['phases']) + 1:02d}-{slug(label)}"
        out.mkdir(parents=True, exist_ok=True)
        return out

    def write_json(self, path: Path, doc: object) -> None:
        path.write_text(json.dumps(doc, indent=1, default=json_default))

    def add_phase(self, record: dict) -> None:
        self.doc["phases"].append(record)
        self.save()

    def finish(self) -> Path:
        self.doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.save()
        from . import report  # matplotlib is imported only now

        report.generate(self.dir, self.cfg.compare)
        return self.dir
