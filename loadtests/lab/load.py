"""One load phase: the k6 or wrk command for it, running it with visible progress, and its result
in one shape whichever tool made it (the shape of the k6 scripts' handleSummary JSON)."""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import defaults, jvmpauses, procstat, timeseries, tools
from .loadseries import K6_CSV_ENV, K6_SAMPLES_FILE, Samples, k6_output_args
from .wrkresult import REQUESTS_PER_ITERATION, fill_figures, merge_wrk, parse_wrk

K6_SCRIPTS = tools.LOADTESTS / "k6"
WRK_SCRIPTS = tools.LOADTESTS / "wrk2"


def log(message: str) -> None:
    print(f"[lab {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class LoadSpec:
    """What one phase sends. rate None means as fast as possible (the fill). Defaults: defaults.env."""

    scenario: str  # fill | put | get | mixed | range | conditional | multiget | status | ttl
    targets: list[str]
    rate: int | None
    duration_s: int
    keys: int = defaults.integer("KEYS")
    value_size: int = defaults.integer("VALUE_SIZE")
    replicas: str = defaults.text("REPLICAS")
    read_share: float = defaults.number("READ_SHARE")
    range_size: int = defaults.integer("RANGE_SIZE")
    multiget_size: int = defaults.integer("MULTIGET_SIZE")
    ttl_s: int = defaults.integer("TTL")  # the ttl phase's time to live
    tool: str = defaults.text("TOOL")  # k6 | wrk
    vus: int = defaults.integer("VUS")  # k6: VUs allocated at start = keep-alive connections per target
    max_vus: int = defaults.integer("MAX_VUS")
    connections: int = defaults.integer("CONNECTIONS")  # wrk
    threads: int = defaults.integer("THREADS")  # wrk, in all (split across the targets, at least one each)
    slo_p99_ms: float = defaults.number("SLO_P99_MS")
    max_error_rate: float = defaults.number("MAX_ERROR_RATE")  # k6's threshold on failed requests
    request_timeout_s: float = defaults.seconds("REQUEST_TIMEOUT")  # a request not answered by then counts as failed
    fill_vus: int = defaults.integer("FILL_VUS")
    batch: int = defaults.integer("BATCH")
    key_prefix: str = defaults.text("KEY_PREFIX")
    key_start: int = 0  # the fill's first key index: it PUTs [key_start, key_start + keys)

    def __post_init__(self) -> None:
        if self.tool not in ("k6", "wrk"):
            raise SystemExit(f"unknown tool {self.tool!r}: k6 or wrk")
        if self.tool == "wrk" and self.scenario == "mixed":
            raise SystemExit("the mixed phase runs on k6 only (wrk scripts: fill, put, get, range, conditional, multiget, status, ttl)")


class FillIncomplete(RuntimeError):
    """A fill that did not store every key it was asked to."""


# Where each thread of a wrk fill marks that it has its answer to every PUT (loadtests/wrk2/fill.lua).
FILL_DONE_DIR = "fill-done"


@dataclass
class Command:
    argv: list[str]
    env: dict[str, str]
    log: Path
    summary: Path | None = None  # k6's handleSummary JSON
    target: str = ""
    samples: Path | None = None  # k6's per-request samples (CSV), for the time series

    def text(self) -> str:
        """The command as one could type it from the repository root."""

        def short(v: str) -> str:
            return tools.rel(v) if os.path.isabs(v) else v

        env = " ".join(f"{k}={shlex.quote(short(v))}" for k, v in self.env.items())
        argv = " ".join(shlex.quote(short(a)) for a in self.argv)
        return f"{env} {argv}".strip()


def workload_env(spec: LoadSpec) -> dict[str, str]:
    """What the k6 and the wrk scripts alike read: the key space, the values, ack/from, range size,
    the ttl phase's time to live and share of GETs."""
    env = {"KEYS": str(spec.keys), "VALUE_SIZE": str(spec.value_size), "KEY_PREFIX": spec.key_prefix}
    if spec.replicas:
        env["REPLICAS"] = spec.replicas
    if spec.scenario == "range":
        env["RANGE_SIZE"] = str(spec.range_size)
    if spec.scenario == "multiget":
        env["MULTIGET_SIZE"] = str(spec.multiget_size)
    if spec.scenario == "ttl":
        env["TTL"] = str(spec.ttl_s)
        env["READ_SHARE"] = f"{spec.read_share:g}"
    if spec.scenario == "fill" and spec.key_start:
        env["FILL_START"] = str(spec.key_start)
    return env


def k6_env(spec: LoadSpec) -> dict[str, str]:
    """The environment of a k6 scenario for the phase (all but SUMMARY_JSON, which says where the
    summary goes): the same on this machine and in a Kubernetes Job."""
    env = {"TARGETS": ",".join(spec.targets)} | workload_env(spec)
    if spec.scenario == "fill":
        env |= {
            "FILL_VUS": str(spec.fill_vus),
            "BATCH": str(spec.batch),
            "FILL_MAX_DURATION": f"{spec.duration_s}s",
            "FILL_REQUEST_TIMEOUT": f"{spec.request_timeout_s:g}s",
        }
    else:
        env |= {
            "RATE": str(spec.rate),
            "DURATION": f"{spec.duration_s}s",
            "VUS": str(spec.vus),
            "MAX_VUS": str(max(spec.max_vus, spec.vus)),
            "SLO_P99_MS": f"{spec.slo_p99_ms:g}",
            "MAX_ERROR_RATE": f"{spec.max_error_rate:g}",
            "REQUEST_TIMEOUT": f"{spec.request_timeout_s:g}s",
        }
    if spec.scenario == "mixed":
        env["READ_SHARE"] = f"{spec.read_share:g}"
    return env


def wrk_args(
    spec: LoadSpec, is_wrk2: bool, share: int = 1, series_t0_ms: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """Options and environment of one wrk process that sends 1/share of the phase (one process per
    target here; one Job in Kubernetes): wrk2 paces itself with -R, Debian's wrk from Lua. With
    series_t0_ms (the phase's second 0, ms since the epoch) its script counts answers per second.

    Threads are split like connections and the rate, at least one per process, so a run against
    three nodes gets the load generator a run against one node gets, not three times its threads
    on the same cores. The conditional phase has as many threads as connections (conditional.lua),
    and twice its rate in requests: RATE counts its updates, a GET and a PUT each."""
    env = workload_env(spec) | {"WRK_STATUS": "1"}
    if series_t0_ms:
        env["WRK_SERIES_T0_MS"] = str(series_t0_ms)
    conns = max(1, spec.connections // share)
    threads = max(1, min(spec.threads // share, conns))
    if spec.scenario == "conditional":
        # One connection per thread: wrk does not tell a script which connection an answer came on,
        # and conditional.lua pairs each GET's ETag with the PUT that follows it.
        threads = conns
    options = [f"-t{threads}", f"-c{conns}", f"-d{spec.duration_s}s", f"--timeout={spec.request_timeout_s:g}s", "--latency"]
    if spec.rate is None:
        # The fill, unpaced; its -d only bounds it (fill.lua: each thread takes its share by number).
        env["WRK_THREADS"] = str(threads)
        if is_wrk2:
            options.append(f"-R{WRK2_UNPACED_RATE}")  # wrk2 needs a rate: one no connection reaches
        return options, env
    rate = max(1, round(spec.rate * REQUESTS_PER_ITERATION.get(spec.scenario, 1) / share))
    if is_wrk2:
        options.append(f"-R{rate}")
    else:
        env |= {"WRK_RATE": str(rate), "WRK_THREADS": str(threads)}
    return options, env


WRK2_UNPACED_RATE = 100_000_000


def commands(spec: LoadSpec, out: Path, series_t0_ms: int | None = None) -> list[Command]:
    """The phase's load generators; series_t0_ms: the phase's second 0 for wrk's per-second counts."""
    if spec.tool == "k6":
        samples = out / K6_SAMPLES_FILE
        env = k6_env(spec) | K6_CSV_ENV | {"SUMMARY_JSON": str(out / "k6-summary.json")}
        # k6 runs from the repository root: the output's path as the rest of the command shows it.
        argv = [tools.k6(), "run", "--no-usage-report", "--no-color", *k6_output_args(tools.rel(samples)),
                str(K6_SCRIPTS / f"{spec.scenario}.js")]
        return [Command(argv, env, out / "k6.log", out / "k6-summary.json", samples=samples)]

    wrk = tools.wrk()
    result = []
    for i, target in enumerate(spec.targets):
        options, env = wrk_args(spec, wrk.is_wrk2, len(spec.targets), series_t0_ms)
        if spec.scenario == "fill":
            (out / FILL_DONE_DIR).mkdir(exist_ok=True)
            env |= {"WRK_FILL_DONE_DIR": str(out / FILL_DONE_DIR), "WRK_FILL_PART": str(i),
                    "WRK_FILL_PARTS": str(len(spec.targets))}
        argv = [wrk.path, *options, "-s", str(WRK_SCRIPTS / f"{spec.scenario}.lua"), target]
        result.append(Command(argv, env, out / f"wrk-{i}.txt", target=target))
    return result


@dataclass
class Running:
    command: Command
    process: subprocess.Popen
    started: float
    rusage: object | None = None
    returncode: int | None = None


@dataclass
class PhaseRun:
    """A finished phase: its result, CPU accounting and exit codes, and what its load generators
    left for the phase's time series (read after the phase: lab.timeseries)."""

    result: dict
    cpu: dict
    commands: list[str]
    exit_codes: list[int]
    started_at: str
    finished_at: str
    extra: dict = field(default_factory=dict)
    samples: Samples | None = None


def run(
    spec: LoadSpec,
    out: Path,
    node_pids: list[int],
    label: str,
    progress_every: float = 5.0,
    status: callable = None,
    t0: float | None = None,
) -> PhaseRun:
    """Runs the phase to its end (bounded: duration plus a grace period), printing progress.
    t0: the time.monotonic() of the phase's second 0 (default: now)."""
    out.mkdir(parents=True, exist_ok=True)
    cmds = commands(spec, out, round(timeseries.epoch_of(time.monotonic() if t0 is None else t0) * 1000))
    for c in cmds:
        log(f"{label}: {c.text()}")
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    before = procstat.sample(node_pids, threads=True)
    pauses_before = jvmpauses.sample(node_pids)
    running = []
    for c in cmds:
        f = open(c.log, "w")
        p = tools.spawn(c.argv, f, env=os.environ | c.env, cwd=tools.ROOT)
        f.close()
        running.append(Running(c, p, time.monotonic()))
    t0 = time.monotonic()
    # An open-model phase ends on time; the fill's duration is its upper bound. Either way, a
    # minute more and it is stopped.
    deadline = t0 + spec.duration_s + 60
    signalled: set[tuple[int, int]] = set()
    last_progress = t0
    last_sample = before
    wrk_fill = spec.tool == "wrk" and spec.scenario == "fill"
    try:
        while any(r.returncode is None for r in running):
            if wrk_fill and (fill_done(cmds) or not all(map(procstat.running, node_pids))):
                # wrk cannot end itself before -d: every thread has marked its end (or a node is
                # gone), so SIGINT makes it print its summary now.
                for r in running:
                    if r.returncode is None and (r.process.pid, signal.SIGINT) not in signalled:
                        signalled.add((r.process.pid, signal.SIGINT))
                        os.killpg(r.process.pid, signal.SIGINT)
            for r in running:
                if r.returncode is None:
                    pid, status_code, rusage = os.wait4(r.process.pid, os.WNOHANG)
                    if pid:
                        r.returncode = os.waitstatus_to_exitcode(status_code)
                        r.process.returncode = r.returncode
                        r.rusage = rusage
            now = time.monotonic()
            if now > deadline:
                # Bounded whatever happens: SIGTERM once past the deadline, SIGKILL 10 s later.
                sig = signal.SIGTERM if now < deadline + 10 else signal.SIGKILL
                for r in running:
                    if r.returncode is None and (r.process.pid, sig) not in signalled:
                        signalled.add((r.process.pid, sig))
                        log(f"{label}: {tools.rel(r.command.argv[0])} overran its time; sending {sig.name}")
                        os.killpg(r.process.pid, sig)
            if now - last_progress >= progress_every and any(r.returncode is None for r in running):
                current = procstat.sample(node_pids)
                d = procstat.delta(last_sample, current)
                nodes = " ".join(f"{pid}:{v['cores']:.2f}" for pid, v in d["processes"].items())
                shown = f"{now - t0:.0f}/{spec.duration_s} s" if spec.scenario != "fill" else f"{now - t0:.0f} s"
                extra = "".join(f" | {p}" for p in map(_tool_progress, cmds) if p)
                extra += f" | {status()}" if status else ""
                log(
                    f"{label}: {shown} | node cores {nodes or '-'} | machine busy "
                    f"{d['machine_busy_share'] * 100:.0f}%{extra}"
                )
                last_progress, last_sample = now, current
            time.sleep(0.2)
    except BaseException:
        # Interrupted (Ctrl-C) or failed: the load generators run in sessions of their own, so stop
        # them here rather than leave them loading the nodes until their duration ends.
        for r in running:
            if r.returncode is None:
                os.killpg(r.process.pid, signal.SIGTERM)
                r.process.wait()
        raise
    after = procstat.sample(node_pids, threads=True)
    pauses_after = jvmpauses.sample(node_pids)
    finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    cpu = procstat.delta(before, after)
    cpu["jvm_pauses"] = jvmpauses.delta(pauses_before, pauses_after, cpu["wall_s"])
    gen_cpu = sum(r.rusage.ru_utime + r.rusage.ru_stime for r in running if r.rusage)
    cpu["loadgen"] = {
        "cpu_s": gen_cpu,
        "cores": gen_cpu / cpu["wall_s"] if cpu["wall_s"] > 0 else math.nan,
        "tool": spec.tool,
    }
    ours = gen_cpu + sum(v["cpu_s"] for v in cpu["processes"].values() if not math.isnan(v["cpu_s"]))
    cpu["others_cpu_s"] = max(0.0, cpu["machine_busy_s"] - ours)

    result, samples = collect(spec, cmds)
    requests = result.get("requests") or 0
    for v in cpu["processes"].values():
        v["us_per_request"] = v["cpu_s"] * 1e6 / requests if requests else math.nan
    cpu["loadgen"]["us_per_request"] = gen_cpu * 1e6 / requests if requests else math.nan
    per_request = 1 / requests if requests else math.nan
    for t in cpu.get("threads", {}).values():
        t["us_per_request"] = (t["user_s"] + t["sys_s"]) * 1e6 * per_request
        t["waits_per_request"] = t["waits"] * per_request
        t["preemptions_per_request"] = t["preemptions"] * per_request
    for r in running:
        if r.returncode not in (0, 99):  # k6 exits 99 when a threshold fails: still a result
            log(f"{label}: {tools.rel(r.command.argv[0])} exited with {r.returncode}; see {tools.rel(r.command.log)}")
    return PhaseRun(
        result, cpu, [c.text() for c in cmds], [r.returncode for r in running], started_at, finished_at,
        samples=samples,
    )


def fill_marks(cmds: list[Command]) -> tuple[int, int]:
    """(threads that have marked their end, threads in all) of a wrk fill's processes (their -t)."""
    marked = len(list(Path(cmds[0].env["WRK_FILL_DONE_DIR"]).iterdir()))
    return marked, sum(int(next(a[2:] for a in c.argv if a.startswith("-t"))) for c in cmds)


def fill_done(cmds: list[Command]) -> bool:
    """Whether every thread of every wrk process of the fill has marked its end."""
    marked, threads = fill_marks(cmds)
    return marked >= threads


def _tool_progress(cmd: Command) -> str:
    """k6's latest progress line ("main [ 33% ] 16 VUs ... 083118/250000 shared iters"), if any."""
    try:
        with open(cmd.log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 1000))
            tail = f.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip().startswith("main ")]
    return " ".join(lines[-1].split()[1:]) if lines else ""


def collect(spec: LoadSpec, cmds: list[Command]) -> tuple[dict, Samples]:
    """The phase's result, and what its load generators left for the time series."""
    duration = None if spec.scenario == "fill" else spec.duration_s
    if spec.tool == "k6":
        path = cmds[0].summary
        if not path.exists():
            raise RuntimeError(f"k6 wrote no summary; see {cmds[0].log}")
        return json.loads(path.read_text()), Samples("k6", csv=[c.samples for c in cmds if c.samples], duration_s=duration)
    parts = [parse_wrk(c.log, c.target) for c in cmds]
    result = merge_wrk(spec, parts)
    if spec.scenario == "fill":
        result |= fill_figures(spec, result, *fill_marks(cmds))
    outputs = [c.log.read_text(errors="replace") for c in cmds] if result["tool"] == "wrk2" else []
    return result, Samples(result["tool"], wrk_parts=parts, wrk_outputs=outputs, duration_s=duration)


