"""The ledger of one phase that breaks something (faults, an outage, and any later scenario): made
before the phase's load, started with it, stopped with it, and after the cluster healed its
read-back and history check make the phase record's "ledger" (lab.ledger.record). A ledger that
cannot run or read back says why in its record instead of stopping the run.

A scenario that breaks something in several steps (a backup, a wipe, a restore) starts it before
the first and checks once the last has healed. An executor offers the ledger through ledger(): an
object with workload(plan, out), topology(), reader() and close() (lab.ledger.local.LocalCluster,
lab.k8s.podledger.PodCluster)."""

from __future__ import annotations

import secrets
from pathlib import Path

from ..executor import RunsLedger
from ..load import log
from . import history, readback, record
from .workload import Plan

FILE = "ledger.jsonl"
# What the ledger may fail with and still leave the run going: the record says why.
TROUBLE = (OSError, RuntimeError, ValueError, KeyError)


class PhaseLedger:
    def __init__(self, executor, plan: Plan, out: Path, nodes: int):
        self.plan = plan
        self.out = out
        self.nodes = nodes
        self.cluster = None
        self.workload = None
        self.ops: list[history.Op] = []
        self.why_not: str | None = None
        if plan.rate <= 0 or plan.keys <= 0:
            self.why_not = "the ledger was off (LEDGER_RATE or LEDGER_KEYS 0)"
        elif not isinstance(executor, RunsLedger):
            self.why_not = f"the {executor.name} executor cannot run the ledger"
        else:
            try:
                self.cluster = executor.ledger()
                self.workload = self.cluster.workload(plan, out)
            except TROUBLE as e:
                self.why_not = f"the ledger could not start: {e}"

    @classmethod
    def of(cls, executor, cfg, duration_s: float, out: Path) -> PhaseLedger:
        """The ledger of a phase of duration_s with the run's settings (lab.settings.RunConfig)."""
        plan = Plan(
            secrets.token_hex(3), cfg.ledger_keys, cfg.ledger_rate, cfg.replicas, cfg.request_timeout_s, duration_s
        )
        return cls(executor, plan, out, len(executor.nodes))

    def start(self, t0: float) -> None:
        if self.workload is None:
            return
        try:
            self.workload.start(t0)
        except TROUBLE as e:
            self.why_not = f"the ledger could not start: {e}"
            self.workload = None

    def stop(self) -> None:
        """Ends the workload (the phase's load has ended) and keeps its operations in ledger.jsonl."""
        if self.workload is None:
            return
        try:
            self.ops = self.workload.stop()
        except TROUBLE as e:
            self.why_not = f"the ledger's operations could not be collected: {e}"
        self.workload = None
        (self.out / FILE).write_text(history.dump(self.ops))

    def abandon(self) -> None:
        """Ends the workload without its operations: the phase failed and leaves no record."""
        if self.workload is not None:
            self.workload.abandon()
            self.workload = None
        if self.cluster is not None:
            self.cluster.close()

    def finish(self, record: dict) -> None:
        """The phase's record gets its "ledger" (the cluster has healed)."""
        record["ledger"] = self.check()

    def check(self) -> dict:
        """The phase's ledger record, read back now (call it once the cluster healed)."""
        results, replicas = None, None
        if self.why_not is None and not any(o.is_write() and o.outcome == history.OK for o in self.ops):
            self.why_not = f"none of the ledger's {len(self.ops)} operations was an acknowledged write"
        if self.why_not is None:
            try:
                results, replicas = readback.read_back(self.cluster, self.ops, self.plan.tag, self.plan.replicas)
            except TROUBLE as e:
                self.why_not = f"the read-back failed: {e}"
        if self.cluster is not None:
            self.cluster.close()
        try:
            promise = record.promises_last_write(self.plan.replicas, self.nodes)
        except ValueError:
            promise = None
        about = {
            "rate": self.plan.rate,
            "keys": self.plan.keys,
            "replicas": replicas or self.plan.replicas,
            "file": FILE if (self.out / FILE).exists() else None,
        }
        rec = record.build(self.ops, results, promise, self.why_not, about)
        acked = rec["acknowledged_writes"] + rec["acknowledged_deletes"]
        stale = "" if rec["stale_reads"] is None else f", {rec['stale_reads']} of {rec['reads_checked']} reads stale"
        proven = "" if rec["checked"] else f"; not proven: {rec['why_not_checked']}"
        log(f"ledger: {len(self.ops)} operations, {rec['lost']} of {acked} acknowledged writes and deletes lost{stale}{proven}")
        return rec


def companion(phase) -> PhaseLedger | None:
    """A phase's ledger (lab.phase.COMPANIONS): for a phase that breaks something, none otherwise."""
    if not phase.faults:
        return None
    return PhaseLedger.of(phase.executor, phase.run.cfg, phase.spec.duration_s, phase.out)
