"""A lab run against running nodes: fill, then phases at a fixed rate (or a saturation search, or
one phase with faults on a schedule), every node profiled during every phase, everything under
reports/<timestamp>-<name>/, then the report."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
import urllib.request
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from urllib.parse import urlparse

from . import defaults, envinfo, faults, healing, isolation, load, nodeseries, profiling, promtext, recovery, timeseries, tools
from .ledger import PhaseLedger
from .load import LoadSpec, log
from .results import worst

PHASES = ("fill", "put", "get", "mixed", "range", "status", "outage")
# The outage phase: the mixed load, during which the last node is frozen for the middle third.
OUTAGE_SCENARIO = "mixed"


@dataclass
class RunConfig:
    """A run's settings; every default comes from defaults.env (lab.defaults)."""

    targets: list[str]
    pids: list[int]
    name: str = "local"
    phases: list[str] = field(default_factory=lambda: defaults.items("PHASES"))
    rate: int = defaults.integer("RATE")
    duration_s: int = defaults.seconds("DURATION")
    warmup_s: int = defaults.seconds("WARMUP")
    range_rate: int = defaults.integer("RANGE_RATE")
    keys: int = defaults.integer("KEYS")
    value_size: int = defaults.integer("VALUE_SIZE")
    replicas: str = defaults.text("REPLICAS")
    read_share: float = defaults.number("READ_SHARE")
    range_size: int = defaults.integer("RANGE_SIZE")
    tool: str = defaults.text("TOOL")
    vus: int = defaults.integer("VUS")
    max_vus: int = defaults.integer("MAX_VUS")
    connections: int = defaults.integer("CONNECTIONS")
    threads: int = defaults.integer("THREADS")
    slo_p99_ms: float = defaults.number("SLO_P99_MS")
    request_timeout_s: float = defaults.seconds("REQUEST_TIMEOUT")
    max_error_rate: float = defaults.number("MAX_ERROR_RATE")
    events: list[str] = field(default_factory=lambda: defaults.items("EVENTS"))
    fill_vus: int = defaults.integer("FILL_VUS")
    batch: int = defaults.integer("BATCH")
    fill_timeout_s: int = 900
    reports_dir: Path = tools.ROOT / "reports"
    compare: Path | None = None
    heal_timeout_s: int = defaults.seconds("HEAL_TIMEOUT")
    ledger_rate: int = defaults.integer("LEDGER_RATE")
    ledger_keys: int = defaults.integer("LEDGER_KEYS")
    # The short saturation search after the phases: its Saturation, None for none.
    search: Saturation | None = None
    # Files that hold the nodes' pids, in --pids' order (scripts/local-cluster.sh's): a node the lab
    # starts again gets its new pid written there, so whatever stops the cluster stops it.
    pid_files: list[Path] = field(default_factory=list)

    def spec(
        self, scenario: str, rate: int | None = None, duration_s: int | None = None, tool: str | None = None
    ) -> LoadSpec:
        if scenario == "fill":
            # k6 unless the caller asks for wrk (the scale benchmark): wrk's fill costs a fraction of
            # k6's CPU per key, but marks its end in files on this machine (phase_spec).
            return LoadSpec(
                "fill",
                self.targets,
                None,
                self.fill_timeout_s,
                keys=self.keys,
                value_size=self.value_size,
                replicas=self.replicas,
                tool=tool or "k6",
                fill_vus=self.fill_vus,
                batch=self.batch,
                connections=self.connections,
                threads=self.threads,
            )
        default_rate = self.range_rate if scenario == "range" else self.rate
        # wrk has no mixed script (a wrk process sends one kind of request): mixed runs on k6,
        # unless asked for by name (mixed@wrk), which LoadSpec refuses.
        tool = tool or ("k6" if scenario == "mixed" else self.tool)
        return LoadSpec(
            scenario,
            self.targets,
            rate or default_rate,
            duration_s or self.duration_s,
            keys=self.keys,
            value_size=self.value_size,
            replicas=self.replicas,
            read_share=self.read_share,
            range_size=self.range_size,
            tool=tool,
            vus=self.vus,
            max_vus=self.max_vus,
            connections=self.connections,
            threads=self.threads,
            slo_p99_ms=self.slo_p99_ms,
            request_timeout_s=self.request_timeout_s,
        )


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def new_run_dir(reports_dir: Path, name: str) -> Path:
    run_dir = reports_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(name)}"
    run_dir.mkdir(parents=True)
    return run_dir


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
        if not Path(f"/proc/{pid}").exists():
            raise SystemExit(f"no process {pid}")
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        if exe != "java":
            raise SystemExit(f"process {pid} is {exe}, not a JVM")


