"""One phase of a run, step by step (Run.phase in lab.runrecord executes it): its directory and
profiling windows; its faults; beside its load the node sampler, the profiler, the faults and the
companions; after it the wait for the cluster to heal; then its record in run.json.

A companion is how something else runs beside a phase's load and adds to its record (a ledger of
the writes acknowledged during a phase with faults, say): a factory in COMPANIONS is asked for one
by every phase, and returns None to stay out of it; a scenario may add its own for a run
(Run.companions: the disaster scenario's backup during the load)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Protocol

from . import healing, load, profiling, recovery, timeseries, tools
from .executor import Prepared
from .faults import ScheduledFault
from .ledger import companion as ledger_companion
from .load import LoadSpec, log
from .nodeseries import Sampler
from .results import p99

if TYPE_CHECKING:
    from .runrecord import Run


class Companion(Protocol):
    """Runs beside a phase's load: start() when the load starts (t0, a time.monotonic() value),
    stop() when it has ended, whatever happened (never raises), abandon() before stop() when the
    phase failed and leaves no record, finish() once the cluster has healed after the phase's
    faults, with the phase's record to add its fields to (before it is saved)."""

    def start(self, t0: float) -> None: ...

    def stop(self) -> None: ...

    def abandon(self) -> None: ...

    def finish(self, record: dict) -> None: ...


# Asked by every phase for its companions: the phase (its run, spec, faults and directory) -> a
# Companion, or None to stay out of it. The ledger: every acknowledged write of a phase that breaks
# something is read back once the cluster healed.
COMPANIONS: list[Callable[[Phase], Companion | None]] = [ledger_companion]


class Phase:
    """One phase. outage_fault: the outage phase's fault, recorded as "fault"; with_faults: the
    fault scenario's, recorded as "faults". Neither is started yet."""

    def __init__(
        self,
        run: Run,
        spec: LoadSpec,
        label: str,
        events: list[str],
        warmup: bool,
        outage_fault: ScheduledFault | None,
        with_faults: list[ScheduledFault],
    ):
        self.run, self.executor, self.spec, self.label, self.warmup = run, run.executor, spec, label, warmup
        self.outage_fault = outage_fault
        self.faults = [outage_fault] if outage_fault else with_faults
        self.out = run.phase_dir(label)
        gap = self.executor.profiling_gap_s()
        self.windows = profiling.plan(events, spec.duration_s, gap) if spec.scenario != "fill" and run.nodes else []

    def execute(self) -> dict:
        self.announce()
        heal_before = self.run.heal_sample()
        companions = [c for make in COMPANIONS + self.run.companions if (c := make(self)) is not None]
        prepared = self.executor.prepare(self.spec, self.out, self.label)
        pr, prof, sampler = self.load(prepared, companions)
        heal = self.heal()
        heal_after = self.run.heal_sample()
        record = self.record(prepared, pr, prof, sampler, heal_before, heal_after, heal)
        for c in companions:
            c.finish(record)
        self.run.add_phase(record)
        self.check_fill(record)
        self.report(record)
        self.executor.after_phase(self.label)
        return record

    def announce(self) -> None:
        spec = self.spec
        log(
            f"phase {self.label}: {spec.scenario} at "
            f"{'full speed' if spec.rate is None else f'{spec.rate}/s'} for "
            f"{'at most ' if spec.rate is None else ''}{spec.duration_s} s"
            + (f"; profiling {', '.join(f'{w.event} {w.seconds:.1f}s' for w in self.windows)}" if self.windows else "")
        )

    def load(
        self, prepared: Prepared, companions: list[Companion]
    ) -> tuple[load.PhaseRun, profiling.Profiling | None, Sampler | None]:
        """The load, with the node sampler, the profiler, the faults and the companions beside it."""
        sampler = self.run.node_sampler()
        prof = None
        if self.windows:
            (self.out / "profiles").mkdir(parents=True, exist_ok=True)
            prof = self.executor.profiling(self.windows, self.out / "profiles", prepared.t0).start()
        for f in self.faults:
            f.start(prepared.t0)
        for c in companions:
            c.start(prepared.t0)
        try:
            pr = self.executor.run(prepared, status=prof.status if prof else None)
        except BaseException:
            if prof:
                prof.stop()
            for c in companions:
                c.abandon()
            raise
        finally:
            # Whatever happened, no node is left paused, dead or cut off.
            for f in self.faults:
                f.stop()
            for c in companions:
                c.stop()
            if sampler:
                sampler.stop()
        if prof:
            prof.join(timeout=90)
        return pr, prof, sampler

    def heal(self) -> dict | None:
        """After faults, the wait until the cluster has healed (lab.healing.await_healed)."""
        if not self.faults:
            return None
        return self.executor.await_healed(self.run.cfg.heal_timeout_s)

    def series(self, prepared: Prepared, pr: load.PhaseRun, sampler: Sampler | None) -> dict:
        """Writes the phase's timeseries.json and latency.hgrm; their paths for the phase record."""
        try:
            files = timeseries.write(self.out, timeseries.epoch_of(prepared.t0), pr.samples, sampler, log)
        except Exception as e:  # noqa: BLE001 - the time series is a report's extra, never a reason to stop
            log(f"phase {self.label}: no time series: {e}")
            return {"timeseries": None, "hgrm": None}
        return timeseries.relative(files, self.run.dir)

    def record(self, prepared, pr, prof, sampler, heal_before, heal_after, heal) -> dict:
        self.run.write_json(self.out / "result.json", pr.result)
        record = {
            "label": self.label,
            "scenario": self.spec.scenario,
            "warmup": self.warmup,
            "dir": str(self.out.relative_to(self.run.dir)),
            "spec": asdict(self.spec),
            "commands": pr.commands,
            "exit_codes": pr.exit_codes,
            "started": pr.started_at,
            "finished": pr.finished_at,
            "cpu": pr.cpu,
            "profiles": prof.records if prof else [],
            "result": pr.result,
            "healing": healing.delta(heal_before, heal_after) if heal_before and heal_after else None,
        } | self.series(prepared, pr, sampler)
        if self.outage_fault:
            record["fault"] = self.outage_fault.record()
        elif self.faults:
            record["faults"] = [f.record() for f in self.faults]
        if self.faults:
            record["heal"] = heal
            recovery.add_to(self.run.dir, record)
        return record

    def check_fill(self, record: dict) -> None:
        """A fill that did not store every key stops the run: every later phase would read holes."""
        r = record["result"]
        if self.spec.scenario == "fill" and "keys_stored" in r and r["keys_stored"] != r["keys_asked"]:
            raise load.FillIncomplete(
                f"phase {self.label}: {r['keys_stored']} of {r['keys_asked']} keys stored, {r['puts_failed']} PUTs "
                f"failed, {r['threads_done']} of {r['threads']} wrk threads finished; see {tools.rel(self.out)}"
            )

    def report(self, record: dict) -> None:
        r = record["result"]
        log(
            f"phase {self.label}: achieved {r['achieved_rate']:.0f}/s"
            + (f" of {r['requested_rate']}/s" if r.get("requested_rate") else "")
            + f", p99 {p99(r):.2f} ms, failed {r.get('error_rate', 0) * 100:.2f}%"
        )
        h = record["healing"]
        if h and healing.anything(h):
            t = h["total"]
            log(
                f"phase {self.label}: hints {t['hints_written']:.0f} written, {t['hints_replayed']:.0f} replayed, "
                f"{t['hints_pending']:.0f} pending; repair {healing.repaired(h):.0f} records, "
                f"handoff {t['records_moved']:.0f} moved"
            )
