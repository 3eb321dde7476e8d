"""The disaster (python -m lab disaster, make lab SCENARIO=disaster): does a backup taken under load
bring back every acknowledged write once every node's data is gone, how long do the backup and the
restore take, and what does the backup cost the load while it runs?

Fill, warm up, then one mixed phase at RATE for DURATION with the ledger beside it (lab.ledger: keys
of its own written, overwritten, deleted and read, every operation recorded); a third of the way in
the lab asks node n0 for a backup of the whole cluster (POST /actuator/kvlab/backup), and the load
and the ledger go on after it completed, until the end of the phase. Then the disaster: every node
stopped and its data directory removed; each one restored from the backup (`java -jar
kvlab-service.jar restore`, as make restore does), the nodes started again; and every key the ledger
acknowledged a write of read back from all its replicas (lab.disaster: acknowledged before the
backup began must be there; after it, counted as present or lost by design). The phase's time series
gives the rate and p99 before, during and after the backup.

On local nodes the steps are lab.disasterlocal's; in Kubernetes (--executor k8s) lab.k8s.disaster's:
the release uninstalled with its data claims and installed again in the chart's restore mode."""

from __future__ import annotations

import argparse
import threading
import time
from dataclasses import replace
from pathlib import Path

from .. import disaster, options, recovery
from ..executor import RestoresBackups
from ..ledger import PhaseLedger
from ..load import log
from ..local import LocalExecutor
from ..runrecord import Run, checked
from ..settings import RunConfig
from ..warmup import warm_up
from .scenario import Scenario

LABEL = "backup"
# The backup is asked for this share of the phase in, so the phase has a window without it first.
BACKUP_AT = 1 / 3
MIN_DURATION_S = 15
# What a step may fail with: the run goes on to its report, which says which step and why.
TROUBLE = (OSError, RuntimeError, ValueError)