def nodes_of(cfg: RunConfig) -> list[profiling.Node]:
    same = len(cfg.pids) == len(cfg.targets)
    return [profiling.Node(f"n{i}", pid, cfg.targets[i] if same else "") for i, pid in enumerate(cfg.pids)]


@dataclass
class Prepared:
    """A phase ready to go: t0 is the time.monotonic() at which its load starts (the profiling
    windows count from it); state is the executor's own."""

    spec: LoadSpec
    out: Path
    label: str
    t0: float
    state: object = None


class LocalExecutor:
    """Load generators and profilers as processes on this machine, nodes by PID (the default).
    lab.k8s.K8sExecutor does the same with Kubernetes Jobs and the pods' profiler sidecars."""

    name = "local"

    def __init__(self, cfg: RunConfig):
        self.cfg = cfg
        self.nodes = nodes_of(cfg)

    def check(self) -> None:
        check_nodes(self.cfg.targets, self.cfg.pids)

    def config(self) -> dict:
        """The executor's own settings, for run.json."""
        return {}

    def env(self) -> dict:
        return envinfo.collect(self.cfg.pids, self.cfg.tool)

    def profiling_gap_s(self) -> float:
        return 0.0

    def profiling(self, windows: list[profiling.Window], out: Path, t0: float) -> profiling.Profiling:
        return profiling.Profiling(self.nodes, windows, out, t0)

    def prepare(self, spec: LoadSpec, out: Path, label: str) -> Prepared:
        return Prepared(spec, out, label, time.monotonic())

    def run(self, prepared: Prepared, status=None) -> load.PhaseRun:
        return load.run(prepared.spec, prepared.out, self.cfg.pids, prepared.label, status=status, t0=prepared.t0)

    def after_phase(self, label: str) -> None:
        for n in self.nodes:
            if not Path(f"/proc/{n.pid}").exists():
                raise SystemExit(f"node {n.name} (pid {n.pid}) is gone after phase {label}")

    def management(self) -> dict[str, str]:
        """Each node's management URL by name: its client port + 1000, the node's default."""
        return {f"n{i}": healing.management_url(t) for i, t in enumerate(self.cfg.targets)}

    def heal_sample(self) -> dict:
        """The nodes' healing counters now (lab.healing), by node name."""
        return healing.sample(self.management())

    def node_metrics(self) -> dict[str, dict[str, float] | str]:
        """Every node's Prometheus page now, by node name: the page parsed (lab.promtext.parse:
        each series as the page writes it, labels included, to its value), or a string that says
        why it could not be read. The node sampler (lab.nodeseries) calls it once a second during
        every phase, so it returns within about nodeseries.SCRAPE_TIMEOUT_S whatever the nodes do
        (one frozen or gone is reported, not waited for) and raises for no single node's failure."""
        return promtext.fetch_all(self.management(), nodeseries.SCRAPE_TIMEOUT_S)

    def fault(self, kind: str, index: int, at_s: float, for_s: float) -> faults.ScheduledFault:
        """A fault of node index (-1: the last), at_s into the phase's load, for for_s; not started.
        SystemExit when this machine cannot make it, saying what it needs."""
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

    def await_healed(self, timeout_s: float) -> dict:
        return healing.await_healed(self.management(), timeout_s, log)

    def close(self) -> None:
        pass


