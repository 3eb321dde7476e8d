"""A run's settings: what it sends (RunConfig, and the LoadSpec of each phase it makes), how a
saturation search steps the rate (Saturation), and the fault scenario's schedule (FaultPlan).
Every default comes from defaults.env (lab.defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import defaults, faults, tools
from .load import LoadSpec


@dataclass
class Saturation:
    """A saturation search (lab.scenarios.saturation)."""

    scenario: str = defaults.text("SEARCH")
    start_rate: int = defaults.integer("START_RATE")
    factor: float = defaults.number("FACTOR")
    max_rate: int = defaults.integer("MAX_RATE")
    max_steps: int = defaults.integer("SEARCH_STEPS")
    step_duration_s: int = defaults.seconds("SEARCH_STEP")
    tolerance: float = defaults.number("TOLERANCE")  # achieved may be this much below requested
    fill: bool = True


@dataclass
class FaultPlan:
    """The fault scenario's schedule. A default one (given False) leaves out a fault this machine
    cannot make, and says why; one given on the command line is refused instead."""

    schedule: list[faults.Planned]
    given: bool = True
    duration_s: int = defaults.seconds("DURATION")  # the faulty phase's, lengthened to fit the schedule (faults.phase_seconds)


@dataclass
class RunConfig:
    """A run's settings."""

    targets: list[str]
    pids: list[int]
    name: str = "local"
    phases: list[str] = field(default_factory=lambda: defaults.items("PHASES"))
    rate: int = defaults.integer("RATE")
    duration_s: int = defaults.seconds("DURATION")
    warmup_s: int = defaults.seconds("WARMUP")
    range_rate: int = defaults.integer("RANGE_RATE")
    keys: int = defaults.integer("KEYS")
    key_prefix: str = defaults.text("KEY_PREFIX")
    value_size: int = defaults.integer("VALUE_SIZE")
    replicas: str = defaults.text("REPLICAS")
    read_share: float = defaults.number("READ_SHARE")
    range_size: int = defaults.integer("RANGE_SIZE")
    multiget_rate: int = defaults.integer("MULTIGET_RATE")
    multiget_size: int = defaults.integer("MULTIGET_SIZE")
    ttl_s: int = defaults.integer("TTL")
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
    fill_timeout_s: int = defaults.seconds("FILL_MAX_DURATION")
    fill_request_timeout_s: float = defaults.seconds("FILL_REQUEST_TIMEOUT")
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
            # k6's CPU per key, but marks its end in files on this machine (scenarios.phases.phase_spec).
            return LoadSpec(
                "fill",
                self.targets,
                None,
                self.fill_timeout_s,
                keys=self.keys,
                key_prefix=self.key_prefix,
                value_size=self.value_size,
                replicas=self.replicas,
                tool=tool or "k6",
                request_timeout_s=self.fill_request_timeout_s,
                fill_vus=self.fill_vus,
                batch=self.batch,
                connections=self.connections,
                threads=self.threads,
            )
        default_rate = {"range": self.range_rate, "multiget": self.multiget_rate}.get(scenario, self.rate)
        # wrk has no mixed script (a wrk process sends one kind of request): it runs on k6, unless
        # asked for by name (mixed@wrk), which LoadSpec refuses.
        tool = tool or ("k6" if scenario == "mixed" else self.tool)
        return LoadSpec(
            scenario,
            self.targets,
            rate or default_rate,
            duration_s or self.duration_s,
            keys=self.keys,
            key_prefix=self.key_prefix,
            value_size=self.value_size,
            replicas=self.replicas,
            read_share=self.read_share,
            range_size=self.range_size,
            multiget_size=self.multiget_size,
            ttl_s=self.ttl_s,
            tool=tool,
            vus=self.vus,
            max_vus=self.max_vus,
            connections=self.connections,
            threads=self.threads,
            slo_p99_ms=self.slo_p99_ms,
            max_error_rate=self.max_error_rate,
            request_timeout_s=self.request_timeout_s,
        )
