"""kvlab's load lab.

    python -m lab run       --targets URL,... --pids PID,... [--phases fill,put,get,mixed] [--rate N] ...
    python -m lab saturate  --targets URL,... --pids PID,... [--scenario get] [--start-rate N] ...
    python -m lab faults    --targets URL,... --pids PID,... [--faults kill@20+15,pause@70+15,...] ...
    python -m lab soak      --targets URL,... --pids PID,... [--soak-duration 30m] [--soak-rate search|N|RUN_DIR] ...
    python -m lab hotpath   [--tool k6|wrk] [--duration 30] ...
    python -m lab scale     [--sizes 100k,1M,10M] [--rate 10000] [--memory-limit helm|none|2Gi] ...
    python -m lab report    RUN_DIR [--compare OTHER_RUN_DIR]
    python -m lab check     RUN_DIR      (does the report have every part?)
    python -m lab target-rate RUN_DIR [--share 40]        (SHARE % of a one-node search's rate)
    python -m lab replication-cost --out DIR RUN_DIR ...  (scripts/replication-cost.sh's verdict)

Run it from loadtests/ (or with loadtests/ on PYTHONPATH) with the venv that
loadtests/tools/install.sh makes; mk/lab.mk wraps every command in a make target.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from urllib.parse import urlparse

from . import check, defaults, faults, isolation, replication_cost, runner, soak

# Every option's default: defaults.env, through the run's settings.
D = runner.RunConfig(targets=[], pids=[])
S = runner.Saturation()


def _duration(text: str) -> int:
    """Seconds from 30, 30s, 2m, 1m30s."""
    try:
        return defaults.duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _list(text: str) -> list[str]:
    return defaults.split(text)


def _events(text: str) -> list[str]:
    if text.strip().lower() in ("", "none", "off"):
        return []
    return _list(text)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--targets",
        type=_list,
        default=[],
        help="base URLs, comma-separated (local; k8s: the release's client Service)",
    )
    p.add_argument(
        "--pids",
        type=lambda s: [int(x) for x in _list(s)],
        default=[],
        help="PIDs of the node JVMs to profile and measure, comma-separated",
    )
    p.add_argument("--name", default="local", help="the run's name, after its timestamp")
    p.add_argument("--rate", type=int, default=D.rate, help=f"requests/s of put, get, mixed ({D.rate})")
    p.add_argument(
        "--duration", type=_duration, default=D.duration_s, help=f"each phase (and search step): 30, 30s, 2m ({D.duration_s}s)"
    )
    p.add_argument(
        "--warmup",
        type=_duration,
        default=D.warmup_s,
        help="before the first phase of each scenario (and a saturation search) the same load, unmeasured; "
        f"the fill warms put, put and get warm mixed; 0 for none ({D.warmup_s}s)",
    )
    p.add_argument("--range-rate", type=int, default=D.range_rate, help=f"range reads/s ({D.range_rate})")
    p.add_argument("--keys", type=int, default=D.keys, help=f"key space ({D.keys})")
    p.add_argument("--value-size", type=int, default=D.value_size, help=f"bytes per value ({D.value_size})")
    p.add_argument("--replicas", default=D.replicas, help="ack/from on every request (the server's default)")
    p.add_argument("--read-share", type=float, default=D.read_share, help=f"GETs in the mixed phase ({D.read_share:g})")
    p.add_argument("--range-size", type=int, default=D.range_size, help=f"keys per range read ({D.range_size})")
    p.add_argument(
        "--tool",
        choices=["k6", "wrk"],
        default=D.tool,
        help=f"load generator of the timed phases ({D.tool}); the fill and mixed always use k6",
    )
    p.add_argument("--vus", type=int, default=D.vus, help=f"k6 VUs (connections per target) at start ({D.vus})")
    p.add_argument("--max-vus", type=int, default=D.max_vus, help=f"k6 VUs at most ({D.max_vus})")
    p.add_argument("--connections", type=int, default=D.connections, help=f"wrk connections in all ({D.connections})")
    p.add_argument(
        "--threads",
        type=int,
        default=D.threads,
        help=f"wrk threads in all, split across the targets like the connections, at least one each ({D.threads})",
    )
    p.add_argument("--slo-p99-ms", type=float, default=D.slo_p99_ms, help=f"SLO on p99 latency ({D.slo_p99_ms:g} ms)")
    p.add_argument(
        "--request-timeout",
        type=_duration,
        default=D.request_timeout_s,
        help=f"a request not answered by then counts as failed ({D.request_timeout_s:g}s)",
    )
    p.add_argument(
        "--max-error-rate", type=float, default=D.max_error_rate, help=f"share of failed requests allowed ({D.max_error_rate:g})"
    )
    p.add_argument(
        "--events",
        type=_events,
        default=D.events,
        help=f"profiler events per phase, comma-separated, or none ({','.join(D.events) or 'none'})",
    )
    p.add_argument(
        "--heal-timeout",
        type=_duration,
        default=D.heal_timeout_s,
        help="after an outage phase, how long to wait for the hints to be replayed and a repair round "
        f"between every two nodes ({D.heal_timeout_s}s)",
    )
    p.add_argument("--fill-vus", type=int, default=D.fill_vus, help=f"fill: k6 VUs ({D.fill_vus})")
    p.add_argument("--batch", type=int, default=D.batch, help=f"fill: requests in flight per VU ({D.batch})")
    p.add_argument("--reports-dir", type=Path, default=D.reports_dir)
    p.add_argument("--compare", type=Path, default=None, help="a report to compare with (the latest other)")
    _k8s(p)


SEARCHES = ["get", "put", "mixed", "range", "status"]


def _search(p: argparse.ArgumentParser, what: str | None) -> None:
    """What a saturation search loads and how it steps the rate. what None: taken (make passes every
    knob to every command) but neither used nor shown."""

    def shown(text: str) -> str:
        return text if what is not None else argparse.SUPPRESS

    p.add_argument("--search", "--scenario", choices=[*SEARCHES, "none"], default=S.scenario, help=shown(f"{what} ({S.scenario})"))
    p.add_argument("--search-steps", type=int, default=S.max_steps, help=shown(f"steps at most ({S.max_steps})"))
    p.add_argument("--search-step", type=_duration, default=S.step_duration_s, help=shown(f"each step ({S.step_duration_s}s)"))
    p.add_argument("--start-rate", type=int, default=S.start_rate, help=shown(f"the first step's rate ({S.start_rate}/s)"))
    p.add_argument("--factor", type=float, default=S.factor, help=shown(f"rate multiplier per step ({S.factor:g})"))
    p.add_argument("--max-rate", type=int, default=S.max_rate, help=shown(f"the highest rate tried ({S.max_rate}/s)"))
    p.add_argument(
        "--tolerance",
        type=float,
        default=S.tolerance,
        help=shown(f"how far the achieved rate may fall behind the requested one ({S.tolerance:g})"),
    )


def _faults(p: argparse.ArgumentParser, shown: bool) -> None:
    """The fault scenario's schedule; taken but neither used nor shown by the other commands (make
    passes every knob to every command)."""
    p.add_argument(
        "--faults",
        default=faults.DEFAULT_SCHEDULE,
        help="kind@at+for in seconds from the start of the phase's load, comma-separated; kinds "
        f"{', '.join(faults.KINDS)}; on the last node unless named (kill:n1@20+15). This default "
        f"({faults.DEFAULT_SCHEDULE}) leaves out a fault this machine cannot make (a cutoff needs "
        "root) and says why; another schedule that asks for one stops the run"
        if shown
        else argparse.SUPPRESS,
    )


def _saturation(a: argparse.Namespace, fill: bool) -> runner.Saturation:
    return runner.Saturation(
        scenario=a.search,
        start_rate=a.start_rate,
        factor=a.factor,
        max_rate=a.max_rate,
        max_steps=a.search_steps,
        step_duration_s=a.search_step,
        tolerance=a.tolerance,
        fill=fill,
    )


def _k8s(p: argparse.ArgumentParser) -> None:
    from .k8s import K8sConfig

    d = K8sConfig()
    g = p.add_argument_group(
        "in Kubernetes (--executor k8s: load generators as Jobs in the cluster KUBECONFIG points at)"
    )
    g.add_argument(
        "--executor",
        choices=["local", "k8s"],
        default="local",
        help="local: load generators and profilers as processes here (default); k8s: Jobs against a release",
    )
    g.add_argument("--namespace", default=d.namespace, help=f"the release's namespace ({d.namespace})")
    g.add_argument("--release", default=d.release, help=f"the kvlab chart's release ({d.release})")
    g.add_argument("--kubectl", default=d.kubectl, help="the kubectl command (kubectl)")
    g.add_argument("--helm", default=d.helm, help="the helm command (helm)")
    g.add_argument(
        "--k6-pods", type=int, default=d.k6_pods, help=f"k6 pods per phase, execution segments ({d.k6_pods})"
    )
    g.add_argument("--k6-image", default=d.k6_image, help=f"({d.k6_image})")
    g.add_argument("--wrk-image", default=d.wrk_image, help=f"wrk or wrk2 image ({d.wrk_image})")
    g.add_argument("--k6-resources", default=d.k6_resources, help=f"of each k6 pod ({d.k6_resources})")
    g.add_argument("--wrk-resources", default=d.wrk_resources, help=f"of the wrk pod ({d.wrk_resources})")
    g.add_argument(
        "--start-timeout",
        type=int,
        default=d.start_timeout_s,
        help=f"seconds for a phase's pods to run ({d.start_timeout_s})",
    )
    g.add_argument(
        "--profile-gap",
        type=float,
        default=d.profile_gap_s,
        help=f"seconds between profiling windows, for copying a flame graph out ({d.profile_gap_s:g})",
    )
    g.add_argument("--keep-jobs", action="store_true", help="leave each phase's Job and pods for a look")


def _executor(a: argparse.Namespace, cfg: runner.RunConfig):
    """The executor of a run: None (local, the runner's default) or the Kubernetes one."""
    if a.executor == "local":
        if not cfg.targets:
            raise SystemExit("--targets is required (or --executor k8s)")
        return None
    from .k8s import K8sConfig, K8sExecutor

    if cfg.targets:
        raise SystemExit("--executor k8s loads the release's client Service: leave out --targets")
    return K8sExecutor(
        cfg,
        K8sConfig(
            namespace=a.namespace,
            release=a.release,
            kubectl=a.kubectl,
            helm=a.helm,
            k6_pods=a.k6_pods,
            k6_image=a.k6_image,
            wrk_image=a.wrk_image,
            k6_resources=a.k6_resources,
            wrk_resources=a.wrk_resources,
            start_timeout_s=a.start_timeout,
            profile_gap_s=a.profile_gap,
            keep_jobs=a.keep_jobs,
        ),
    )


def _config(a: argparse.Namespace, phases: list[str]) -> runner.RunConfig:
    return runner.RunConfig(
        targets=a.targets,
        pids=a.pids,
        name=a.name,
        phases=phases,
        rate=a.rate,
        duration_s=a.duration,
        warmup_s=a.warmup,
        range_rate=a.range_rate,
        keys=a.keys,
        value_size=a.value_size,
        replicas=a.replicas,
        read_share=a.read_share,
        range_size=a.range_size,
        tool=a.tool,
        vus=a.vus,
        max_vus=a.max_vus,
        connections=a.connections,
        threads=a.threads,
        slo_p99_ms=a.slo_p99_ms,
        request_timeout_s=a.request_timeout,
        max_error_rate=a.max_error_rate,
        events=a.events,
        fill_vus=a.fill_vus,
        batch=a.batch,
        reports_dir=a.reports_dir,
        compare=a.compare,
        heal_timeout_s=a.heal_timeout,
        pid_files=getattr(a, "pid_files", []),
    )


def _cleanup_faults(targets: list[str]) -> int:
    """What a killed run leaves of a cut-off on these nodes' ports; nothing to do without the means to cut."""
    if isolation.unavailable():
        return 0
    failed = False
    for t in targets:
        key = str(urlparse(t).port)
        if isolation.leftover(key):
            errors = isolation.release(key, None)
            print(f"removed the cut-off of port {key}" + (f": {'; '.join(errors)}" if errors else ""), file=sys.stderr)
            failed |= bool(errors)
    return 1 if failed else 0


def _terminated(signum, frame):
    # SIGTERM ends a run as Ctrl-C does: load generators and profilers are stopped on the way out.
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _terminated)
    parser = argparse.ArgumentParser(
        prog="python -m lab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="phases at a fixed rate, profiled, then a short saturation search, then the report")
    _common(p_run)
    p_run.add_argument(
        "--phases",
        type=_list,
        default=D.phases,
        help=f"in order, from {', '.join(runner.PHASES)}; get@wrk runs one with another tool than --tool; "
        "outage runs the mixed load with the last node paused for its middle third, then waits for the "
        f"cluster to heal ({','.join(D.phases)})",
    )
    _search(p_run, "after the phases, how much can it take: a short saturation search of this load, or none")
    _faults(p_run, shown=False)
    soak.options(p_run, shown=False)

    p_sat = sub.add_parser("saturate", help="step the rate up until the SLO breaks; report the maximum")
    _common(p_sat)
    _search(p_sat, "the load stepped up")
    _faults(p_sat, shown=False)
    soak.options(p_sat, shown=False)
    p_sat.add_argument("--no-fill", action="store_true", help="the key space is filled already")

    p_faults = sub.add_parser(
        "faults",
        help="fill, warm up, then one mixed phase during which nodes are killed, paused and cut off on a schedule",
    )
    _common(p_faults)
    _search(p_faults, None)
    _faults(p_faults, shown=True)
    soak.options(p_faults, shown=False)
    p_faults.add_argument(
        "--pid-files",
        type=lambda s: [Path(x) for x in _list(s)],
        default=[],
        help="files holding the nodes' PIDs, in --pids' order: a node killed and started again gets its "
        "new PID written there (scripts/local-cluster.sh's, so `down` stops it)",
    )
    p_faults.epilog = (
        "--duration is the faulty phase's, lengthened to end "
        f"{faults.RECOVERY_S} s after the last fault when it leaves less than {faults.MIN_RECOVERY_S} s"
    )

    p_soak = sub.add_parser(
        "soak", help="fill, warm up, then the mixed load for a long time at a share of the highest rate within the SLO: drift"
    )
    _common(p_soak)
    _search(p_soak, "not used: the search of --soak-rate search loads the soak's mixed load")
    _faults(p_soak, shown=False)
    soak.options(p_soak, shown=True)

    p_clean = sub.add_parser(
        "cleanup-faults",
        help="remove the firewall table and cgroup a cut-off leaves when its run is killed",
    )
    p_clean.add_argument("--targets", type=_list, required=True, help="the nodes' base URLs, comma-separated")

    p_hot = sub.add_parser("hotpath", help="one node of its own, GET 10k/s and 20k/s and PUT 15k/s against its no-op route: CPU per request")
    p_hot.add_argument("--jar", type=Path, default=runner.tools.ROOT / "service" / "target" / "kvlab-service.jar")
    p_hot.add_argument("--java-options", default="-Xmx256m")
    p_hot.add_argument("--port", type=int, default=28080)
    p_hot.add_argument(
        "--data",
        type=Path,
        default=None,
        help="a data directory to keep and reuse (filled once); default: a temporary one",
    )
    p_hot.add_argument("--keys", type=int, default=1_000_000)
    p_hot.add_argument("--value-size", type=int, default=1024)
    p_hot.add_argument("--get-rates", type=_list, default="10000,20000", help="GET rates, each measured beside the no-op route at that rate")
    p_hot.add_argument("--put-rate", type=int, default=15_000)
    p_hot.add_argument("--duration", type=_duration, default=30)
    p_hot.add_argument("--warmup", type=_duration, default=30, help="each phase first runs this long unmeasured: the JIT compiles (30)")
    p_hot.add_argument("--connections", type=int, default=64)
    p_hot.add_argument(
        "--tool",
        choices=["k6", "wrk"],
        default="wrk",
        help="wrk (default: the lighter generator, wrk2 when installed) or k6",
    )
    p_hot.add_argument("--flamegraphs", action="store_true", help="also profile GET and PUT (cpu, alloc)")
    p_hot.add_argument("--name", default="hotpath")
    p_hot.add_argument("--reports-dir", type=Path, default=D.reports_dir)
    p_hot.add_argument("--compare", type=Path, default=None)

    from . import scale, scalefigures

    C = scale.ScaleConfig()
    p_scale = sub.add_parser(
        "scale",
        help="one node of its own with the Helm chart's memory limit, filled in steps to each size: "
        "fill rate, write amplification, GET/PUT p99 and CPU, memory, disk, block-cache hit rates",
    )

    def _sizes(text: str) -> list[int]:
        try:
            return scalefigures.parse_sizes(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from e

    p_scale.add_argument("--sizes", type=_sizes, default=C.sizes,
                         help=f"key counts to fill to in steps, each adding to the last (k, M): {scale.SCALE['SIZES']}")
    p_scale.add_argument("--rate", type=int, default=C.rate, help=f"requests/s of status, get and put ({C.rate})")
    p_scale.add_argument("--duration", type=_duration, default=C.duration_s, help=f"each measured phase ({C.duration_s} s)")
    p_scale.add_argument("--warmup", type=_duration, default=C.warmup_s, help=f"each scenario's warm-up at every size ({C.warmup_s} s)")
    p_scale.add_argument("--value-size", type=int, default=C.value_size)
    p_scale.add_argument("--memory-limit", default=C.memory_limit,
                         help="helm (the chart's resources.limits.memory), none, or a size like 2Gi")
    p_scale.add_argument("--port", type=int, default=C.port)
    p_scale.add_argument("--data", type=Path, default=None,
                         help="a data directory to keep and reuse: only the keys it lacks are filled")
    p_scale.add_argument("--keep-data", action="store_true", help="keep the data directory of this run")
    p_scale.add_argument("--jar", type=Path, default=C.jar)
    p_scale.add_argument("--name", default=C.name)
    p_scale.add_argument("--reports-dir", type=Path, default=C.reports_dir)
    p_scale.add_argument("--compare", type=Path, default=None)

    p_rep = sub.add_parser("report", help="(re)write report.md and report.html of a run directory")
    p_rep.add_argument("run_dir", type=Path)
    p_rep.add_argument("--compare", type=Path, default=None)

    p_check = sub.add_parser("check", help="check that a run's report has every part; exit 1 if not")
    p_check.add_argument("run_dir", type=Path)

    p_target = sub.add_parser("target-rate", help="print SHARE %% of the rate a one-node saturation search sustained")
    p_target.add_argument("run_dir", type=Path)
    p_target.add_argument("--share", type=float, default=40, help="percent of one node's rate (40)")

    p_cost = sub.add_parser(
        "replication-cost",
        help="the replication-cost verdict: one-node searches and cluster runs -> summary.md, summary.json",
    )
    p_cost.add_argument("run_dirs", type=Path, nargs="+")
    p_cost.add_argument("--share", type=float, default=40, help="percent of one node's rate (40)")
    p_cost.add_argument("--out", type=Path, required=True)

    a = parser.parse_args(argv)
    if a.command == "cleanup-faults":
        return _cleanup_faults(a.targets)
    if a.command == "check":
        return check.main(a.run_dir)
    if a.command == "target-rate":
        rate = replication_cost.one_node_rate(replication_cost.load(a.run_dir))
        if rate is None:
            print(f"{a.run_dir}: one node met the SLO at no step of its search", file=sys.stderr)
            return 1
        print(replication_cost.target_rate(rate, a.share))
        return 0
    if a.command == "replication-cost":
        out = replication_cost.write(replication_cost.summarize(a.run_dirs, a.share), a.out)
        print((out / "summary.md").read_text(), end="")
        print(f"summary: {runner.tools.rel(out / 'summary.md')}")
        return 0
    if a.command == "run":
        cfg = _config(a, a.phases)
        if a.search != "none" and a.search_steps > 0:
            cfg.search = _saturation(a, fill=False)
        out = runner.run_phases(cfg, _executor(a, cfg))
    elif a.command == "saturate":
        if a.search == "none":
            raise SystemExit("a saturation search needs a load to step up: --search get, put, mixed, range or status")
        cfg = _config(a, [a.search])
        out = runner.run_saturation(cfg, _saturation(a, fill=not a.no_fill), _executor(a, cfg))
    elif a.command == "faults":
        try:
            schedule = faults.parse_schedule(a.faults)
        except ValueError as e:
            p_faults.error(f"--faults: {e}")
        cfg = _config(a, ["fill", "mixed"])
        plan = runner.FaultPlan(schedule, a.faults.strip() != faults.DEFAULT_SCHEDULE, a.duration)
        out = runner.run_faults(cfg, plan, _executor(a, cfg))
    elif a.command == "soak":
        cfg = _config(a, ["fill", "mixed"])
        out = soak.run_soak(cfg, soak.plan_of(a), _saturation(a, fill=False), _executor(a, cfg))
    elif a.command == "hotpath":
        from . import hotpath

        out = hotpath.run_hotpath(
            hotpath.HotpathConfig(
                jar=a.jar,
                java_options=a.java_options,
                port=a.port,
                data=a.data,
                keys=a.keys,
                value_size=a.value_size,
                get_rates=tuple(int(r) for r in a.get_rates),
                put_rate=a.put_rate,
                duration_s=a.duration,
                warmup_s=a.warmup,
                connections=a.connections,
                tool=a.tool,
                flamegraphs=a.flamegraphs,
                name=a.name,
                reports_dir=a.reports_dir,
                compare=a.compare,
            )
        )
    elif a.command == "scale":
        out, survived = scale.run_scale(
            scale.ScaleConfig(
                sizes=a.sizes, rate=a.rate, duration_s=a.duration, warmup_s=a.warmup, value_size=a.value_size,
                memory_limit=a.memory_limit, port=a.port, data=a.data, keep_data=a.keep_data, jar=a.jar,
                name=a.name, reports_dir=a.reports_dir, compare=a.compare,
            )
        )
        print(f"report: {runner.tools.rel(out / 'report.html')} and {runner.tools.rel(out / 'report.md')}")
        if not survived:
            print("scale: the node did not survive or a fill did not store every key (see the report)", file=sys.stderr)
            return 1
        return 0
    else:
        from . import report

        report.generate(a.run_dir, a.compare)
        return 0
    print(f"report: {runner.tools.rel(out / 'report.html')} and {runner.tools.rel(out / 'report.md')}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt as e:
        print(f"interrupted ({e or 'Ctrl-C'}): load and profilers stopped; what ran so far is in run.json",
              file=sys.stderr)
        sys.exit(130)