class Run:
    """The run directory and its run.json, rewritten after every phase so a cut run keeps its data."""

    def __init__(self, cfg: RunConfig, kind: str, extra_config: dict | None = None, executor=None):
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
        log(f"run directory {tools.rel(self.dir)}")
        load1 = os.getloadavg()[0]
        if load1 > (os.cpu_count() or 1):
            log(
                f"warning: the machine is busy before the run (load average {load1:.1f} on "
                f"{os.cpu_count()} cores); latency and CPU figures will carry that noise"
            )
        apart = envinfo.nodes_apart(cfg.pids)
        if apart:
            log(
                f"warning: node pid {', '.join(map(str, apart))} runs in another scheduling group (cgroup or "
                "session) than the load generators; the kernel shares the CPU between the groups first"
            )
        (self.dir / "env.json").write_text(json.dumps(self.executor.env(), indent=1))
        self.save()

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
        (self.dir / "run.json").write_text(json.dumps(self.doc, indent=1, default=_json_default))

    def heal_sample(self) -> dict | None:
        """The nodes' healing counters, when the executor can read them."""
        sampler = getattr(self.executor, "heal_sample", None)
        if sampler is None:
            return None
        try:
            return sampler()
        except Exception as e:  # noqa: BLE001 - the counters are a report's extra, never a reason to stop
            log(f"the nodes' healing counters could not be read: {e}")
            return None

    def node_sampler(self) -> nodeseries.Sampler | None:
        """The nodes sampled once a second from now on, when the executor can read their metrics."""
        read = getattr(self.executor, "node_metrics", None)
        return nodeseries.Sampler(read, log=log).start() if read else None

    def series(self, out: Path, prepared: Prepared, pr: load.PhaseRun, sampler) -> dict:
        """Writes the phase's timeseries.json and latency.hgrm; their paths for the phase record."""
        try:
            files = timeseries.write(out, timeseries.epoch_of(prepared.t0), pr.samples, sampler, log)
        except Exception as e:  # noqa: BLE001 - the time series is a report's extra, never a reason to stop
            log(f"phase {prepared.label}: no time series: {e}")
            return {"timeseries": None, "hgrm": None}
        return timeseries.relative(files, self.dir)

    def outage(self, at_s: float, for_s: float) -> faults.ScheduledFault:
        """The outage's fault, the last node paused, not started yet; refused where the executor cannot pause a node."""
        if not hasattr(self.executor, "fault"):
            raise SystemExit(f"the outage phase pauses a node: the {self.executor.name} executor cannot")
        return self.executor.fault("pause", -1, at_s, for_s)

    def phase(
        self,
        spec: LoadSpec,
        label: str,
        events: list[str],
        warmup: bool = False,
        outage: bool = False,
        with_faults: list[faults.ScheduledFault] | None = None,
    ) -> dict:
        """Runs one phase and records it; a warm-up phase is kept out of the report's summaries.
        An outage phase freezes the last node for the middle third of its load; a phase given
        with_faults (not started) runs them on their schedule. Either then waits until the cluster has healed
        (hints replayed, a repair round between every two nodes) before it ends."""
        index = len(self.doc["phases"]) + 1
        out = self.dir / "phases" / f"{index:02d}-{slug(label)}"
        out.mkdir(parents=True, exist_ok=True)
        windows = (
            profiling.plan(events, spec.duration_s, self.executor.profiling_gap_s()) if spec.scenario != "fill" else []
        )
        profiled = bool(windows and self.nodes)
        log(
            f"phase {label}: {spec.scenario} at "
            f"{'full speed' if spec.rate is None else f'{spec.rate}/s'} for "
            f"{'at most ' if spec.rate is None else ''}{spec.duration_s} s"
            + (f"; profiling {', '.join(f'{w.event} {w.seconds:.1f}s' for w in windows)}" if profiled else "")
        )
        fault = self.outage(spec.duration_s / 3, spec.duration_s / 3) if outage else None
        scheduled = [fault] if fault else list(with_faults or [])
        heal_before = self.heal_sample()
        # Every acknowledged write of a phase that breaks something is read back at its end (lab.ledger).
        ledger = PhaseLedger.of(self.executor, self.cfg, spec.duration_s, out) if scheduled else None
        prepared = self.executor.prepare(spec, out, label)
        sampler = self.node_sampler()
        prof = None
        if profiled:
            (out / "profiles").mkdir(parents=True, exist_ok=True)
            prof = self.executor.profiling(windows, out / "profiles", prepared.t0).start()
        for f in scheduled:
            f.start(prepared.t0)
        if ledger:
            ledger.start(prepared.t0)
        try:
            pr = self.executor.run(prepared, status=prof.status if prof else None)
        except BaseException:
            if prof:
                prof.stop()
            if ledger:
                ledger.abandon()
            raise
        finally:
            # Whatever happened, no node is left paused, dead or cut off.
            for f in scheduled:
                f.stop()
            if ledger:
                ledger.stop()
            if sampler:
                sampler.stop()
        if prof:
            prof.join(timeout=90)
        heal = self.executor.await_healed(self.cfg.heal_timeout_s) if scheduled else None
        heal_after = self.heal_sample()
        (out / "result.json").write_text(json.dumps(pr.result, indent=1, default=_json_default))
        record = {
            "label": label,
            "scenario": spec.scenario,
            "warmup": warmup,
            "dir": str(out.relative_to(self.dir)),
            "spec": asdict(spec),
            "commands": pr.commands,
            "exit_codes": pr.exit_codes,
            "started": pr.started_at,
            "finished": pr.finished_at,
            "cpu": pr.cpu,
            "profiles": prof.records if prof else [],
            "result": pr.result,
            "healing": healing.delta(heal_before, heal_after) if heal_before and heal_after else None,
        } | self.series(out, prepared, pr, sampler)
        if fault:
            record["fault"] = fault.record()
        elif scheduled:
            record["faults"] = [f.record() for f in scheduled]
        if scheduled:
            record["heal"] = heal
            record["ledger"] = ledger.check()
        self.doc["phases"].append(record)
        self.save()
        r = pr.result
        if spec.scenario == "fill" and "keys_stored" in r and r["keys_stored"] != r["keys_asked"]:
            raise load.FillIncomplete(
                f"phase {label}: {r['keys_stored']} of {r['keys_asked']} keys stored, {r['puts_failed']} PUTs "
                f"failed, {r['threads_done']} of {r['threads']} wrk threads finished; see {tools.rel(out)}"
            )
        p99 = worst(r, "p99")
        log(
            f"phase {label}: achieved {r['achieved_rate']:.0f}/s"
            + (f" of {r['requested_rate']}/s" if r.get("requested_rate") else "")
            + f", p99 {p99:.2f} ms, failed {r.get('error_rate', 0) * 100:.2f}%"
        )
        h = record["healing"]
        if h and healing.anything(h):
            t = h["total"]
            log(
                f"phase {label}: hints {t['hints_written']:.0f} written, {t['hints_replayed']:.0f} replayed, "
                f"{t['hints_pending']:.0f} pending; repair {healing.repaired(h):.0f} records, "
                f"handoff {t['records_moved']:.0f} moved"
            )
        self.executor.after_phase(label)
        return record

    def finish(self) -> Path:
        self.doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.save()
        from . import report  # matplotlib is imported only now

        report.generate(self.dir, self.cfg.compare)
        return self.dir


