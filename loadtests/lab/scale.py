"""The scale benchmark: one node of its own, with the Helm chart's memory limit and JVM options,
filled in steps to each size of SIZES (every step adds keys to the ones before), and at each size
the fill's rate and write amplification, then status, GET and PUT at a fixed rate over every key
filled so far (p50, p99, server CPU per request), the node's memory, its disk use, RocksDB's block
cache hit rates, and whether the node survived. run.json's "scale" holds it; the report's scale
section shows it (lab.report.scaleview)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import defaults, healing, memlimit, promtext, scalefigures, tools
from .load import FillIncomplete, log
from .onenode import JAR, Node, cpu_row, settle
from .runrecord import Run
from .settings import RunConfig
from .warmup import warm_up

SCALE = defaults.read(Path(__file__).resolve().with_name("scale.env"))
FILL_MARKER = ".kvlab-scale-filled"  # in the data directory: "<keys filled> <value size>"
SCRAPE_TIMEOUT_S = 10.0
MIN_FILL_RATE = 20_000  # keys/s, the fill's target at every size
MAX_P99_GROWTH = 2.0  # GET p99 at the largest size, at most this times the smallest size's


@dataclass
class ScaleConfig:
    sizes: list[int] = field(default_factory=lambda: scalefigures.parse_sizes(SCALE["SIZES"]))
    rate: int = int(SCALE["RATE"])
    duration_s: int = defaults.duration(SCALE["SCALE_DURATION"])
    warmup_s: int = defaults.duration(SCALE["SCALE_WARMUP"])
    value_size: int = int(SCALE["VALUE_SIZE"])
    memory_limit: str = SCALE["MEMORY_LIMIT"]
    port: int = int(SCALE["PORT"])
    data: Path | None = None  # a data directory to keep and reuse: only what it lacks is filled
    keep_data: bool = False
    jar: Path = JAR
    java: str = ""
    connections: int = 64
    fill_connections: int = 64
    threads: int = 2
    name: str = SCALE["NAME"]
    reports_dir: Path = tools.ROOT / "reports"
    compare: Path | None = None


def filled_keys(data_dir: Path, value_size: int) -> int:
    """How many keys (0..n-1) an earlier run left in data_dir, by its marker; 0 without one."""
    marker = data_dir / FILL_MARKER
    if not marker.exists():
        return 0
    keys, size = (int(x) for x in marker.read_text().split())
    if size != value_size:
        raise SystemExit(f"{data_dir} holds values of {size} bytes, not {value_size}: use another DATA")
    return keys


def fill_seconds(keys: int) -> int:
    """The longest a fill of keys may take: at 2 000 keys/s, a tenth of the target, and a minute."""
    return 60 + keys // 2000


class Scale:
    """One run of the benchmark: the node, its run directory, and a step per size."""

    def __init__(self, cfg: ScaleConfig, run: Run, node: Node, plan: memlimit.MemoryPlan, data_dir: Path):
        self.cfg, self.run, self.node, self.plan, self.data_dir = cfg, run, node, plan, data_dir
        self.management = healing.management_url(node.url)

    def page(self) -> dict:
        return scalefigures.counters(promtext.fetch(self.management, SCRAPE_TIMEOUT_S))

    def phase(self, scenario: str, keys: int, label: str) -> dict:
        spec = replace(self.run.cfg.spec(scenario, self.cfg.rate, self.cfg.duration_s), keys=keys)
        record = self.run.phase(spec, label, [])
        self.check_alive(label)
        return record

    def check_alive(self, label: str) -> None:
        """Stops the run when the node's process has exited (OOM-killed, out of heap, crashed)."""
        code = self.node.process.poll()
        if code is not None:
            raise SystemExit(f"the node's process exited with {code} during {label}")

    def fill(self, start: int, size: int) -> dict:
        """Fills [start, size), waits for the node to settle; the fill's figures and its write amplification."""
        before, io_before = self.page(), scalefigures.io_write_bytes(self.node.pid)
        spec = replace(
            self.run.cfg.spec("fill", tool="wrk"), keys=size - start, key_start=start,
            duration_s=fill_seconds(size - start), connections=self.cfg.fill_connections,
        )
        rec = self.run.phase(spec, f"fill to {scalefigures.short(size)}", [])
        self.check_alive(f"the fill to {scalefigures.short(size)}")
        idle = settle(self.node.pid)
        r = rec["result"]
        return {
            "from": start,
            "keys": size - start,
            "seconds": r["duration_s"],
            "rate": r["achieved_rate"],
            "stored": r["keys_stored"],
            "failed": r["puts_failed"],
            "settle": idle,
        } | scalefigures.write_amplification(
            io_before, scalefigures.io_write_bytes(self.node.pid), before, self.page(), size - start, self.cfg.value_size
        )

    def step(self, filled: int, size: int) -> dict:
        cfg, at = self.cfg, f"at {scalefigures.short(size)}"
        step: dict = {"keys": size, "fill": None}
        self.run.doc["scale"]["steps"].append(step)
        if size > filled:
            if filled == 0 and cfg.warmup_s > 0:
                # A cold JVM would time the JIT, not the store: PUTs first, over the keys the fill then writes.
                spec = replace(self.run.cfg.spec("put", cfg.rate, cfg.warmup_s), keys=size)
                self.run.phase(spec, f"warm-up put@{cfg.rate} before the fill", [], warmup=True)
                self.check_alive("the warm-up before the fill")
            step["fill"] = self.fill(filled, size)
            (self.data_dir / FILL_MARKER).write_text(f"{size} {cfg.value_size}\n")
        else:
            log(f"{self.data_dir} already holds {filled} keys: no fill to {size}")
            step["settle"] = settle(self.node.pid)
        # Before the PUT phase rewrites keys: the data's own footprint at this size.
        step["disk_after_fill"] = scalefigures.disk_use(self.data_dir)
        self.run.save()
        for scenario in ("status", "get", "put"):
            spec = replace(self.run.cfg.spec(scenario, cfg.rate, cfg.duration_s), keys=size)
            warm_up(self.run, spec, f"{scenario}@{cfg.rate} {at}")
            self.check_alive(f"the warm-up of {scenario} {at}")
        rows = {}
        rows["status"] = cpu_row("status", self.phase("status", size, f"status@{cfg.rate} {at}"), None)
        before = self.page()
        rows["get"] = cpu_row("get", self.phase("get", size, f"get@{cfg.rate} {at}"), rows["status"])
        step["get_cache"] = scalefigures.hit_rates(before, self.page())
        rows["put"] = cpu_row("put", self.phase("put", size, f"put@{cfg.rate} {at}"), rows["status"])
        step["rows"] = rows
        self.measure_node(step)
        self.run.save()
        return step

    def measure_node(self, step: dict) -> None:
        """Memory, disk and RocksDB's properties now; whether the node still runs and answers."""
        page = self.page()
        step["memory"] = {
            "heap_used": page["heap_used"],
            "heap_max": page["heap_max"],
            "rss": scalefigures.rss_bytes(self.node.pid),
            "cgroup": memlimit.cgroup_memory(self.plan.cgroup),
        }
        step["disk_bytes"] = scalefigures.disk_bytes(self.data_dir)  # after the PUT phase's rewrites
        step["properties"] = {p: page[f"property.{p}"] for p in scalefigures.PROPERTIES}
        step["alive"] = self.node.alive()


