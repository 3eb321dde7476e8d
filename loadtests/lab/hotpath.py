"""The hot-path benchmark: one node with a 256 MB heap over 1M keys of 1 KiB, GET at 10k/s and
20k/s and PUT at 15k/s with 64 connections at a constant rate, and the server CPU per request of
each compared with the no-op route GET /v0/status measured at the same rate in the same run."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import defaults, tools
from .load import log
from .onenode import JAR, Node, cpu_row, settle
from .runrecord import Run
from .settings import RunConfig


HOTPATH = defaults.read(Path(__file__).resolve().with_name("hotpath.env"))


@dataclass
class HotpathConfig:
    """The benchmark's settings; defaults from hotpath.env, and defaults.env for what a lab run shares."""

    jar: Path = JAR
    java: str = ""
    java_options: str = HOTPATH["HOTPATH_JAVA_OPTIONS"]
    port: int = int(HOTPATH["HOTPATH_PORT"])
    data: Path | None = None  # reuse a filled data directory (kept afterwards)
    keys: int = int(HOTPATH["HOTPATH_KEYS"])
    value_size: int = defaults.integer("VALUE_SIZE")
    get_rates: tuple[int, ...] = tuple(int(r) for r in defaults.split(HOTPATH["HOTPATH_GET_RATES"]))
    put_rate: int = int(HOTPATH["HOTPATH_PUT_RATE"])
    duration_s: int = defaults.duration(HOTPATH["HOTPATH_DURATION"])
    warmup_s: int = defaults.duration(HOTPATH["HOTPATH_WARMUP"])
    connections: int = defaults.integer("CONNECTIONS")
    tool: str = HOTPATH["HOTPATH_TOOL"]
    batch: int = int(HOTPATH["HOTPATH_BATCH"])
    max_ratio: float = float(HOTPATH["HOTPATH_MAX_RATIO"])  # server CPU per request, at most this times the no-op route's
    min_rate_share: float = 0.99  # a phase held its rate when it achieved this share of it
    slo_p99_ms: float = defaults.number("SLO_P99_MS")
    flamegraphs: bool = False
    name: str = HOTPATH["HOTPATH_NAME"]
    reports_dir: Path = tools.ROOT / "reports"
    compare: Path | None = None


def _n(v: float) -> str:
    return f"{v:,.0f}".replace(",", " ")


def _check(row: dict, rate: int, cfg: HotpathConfig) -> str:
    held = row["achieved"] >= rate * cfg.min_rate_share
    fast = row["p99"] < cfg.slo_p99_ms
    cheap = row["ratio"] <= cfg.max_ratio
    return (
        f"{row['label']}: target {_n(rate)}/s {'held' if held else 'NOT held'} "
        f"(achieved {_n(row['achieved'])}/s); p99 {row['p99']:.2f} ms "
        f"({'under' if fast else 'NOT under'} {cfg.slo_p99_ms:g} ms); server CPU per request "
        f"{row['server_us']:.1f} µs = {row['ratio']:.2f}x the no-op route's at the same rate "
        f"({'within' if cheap else 'OVER'} {cfg.max_ratio:g}x); {row['error_rate'] * 100:.3f}% failed; "
        f"load generator {row['loadgen_cores']:.2f} cores, other processes {row['others_cores']:.2f} cores"
    )


def run_hotpath(cfg: HotpathConfig) -> Path:
    work = Path(tempfile.mkdtemp(prefix="kvlab-hotpath-"))
    jar_sha256 = hashlib.sha256(cfg.jar.read_bytes()).hexdigest() if cfg.jar.exists() else "missing"
    data_dir = cfg.data or (work / "data")
    fill_marker = data_dir / ".kvlab-filled"
    wanted_fill = f"{cfg.keys} {cfg.value_size}"
    node = None
    run = None
    try:
        node = Node(cfg.jar, cfg.port, cfg.java_options, data_dir, work, cfg.java)
        rc = RunConfig(
            targets=[node.url],
            pids=[node.pid],
            name=cfg.name,
            keys=cfg.keys,
            value_size=cfg.value_size,
            tool=cfg.tool,
            vus=cfg.connections,
            max_vus=cfg.connections,
            connections=cfg.connections,
            slo_p99_ms=cfg.slo_p99_ms,
            events=[],
            batch=cfg.batch,
            reports_dir=cfg.reports_dir,
            compare=cfg.compare,
            phases=["fill", "status", "get", "status", "put"],
            duration_s=cfg.duration_s,
        )
        run = Run(rc, "hotpath", {"hotpath": {k: str(v) if isinstance(v, Path) else v for k, v in vars(cfg).items()}})
        run.doc["invocation"] = run.doc["invocation"] or "loadtests/bench/hotpath.sh"
        if fill_marker.exists() and fill_marker.read_text().strip() == wanted_fill:
            log(f"{data_dir} already holds {cfg.keys} keys of {cfg.value_size} bytes: no fill")
        else:
            run.phase(rc.spec("fill"), "fill", [])
            fill_marker.write_text(wanted_fill + "\n")
        idle = settle(node.pid)
        # Each operation right after the no-op route at its rate: the pair sees the same machine.
        pairs = [("get", rate) for rate in cfg.get_rates] + [("put", cfg.put_rate)]
        rows, checks = [], []
        # Warm-ups just before an operation's first pair: PUTs warmed up before the GETs would leave
        # new versions of the keys for the GETs to read through.
        warm_ups = {pairs[0]: ("status", "get"), pairs[-1]: ("put",)} if cfg.warmup_s > 0 else {}
        for scenario, rate in pairs:
            for warmed in warm_ups.get((scenario, rate), ()):
                run.phase(rc.spec(warmed, rate, cfg.warmup_s), f"warm-up {warmed}@{rate}", [], warmup=True)
            base = cpu_row(f"status@{rate}", run.phase(rc.spec("status", rate, cfg.duration_s), f"status@{rate}", []), None)
            row = cpu_row(f"{scenario}@{rate}", run.phase(rc.spec(scenario, rate, cfg.duration_s), f"{scenario}@{rate}", []), base)
            rows += [base, row]
            checks.append(_check(row, rate, cfg))
        if cfg.flamegraphs:
            for scenario, rate in pairs:
                run.phase(rc.spec(scenario, rate, 20), f"profiled {scenario}@{rate}", ["cpu", "alloc"])
        run.doc["hotpath"] = {
            "java_options": cfg.java_options,
            "keys": cfg.keys,
            "value_size": cfg.value_size,
            "connections": cfg.connections,
            "tool": run.doc["phases"][-1]["result"].get("tool", cfg.tool),
            "rows": rows,
            "checks": checks,
            "node_command": node.command(),
            "jar": f"{tools.rel(cfg.jar)} (sha256 {jar_sha256[:16]})",
            "idle_cores": idle["idle_cores"],
            "settle_s": idle["settle_s"],
            "settled": idle["settled"],
        }
        for c in run.doc["hotpath"]["checks"]:
            log(c)
        run.save()
        return run.finish()
    finally:
        if node:
            node.stop()
            if run is not None:
                shutil.copy2(node.log, run.dir / "node.log")
        shutil.rmtree(work, ignore_errors=True)  # the jar copy, and the data unless DATA was given