def _json_default(o):
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, float) and math.isnan(o):
        return None
    raise TypeError(type(o))


def phase_spec(text: str) -> tuple[str, str | None]:
    """A phase of --phases: a scenario, or scenario@tool to run it with another load generator
    than --tool in the same run (get@wrk next to get compares k6 and wrk on one workload)."""
    scenario, _, tool = text.partition("@")
    if scenario == "outage" and tool:
        raise SystemExit(f"phase {text!r}: the outage phase runs the mixed load on k6")
    if scenario not in PHASES:
        raise SystemExit(f"unknown phase {text!r}: {', '.join(PHASES)}, optionally @k6 or @wrk")
    if tool and tool not in ("k6", "wrk"):
        raise SystemExit(f"unknown tool in phase {text!r}: @k6 or @wrk")
    if tool == "wrk" and scenario in ("fill", "mixed"):
        # wrk's fill (loadtests/wrk2/fill.lua) marks its end in files on this machine, which a load
        # generator in Kubernetes cannot: only the scale benchmark, on a node of its own, uses it.
        raise SystemExit(f"phase {text!r}: the {scenario} phase runs on k6 only")
    return scenario, tool or None


@contextlib.contextmanager
def checked(cfg: RunConfig, executor=None):
    """The run's executor (local processes by default), its nodes checked first, closed after."""
    executor = executor or LocalExecutor(cfg)
    try:
        executor.check()
        yield executor
    finally:
        executor.close()