class BackupDuringLoad:
    """The phase's companion: the ledger from the start of the load, and a backup asked for at_s in
    (from a thread of its own) of steps (LocalDisaster, K8sDisaster); stop() waits for the backup to
    be answered (timeout_s at most)."""

    def __init__(self, phase, steps, at_s: float, timeout_s: float):
        self.ledger = PhaseLedger.of(phase.executor, phase.run.cfg, phase.spec.duration_s, phase.out)
        self.steps = steps
        self.at_s = at_s
        self.timeout_s = timeout_s
        self.sent_s: float | None = None
        self.answered_s: float | None = None
        self.result: dict = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, t0: float) -> None:
        self.ledger.start(t0)
        self._thread = threading.Thread(target=self._backup, args=(t0,), name="backup", daemon=True)
        self._thread.start()

    def _backup(self, t0: float) -> None:
        if self._stop.wait(max(0.0, t0 + self.at_s - time.monotonic())):
            return
        self.sent_s = time.monotonic() - t0
        log(f"backup: asked of n0 at {self.sent_s:.1f} s into the load")
        self.result = self.steps.backup(self.timeout_s)
        self.answered_s = time.monotonic() - t0
        answer = self.result.get("answer")
        log(f"backup: {answer['backup']} complete after {self.answered_s - self.sent_s:.1f} s" if answer
            else f"backup: failed after {self.answered_s - self.sent_s:.1f} s: {self.result.get('error')}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=self.timeout_s + 5)
        self.ledger.stop()

    def abandon(self) -> None:
        self._stop.set()
        self.ledger.abandon()

    def finish(self, record: dict) -> None:
        record["backup"] = self.record()
        series, why = recovery.load_series(self.steps.out, record)
        if series and self.sent_s is not None:
            record["backup"]["windows"] = disaster.windows(series, self.sent_s, self.answered_s)
        else:
            record["backup"]["windows_why"] = why or "the backup was never asked for"

    def record(self) -> dict:
        rec = {"asked_at_s": self.sent_s, "answered_at_s": self.answered_s, "timeout_s": self.timeout_s}
        if self.sent_s is None:
            rec["error"] = "the load ended before the backup was asked for"
        elif self.answered_s is None:
            rec["error"] = f"no answer within {self.timeout_s:g} s"
        return rec | self.result


def run_disaster(cfg: RunConfig, timeout_s: float, executor=None) -> Path:
    if cfg.events:
        # A profiling window would load some seconds and not others, and the verdict compares the
        # seconds the backup ran with those before it.
        log("disaster: not profiled (a profiling window would skew p99 during the backup against before it)")
        cfg = replace(cfg, events=[])
    with checked(cfg, executor) as executor:
        if isinstance(executor, LocalExecutor) and len(cfg.pids) != len(cfg.targets):
            raise SystemExit("the disaster stops and starts the nodes: give each node's PID (--pids) in --targets' order")
        if not isinstance(executor, RestoresBackups):
            raise SystemExit(f"the {executor.name} executor cannot destroy and restore its nodes' data")
        run = Run(cfg, "disaster", {"backup_at": round(BACKUP_AT, 3), "backup_timeout_s": timeout_s}, executor=executor)
        steps = executor.disaster(run.dir, timeout_s)
        doc: dict = {"target": steps.target(), "read_replicas": "from/from"}
        run.doc["disaster"] = doc
        run.phase(cfg.spec("fill"), "fill", [])
        spec = cfg.spec("mixed", duration_s=max(cfg.duration_s, MIN_DURATION_S))
        warm_up(run, spec, "mixed")
        made: list[BackupDuringLoad] = []

        def companion(phase):
            if phase.label != LABEL:
                return None
            made.append(BackupDuringLoad(phase, steps, spec.duration_s * BACKUP_AT, timeout_s))
            return made[-1]

        run.companions.append(companion)
        record = run.phase(spec, LABEL, [])
        run.companions.clear()
        during = made[-1]
        backup = record["backup"]
        answer = backup.get("answer")
        if not answer:
            doc["failed"] = f"backup: {backup.get('error', 'no answer')}"
            during.ledger.abandon()
            return run.finish()
        try:
            log("disaster: every node stopped and its data removed")
            doc["destroy"] = steps.destroy()
            run.save()
            doc["restore"] = steps.restore(answer["backup"])
            log(f"restore: {doc['restore']['seconds']:.1f} s for {len(doc['restore']['nodes'])} nodes")
            doc["start"] = steps.start()
            run.save()
            ops = during.ledger.ops
            keys = sorted({o.key for o in ops if o.is_write()})
            restored = steps.read(keys, during.ledger.plan.tag)
            doc["check"] = disaster.judge(ops, backup["asked_at_s"], restored)
            c = doc["check"]
            log(
                f"check: {c['missing']} of {c['before_keys']} keys acknowledged before the backup missing, "
                f"{c['unreadable']} unreadable; after it: {c['after_present']} present, {c['after_lost']} lost by design"
            )
        except TROUBLE as e:
            doc["failed"] = f"{_step(doc)}: {e}"
            log(f"disaster: {doc['failed']}")
        finally:
            during.ledger.abandon()
        run.save()
        return run.finish()


def _step(doc: dict) -> str:
    for step in ("destroy", "restore", "start", "check"):
        if step not in doc:
            return step
    return "check"


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pid-files",
        type=lambda s: [Path(x) for x in options.items(s)],
        default=[],
        help="files holding the nodes' PIDs, in --pids' order: the nodes started again after the restore get "
        "their new PIDs written there (scripts/local-cluster.sh's, so `down` stops them)",
    )
    p.add_argument(
        "--backup-timeout", type=options.duration, default=600.0,
        help="how long the backup may take before the run gives up on it (600s); in Kubernetes also how long the "
        "restore and the new release's start may each take",
    )


def _main(a: argparse.Namespace) -> Path:
    cfg = options.run_config(a, ["fill", "mixed"])
    return run_disaster(cfg, a.backup_timeout, options.executor_of(a, cfg))


SCENARIO = Scenario(
    name="disaster",
    command="disaster",
    help="fill; a mixed phase with the ledger, a backup a third of the way in; every node's data destroyed, "
    "restored from the backup, and every acknowledged key checked",
    add_options=_add_options,
    main=_main,
    epilog=f"--duration is the mixed phase's ({MIN_DURATION_S} s at least): a third before the backup, then the backup "
    "and the load after it",
)