def _invocation(cfg: ScaleConfig) -> str:
    sizes = ",".join(scalefigures.short(s) for s in cfg.sizes)
    return (
        f"python -m lab scale --sizes {sizes} --rate {cfg.rate} --duration {cfg.duration_s} --warmup {cfg.warmup_s} "
        f"--value-size {cfg.value_size} --memory-limit {cfg.memory_limit} --port {cfg.port}"
        + (f" --data {cfg.data}" if cfg.data else "") + (" --keep-data" if cfg.keep_data else "")
    )


def run_scale(cfg: ScaleConfig) -> tuple[Path | None, bool]:
    """Runs the benchmark; the run directory (None when the node never started) and whether the
    node survived and every key was stored. The report is written whatever happened."""
    work = Path(tempfile.mkdtemp(prefix="kvlab-scale-"))
    kept = cfg.data is not None or cfg.keep_data
    data_dir = cfg.data or (Path(tempfile.mkdtemp(prefix="kvlab-scale-data-")) if cfg.keep_data else work / "data")
    data_dir.mkdir(parents=True, exist_ok=True)
    plan = memlimit.plan(cfg.memory_limit)
    if plan.why_not:
        log(f"memory limit not enforced: {plan.why_not}")
    node = run = None
    failure = ""
    try:
        filled = filled_keys(data_dir, cfg.value_size)
        if plan.enforced:
            try:
                memlimit.make_cgroup(plan)
                node = Node(cfg.jar, cfg.port, plan.java_options, data_dir, work, cfg.java, memlimit.enter(plan.cgroup))
                log(f"node in cgroup {plan.cgroup}: memory limited to {plan.limit_bytes} bytes, swap included")
            except (OSError, subprocess.SubprocessError) as e:
                # The machine said it could and then did not: measure without the limit, and say so.
                memlimit.remove_cgroup(plan.cgroup)
                plan = memlimit.unenforced(plan, f"the cgroup {plan.cgroup} could not be made or entered ({e})")
                log(f"memory limit not enforced: {plan.why_not}")
        if node is None:
            node = Node(cfg.jar, cfg.port, plan.java_options, data_dir, work, cfg.java)
        rc = RunConfig(
            targets=[node.url], pids=[node.pid], name=cfg.name, keys=cfg.sizes[-1], value_size=cfg.value_size,
            tool="wrk", connections=cfg.connections, threads=cfg.threads, events=[], phases=[],
            rate=cfg.rate, duration_s=cfg.duration_s, warmup_s=cfg.warmup_s,
            reports_dir=cfg.reports_dir, compare=cfg.compare,
        )
        config = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()}
        run = Run(rc, "scale", {"scale": config})
        run.doc["invocation"] = run.doc["invocation"] or _invocation(cfg)
        run.doc["scale"] = {
            "sizes": cfg.sizes,
            "rate": cfg.rate,
            "duration_s": cfg.duration_s,
            "warmup_s": cfg.warmup_s,
            "value_size": cfg.value_size,
            "connections": cfg.connections,
            "fill_connections": cfg.fill_connections,
            "memory": plan.record(),
            "node_command": node.command(),
            "jar": f"{tools.rel(cfg.jar)} (sha256 {hashlib.sha256(cfg.jar.read_bytes()).hexdigest()[:16]})",
            "data_dir": str(data_dir) if kept else "a temporary directory, removed after the run",
            "reused_keys": filled,
            "targets": {"min_fill_rate": MIN_FILL_RATE, "max_p99_growth": MAX_P99_GROWTH},
            "steps": [],
        }
        scale = Scale(cfg, run, node, plan, data_dir)
        for size in cfg.sizes:
            step = scale.step(filled, size)
            filled = max(filled, size)
            if not step["alive"]:
                failure = f"the node did not answer after the steps to {scalefigures.short(size)} keys"
                break
    except (SystemExit, FillIncomplete, OSError, RuntimeError) as e:
        failure = str(e) or type(e).__name__
        log(f"scale: {failure}")
        if run is None:
            raise
    finally:
        exit_code = None
        if node:
            exit_code = node.process.poll()
            steps = run.doc["scale"]["steps"] if run is not None else []
            if steps and "alive" not in steps[-1]:
                steps[-1]["alive"] = node.alive()  # the step was cut short: say whether the node was why
            node.stop()
        cgroup_after = memlimit.cgroup_memory(plan.cgroup)
        leftover = memlimit.remove_cgroup(plan.cgroup)
        if leftover:
            log(leftover)
        if run is not None:
            s = run.doc["scale"]
            s |= {"failure": failure, "exit_code": exit_code, "cgroup_after": cgroup_after}
            s["survived"] = not failure and exit_code is None and not cgroup_after.get("oom_kill")
            shutil.copy2(node.log, run.dir / "node.log")
            run.save()
        shutil.rmtree(work, ignore_errors=True)  # the jar copy, and the data unless kept
        if kept:
            log(f"data kept in {data_dir} ({filled_keys(data_dir, cfg.value_size)} keys): reuse it with DATA={data_dir}")
    out = run.finish()
    return out, run.doc["scale"]["survived"]