def run_phases(cfg: RunConfig, executor=None) -> Path:
    phases = [phase_spec(p) for p in cfg.phases]
    with checked(cfg, executor) as executor:
        run = Run(cfg, "phases", executor=executor)
        if any(phase == "outage" for phase, _ in phases):
            run.outage(0, 0)  # refused before the first phase, not after the fill
        warm = set()
        previous = None
        for text, (phase, tool) in zip(cfg.phases, phases):
            outage = phase == "outage"
            scenario = OUTAGE_SCENARIO if outage else phase
            spec = cfg.spec(scenario, tool=tool)
            if scenario != "fill" and scenario not in warm:
                warm_up(run, spec, text)
            elif scenario != "fill" and previous == "fill":
                reconnect(run, spec, text)  # the fill warmed it, on the fill's connections
            # A frozen node cannot be profiled: the outage phase is measured, not profiled.
            run.phase(spec, text, [] if outage else cfg.events, outage=outage)
            warm |= warmed_by(scenario, warm)
            previous = scenario
        if cfg.search:
            # How much can it take: a short search after the fixed rates, its steps not profiled.
            sat = cfg.search
            if sat.scenario not in warm:
                warm_up(run, cfg.spec(sat.scenario, sat.start_rate), f"{sat.scenario}@{sat.start_rate}")
            search(run, sat, [])
        return run.finish()


def warmed_by(scenario: str, warm: set[str]) -> set[str]:
    """The scenarios whose code paths are compiled once this one has run: the fill sends PUTs at
    full speed, and mixed runs what put and get do."""
    done = {scenario} | ({"put"} if scenario == "fill" else set())
    return done | ({"mixed"} if {"put", "get"} <= warm | done else set())


def warm_up(run: Run, spec: LoadSpec, label: str) -> None:
    """The same load, unmeasured, for warmup_s, before the first phase of a scenario: at a few
    hundred requests/s a node's methods reach the JIT's compile thresholds only after tens of
    seconds (three JVMs on two cores measured about a minute for GET), and a phase that began
    cold would measure the compiler, not the store. Its last seconds run on new connections."""
    again = reconnect_s(run.cfg.warmup_s)
    if run.cfg.warmup_s > 0:
        run.phase(replace(spec, duration_s=run.cfg.warmup_s - again), f"warm-up {label}", [], warmup=True)
    reconnect(run, spec, label)


def reconnect(run: Run, spec: LoadSpec, label: str) -> None:
    """The load, unmeasured, for a few seconds on new connections after the nodes were warmed on
    others. The first connections a node accepts after the JIT compiled its steady state make it
    throw away about a hundred compiled methods of the channel pipeline and compile them again over
    seconds (later reconnections only a few), so a measured phase must not be the first."""
    again = reconnect_s(run.cfg.warmup_s)
    if again:
        run.phase(replace(spec, duration_s=again), f"warm-up {label} on new connections", [], warmup=True)


