"""python -m lab's commands: one parser builder each, and the dispatch to the one asked for.
A scenario's command (run, saturate, faults, ...) comes from lab.scenarios.SCENARIOS."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlparse

from . import options, tools
from .scenarios import SCENARIOS, Scenario


def report_written(out: Path, gate_mode: str) -> int:
    """A run's end: where its report is, and its verdict; the command's exit code (the gate's)."""
    from .report.verdicts import gate

    print(f"report: {tools.rel(out / 'report.html')} and {tools.rel(out / 'report.md')}")
    return gate.judge(out, gate_mode)


def add_scenario(sub, scenario: Scenario) -> None:
    p = sub.add_parser(scenario.command, help=scenario.help, epilog=scenario.epilog or None)
    options.add_run_options(p)
    scenario.add_options(p)
    options.accept_every_knob(p)
    p.set_defaults(handler=lambda a: report_written(scenario.main(a), a.gate))


def add_cleanup_faults(sub) -> None:
    p = sub.add_parser("cleanup-faults", help="remove the firewall table and cgroup a cut-off leaves when its run is killed")
    p.add_argument("--targets", type=options.items, required=True, help="the nodes' base URLs, comma-separated")
    p.set_defaults(handler=lambda a: cleanup_faults(a.targets))


def cleanup_faults(targets: list[str]) -> int:
    """What a killed run leaves of a cut-off on these nodes' ports; nothing to do without the means to cut."""
    from . import isolation

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


def add_hotpath(sub) -> None:
    from .hotpath import HotpathConfig, run_hotpath

    H = HotpathConfig()
    p = sub.add_parser("hotpath", help="one node of its own, GET and PUT each against its no-op route at the same rate: CPU per request",
                       description="Defaults: loadtests/lab/hotpath.env (HOTPATH_<OPTION>), and defaults.env for "
                       "--value-size, --connections and --slo-p99-ms.")
    p.add_argument("--jar", type=Path, default=H.jar)
    p.add_argument("--java-options", default=H.java_options, help=f"({H.java_options})")
    p.add_argument("--port", type=int, default=H.port, help=f"({H.port})")
    p.add_argument("--data", type=Path, default=None, help="a data directory to keep and reuse (filled once); default: a temporary one")
    p.add_argument("--keys", type=int, default=H.keys, help=f"({H.keys})")
    p.add_argument("--value-size", type=int, default=H.value_size, help=f"({H.value_size})")
    p.add_argument("--get-rates", type=lambda s: tuple(int(r) for r in options.items(s)), default=H.get_rates,
                   help=f"GET rates, each measured beside the no-op route at that rate ({','.join(map(str, H.get_rates))})")
    p.add_argument("--put-rate", type=int, default=H.put_rate, help=f"({H.put_rate})")
    p.add_argument("--duration", type=options.duration, default=H.duration_s, help=f"each measured phase ({H.duration_s}s)")
    p.add_argument("--warmup", type=options.duration, default=H.warmup_s,
                   help=f"each phase first runs this long unmeasured: the JIT compiles ({H.warmup_s}s)")
    p.add_argument("--connections", type=int, default=H.connections, help=f"({H.connections})")
    p.add_argument("--tool", choices=["k6", "wrk"], default=H.tool,
                   help=f"wrk (the lighter generator, wrk2 when installed) or k6 ({H.tool})")
    p.add_argument("--batch", type=int, default=H.batch, help=f"the fill's k6 requests in flight per VU ({H.batch})")
    p.add_argument("--max-ratio", type=float, default=H.max_ratio,
                   help=f"the target: server CPU per request at most this times the no-op route's ({H.max_ratio:g})")
    p.add_argument("--slo-p99-ms", type=float, default=H.slo_p99_ms, help=f"({H.slo_p99_ms:g} ms)")
    p.add_argument("--flamegraphs", action="store_true", help="also profile GET and PUT (cpu, alloc)")
    p.add_argument("--name", default=H.name)
    p.add_argument("--reports-dir", type=Path, default=H.reports_dir)
    p.add_argument("--compare", type=Path, default=None)
    options.add_gate_option(p)

    def run(a: argparse.Namespace) -> int:
        given = {k: v for k, v in vars(a).items() if k in HotpathConfig.__dataclass_fields__}
        given |= {"duration_s": a.duration, "warmup_s": a.warmup}
        return report_written(run_hotpath(HotpathConfig(**given)), a.gate)

    p.set_defaults(handler=run)


def add_scale(sub) -> None:
    from . import scale, scalefigures

    C = scale.ScaleConfig()
    p = sub.add_parser(
        "scale",
        help="one node of its own with the Helm chart's memory limit, filled in steps to each size: "
        "fill rate, write amplification, GET/PUT p99 and CPU, memory, disk, block-cache hit rates",
    )

    def sizes(text: str) -> list[int]:
        try:
            return scalefigures.parse_sizes(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from e

    p.add_argument("--sizes", type=sizes, default=C.sizes,
                   help=f"key counts to fill to in steps, each adding to the last (k, M): {scale.SCALE['SIZES']}")
    p.add_argument("--rate", type=int, default=C.rate, help=f"requests/s of status, get and put ({C.rate})")
    p.add_argument("--duration", type=options.duration, default=C.duration_s, help=f"each measured phase ({C.duration_s} s)")
    p.add_argument("--warmup", type=options.duration, default=C.warmup_s, help=f"each scenario's warm-up at every size ({C.warmup_s} s)")
    p.add_argument("--value-size", type=int, default=C.value_size)
    p.add_argument("--memory-limit", default=C.memory_limit, help="helm (the chart's resources.limits.memory), none, or a size like 2Gi")
    p.add_argument("--port", type=int, default=C.port)
    p.add_argument("--data", type=Path, default=None, help="a data directory to keep and reuse: only the keys it lacks are filled")
    p.add_argument("--keep-data", action="store_true", help="keep the data directory of this run")
    p.add_argument("--jar", type=Path, default=C.jar)
    p.add_argument("--name", default=C.name)
    p.add_argument("--reports-dir", type=Path, default=C.reports_dir)
    p.add_argument("--compare", type=Path, default=None)
    options.add_gate_option(p)

    def run(a: argparse.Namespace) -> int:
        out, _ = scale.run_scale(
            scale.ScaleConfig(
                sizes=a.sizes, rate=a.rate, duration_s=a.duration, warmup_s=a.warmup, value_size=a.value_size,
                memory_limit=a.memory_limit, port=a.port, data=a.data, keep_data=a.keep_data, jar=a.jar,
                name=a.name, reports_dir=a.reports_dir, compare=a.compare,
            )
        )
        return report_written(out, a.gate)

    p.set_defaults(handler=run)


def add_large_reads(sub) -> None:
    from .largereads import LARGE, LargeReadsConfig, run_large_reads

    C = LargeReadsConfig()
    p = sub.add_parser(
        "large-reads",
        help="three nodes of their own with small heaps under a burst of large reads: capacity, goodput, "
        "200/503/504, a small key's p99, nodes alive",
        description="Defaults: loadtests/lab/largereads.env (LARGE_<OPTION>).",
    )
    p.add_argument("--jar", type=Path, default=C.jar)
    p.add_argument("--nodes", type=int, default=C.nodes, help=f"({C.nodes})")
    p.add_argument("--java-options", default=C.java_options, help=f"every node's; must set -Xmx ({C.java_options})")
    p.add_argument("--port", type=int, default=C.port, help=f"the first node's client port; management ports + 1000 ({C.port})")
    p.add_argument("--values", type=int, default=C.values, help=f"({C.values})")
    p.add_argument("--value-size", type=int, default=C.value_size, help=f"bytes ({C.value_size})")
    p.add_argument("--replicas", default=C.replicas, help=f"ack/from of every write and read ({C.replicas})")
    p.add_argument("--clients", type=int, default=C.clients, help=f"large readers, back to back ({C.clients})")
    p.add_argument("--duration", type=options.duration, default=C.duration_s, help=f"the burst ({LARGE['LARGE_DURATION']})")
    p.add_argument("--warmup", type=options.duration, default=C.warmup_s, help=f"the burst first, not measured ({LARGE['LARGE_WARMUP']})")
    p.add_argument("--small-rate", type=int, default=C.small_rate, help=f"small-key reads per second during the burst ({C.small_rate})")
    p.add_argument("--request-timeout", type=float, default=C.request_timeout_s, help=f"a client's, seconds ({C.request_timeout_s:g})")
    p.add_argument("--replica-share", type=float, default=C.replica_share, help=f"the nodes' kvlab.memory.replica-share ({C.replica_share:g})")
    p.add_argument("--goodput-share", type=float, default=C.goodput_share, help=f"target: goodput ≥ this share of the capacity ({C.goodput_share:g})")
    p.add_argument("--max-timed-out", type=float, default=C.max_timed_out_share, help=f"target: 504 under this share ({C.max_timed_out_share:g})")
    p.add_argument("--small-p99-ms", type=float, default=C.small_p99_ms, help=f"target: the small key's p99 ({C.small_p99_ms:g} ms)")
    p.add_argument("--flamegraphs", action="store_true", help="profile every node (cpu) over the burst's middle half")
    p.add_argument("--name", default=C.name)
    p.add_argument("--reports-dir", type=Path, default=C.reports_dir)
    p.add_argument("--compare", type=Path, default=None)
    options.add_gate_option(p)

    def run(a: argparse.Namespace) -> int:
        cfg = LargeReadsConfig(
            jar=a.jar, nodes=a.nodes, java_options=a.java_options, port=a.port, values=a.values, value_size=a.value_size,
            replicas=a.replicas, clients=a.clients, duration_s=a.duration, warmup_s=a.warmup, small_rate=a.small_rate,
            request_timeout_s=a.request_timeout, replica_share=a.replica_share, goodput_share=a.goodput_share,
            max_timed_out_share=a.max_timed_out, small_p99_ms=a.small_p99_ms, flamegraphs=a.flamegraphs,
            name=a.name, reports_dir=a.reports_dir, compare=a.compare,
        )
        return report_written(run_large_reads(cfg), a.gate)

    p.set_defaults(handler=run)


def add_report(sub) -> None:
    p = sub.add_parser("report", help="(re)write report.md and report.html of a run directory")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--compare", type=Path, default=None)
    options.add_gate_option(p, "none")

    def run(a: argparse.Namespace) -> int:
        from . import report
        from .report.verdicts import gate

        report.generate(a.run_dir, a.compare)
        return gate.judge(a.run_dir, a.gate)

    p.set_defaults(handler=run)


def add_check(sub) -> None:
    from . import check

    p = sub.add_parser("check", help="check that a run's report has every part and its conclusion agrees with its data")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--strict", action="store_true",
                   help="fail on a warning on the conclusion or its draft too (a number not in the data, a claim it contradicts)")
    p.set_defaults(handler=lambda a: check.main(a.run_dir, a.strict))


def add_target_rate(sub) -> None:
    from . import replication_cost

    p = sub.add_parser("target-rate", help="print SHARE %% of the rate a one-node saturation search sustained")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--share", type=float, default=replication_cost.SHARE, help=f"percent of one node's rate ({replication_cost.SHARE:g})")

    def run(a: argparse.Namespace) -> int:
        rate = replication_cost.one_node_rate(replication_cost.load(a.run_dir))
        if rate is None:
            print(f"{a.run_dir}: one node met the SLO at no step of its search", file=sys.stderr)
            return 1
        print(replication_cost.target_rate(rate, a.share))
        return 0

    p.set_defaults(handler=run)


def add_replication_cost(sub) -> None:
    from . import replication_cost

    p = sub.add_parser(
        "replication-cost",
        help="the replication-cost verdict: one-node searches and cluster runs -> summary.md, summary.json",
    )
    p.add_argument("run_dirs", type=Path, nargs="+")
    p.add_argument("--share", type=float, default=replication_cost.SHARE, help=f"percent of one node's rate ({replication_cost.SHARE:g})")
    p.add_argument("--out", type=Path, required=True)

    def run(a: argparse.Namespace) -> int:
        out = replication_cost.write(replication_cost.summarize(a.run_dirs, a.share), a.out)
        print((out / "summary.md").read_text(), end="")
        print(f"summary: {tools.rel(out / 'summary.md')}")
        return 0

    p.set_defaults(handler=run)


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lab", description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for scenario in SCENARIOS.values():
        add_scenario(sub, scenario)
    for add in (add_cleanup_faults, add_hotpath, add_scale, add_large_reads, add_report, add_check, add_target_rate, add_replication_cost):
        add(sub)
    return p


def dispatch(a: argparse.Namespace) -> int:
    """Runs the command parsed; its exit code."""
    return a.handler(a)