def reconnect_s(warmup_s: int) -> int:
    """The last part of a warm-up that runs on new connections: 10 s, at most half of it."""
    return min(10, warmup_s // 2)


@dataclass
class Saturation:
    """A saturation search; every default comes from defaults.env (lab.defaults)."""

    scenario: str = defaults.text("SEARCH")
    start_rate: int = defaults.integer("START_RATE")
    factor: float = defaults.number("FACTOR")
    max_rate: int = defaults.integer("MAX_RATE")
    max_steps: int = defaults.integer("SEARCH_STEPS")
    step_duration_s: int = defaults.seconds("SEARCH_STEP")
    tolerance: float = defaults.number("TOLERANCE")  # achieved may be this much below requested
    fill: bool = True


def run_saturation(cfg: RunConfig, sat: Saturation, executor=None) -> Path:
    """A saturation search alone: the fill (for reads), a warm-up, the steps, each profiled."""
    with checked(cfg, executor) as executor:
        run = Run(cfg, "saturation", {"saturation": asdict(sat)}, executor=executor)
        if sat.fill and sat.scenario in ("get", "mixed", "range"):
            run.phase(cfg.spec("fill"), "fill", [])
        warm_up(run, cfg.spec(sat.scenario, sat.start_rate), f"{sat.scenario}@{sat.start_rate}")
        search(run, sat, cfg.events)
        return run.finish()


# The lowest rate a search steps down to when its first step fails.
MIN_SEARCH_RATE = 50


def search(run: Run, sat: Saturation, events: list[str]) -> dict:
    """Steps the rate up until p99 passes the SLO, the achieved rate falls behind or requests fail
    (down, when the first step fails already, until a rate holds); run.json's "saturation" holds the steps and the highest rate sustained, and each step's phase
    record is marked saturation_step."""
    cfg = run.cfg
    steps = []
    rate = sat.start_rate
    reason = f"reached the step limit ({sat.max_steps} steps)"
    while len(steps) < sat.max_steps:
        if rate > sat.max_rate:
            reason = f"reached the highest rate allowed ({sat.max_rate}/s)"
            break
        label = f"{sat.scenario}@{rate}"
        rec = run.phase(cfg.spec(sat.scenario, rate, sat.step_duration_s), label, events)
        rec["saturation_step"] = True
        r = rec["result"]
        p99 = worst(r, "p99")
        behind = r["achieved_rate"] < rate * (1 - sat.tolerance)
        failing = r.get("error_rate", 0) > cfg.max_error_rate
        slow = not (p99 <= cfg.slo_p99_ms)
        step = {
            "label": label,
            "rate": rate,
            "achieved_rate": r["achieved_rate"],
            "p99_ms": p99,
            "error_rate": r.get("error_rate", 0),
            "ok": not (behind or failing or slow),
        }
        steps.append(step)
        run.doc["saturation"] = {**asdict(sat), "slo_p99_ms": cfg.slo_p99_ms, "steps": steps}
        run.save()
        if not step["ok"]:
            why = []
            if slow:
                why.append(f"p99 {p99:.2f} ms > SLO {cfg.slo_p99_ms:g} ms")
            if behind:
                why.append(f"achieved {r['achieved_rate']:.0f}/s < {rate}/s - {sat.tolerance * 100:g}%")
            if failing:
                why.append(f"{r['error_rate'] * 100:.2f}% of requests failed")
            reason = f"at {rate}/s: " + "; ".join(why)
            lower = int(rate / sat.factor)
            if any(s["ok"] for s in steps) or lower < MIN_SEARCH_RATE:
                break
            # Not even the first rate held: step down until one does, so the search still answers.
            rate = lower
            continue
        if len(steps) > 1 and steps[-2]["rate"] > rate:
            break  # stepping down, the first rate that held: the reason is the step above's
        nxt = int(round(rate * sat.factor))
        rate = nxt if nxt > rate else rate + 1
    passed = [s["rate"] for s in steps if s["ok"]]
    run.doc["saturation"] = {
        **asdict(sat),
        "slo_p99_ms": cfg.slo_p99_ms,
        "steps": steps,
        "max_sustainable_rate": max(passed) if passed else None,
        "stop_reason": reason,
    }
    run.save()
    best = f"{max(passed)}/s" if passed else f"none (no step met the SLO, the first at {sat.start_rate}/s)"
    log(f"saturation: highest sustained rate {best}; stopped {reason}")
    return run.doc["saturation"]


@dataclass
class FaultPlan:
    """The fault scenario's schedule. A default one (given False) leaves out a fault this machine
    cannot make, and says why; one given on the command line is refused instead."""

    schedule: list[faults.Planned]
    given: bool = True
    duration_s: int = defaults.seconds("DURATION")  # the faulty phase's, lengthened to fit the schedule (faults.phase_seconds)


def run_faults(cfg: RunConfig, plan: FaultPlan, executor=None) -> Path:
    """Fill, warm up, then one measured mixed phase at the rate asked for, during which the faults
    of the schedule kill, pause or cut off nodes; then the wait for the cluster to heal, and per
    fault the figures of its recovery from the phase's time series."""
    with checked(cfg, executor) as executor:
        cleaner = getattr(executor, "clean_faults", None)
        if cleaner:
            cleaner()
        made, left_out = make_faults(executor, plan)
        kept = [p for p, _ in made]
        duration = faults.phase_seconds(kept, plan.duration_s)
        if duration != plan.duration_s:
            log(
                f"faults: the phase runs {duration} s, until {faults.RECOVERY_S} s after the last fault "
                f"({plan.duration_s} s is too short)"
            )
        extra = {
            "faults": ",".join(p.text() for p in kept),
            "faults_left_out": left_out,
            "faults_phase_s": duration,
        }
        run = Run(cfg, "faults", extra, executor=executor)
        for item in left_out:
            log(f"fault {item['fault']} left out: {item['why']}")
        spec = cfg.spec("mixed", duration_s=duration)
        run.phase(cfg.spec("fill"), "fill", [])
        warm_up(run, spec, "mixed")
        log(f"faults: {', '.join(f.describe() + f' at {p.at_s:g} s for {p.for_s:g} s' for p, f in made)}")
        # Faulty nodes cannot be profiled: the phase is measured, not profiled.
        record = run.phase(spec, "faults", [], with_faults=[f for _, f in made])
        add_recovery(run.dir, record)
        run.save()
        return run.finish()


def make_faults(executor, plan: FaultPlan) -> tuple[list[tuple[faults.Planned, faults.ScheduledFault]], list[dict]]:
    """The schedule's faults, made by the executor before any phase runs (not started); a fault the
    executor cannot make stops the run, or, in the default schedule, is left out with why."""
    if not hasattr(executor, "fault"):
        raise SystemExit(f"the {executor.name} executor cannot make faults")
    made, left_out = [], []
    for p, index in faults.place(plan.schedule, [n.name for n in executor.nodes]):
        try:
            made.append((p, executor.fault(p.kind, index, p.at_s, p.for_s)))
        except SystemExit as e:
            if plan.given:
                raise
            left_out.append({"fault": p.text(), "why": str(e)})
    if not made:
        raise SystemExit("no fault of the schedule can be made here: " + "; ".join(x["why"] for x in left_out))
    return made, left_out


def add_recovery(run_dir: Path, record: dict) -> None:
    """Each fault record of the phase gets "recovery" (lab.recovery), or None and "recovery_why"."""
    series, why = recovery.load_series(run_dir, record)
    figures = recovery.of_phase(series, record["faults"], record["spec"].get("rate")) if series else []
    for i, f in enumerate(record["faults"]):
        f["recovery"] = figures[i] if series else None
        if f["recovery"] is None:
            f["recovery_why"] = why or "the fault did not begin"
