"""The options every run command shares (python -m lab run, saturate, faults, ...): the knobs of
defaults.env, the Kubernetes executor's, and from them the run's settings and its executor."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import defaults
from .executor import Executor
from .settings import RunConfig

# Every option's default: defaults.env, through the run's settings.
D = RunConfig(targets=[], pids=[])


def duration(text: str) -> int:
    """Seconds from 30, 30s, 2m, 1m30s."""
    try:
        return defaults.duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def items(text: str) -> list[str]:
    return defaults.split(text)


def events(text: str) -> list[str]:
    if text.strip().lower() in ("", "none", "off"):
        return []
    return items(text)


def add_gate_option(p: argparse.ArgumentParser, default: str | None = None) -> None:
    """--gate: what fails the command once its report is written (default: defaults.env's GATE)."""
    from .report.verdicts import gate

    default = default or defaults.text("GATE")
    p.add_argument(
        "--gate",
        choices=gate.MODES,
        default=default,
        help="once the report is written, exit 99 when a verdict row fails that gates: all (data or "
        "performance: the SLO, a benchmark's target), data (acknowledged writes lost, a "
        f"cluster that did not heal), none (report only) ({default})",
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The nodes, the load and its limits, the profiler: what every run command takes."""
    p.add_argument("--targets", type=items, default=[],
                   help="base URLs, comma-separated (local; k8s: the release's client Service)")
    p.add_argument("--pids", type=lambda s: [int(x) for x in items(s)], default=[],
                   help="PIDs of the node JVMs to profile and measure, comma-separated")
    p.add_argument("--name", default="local", help="the run's name, after its timestamp")
    p.add_argument("--rate", type=int, default=D.rate, help=f"requests/s of put, get, mixed ({D.rate})")
    p.add_argument("--duration", type=duration, default=D.duration_s,
                   help=f"each phase (and search step): 30, 30s, 2m ({D.duration_s}s)")
    p.add_argument("--warmup", type=duration, default=D.warmup_s,
                   help="before the first phase of each scenario (and a saturation search) the same load, unmeasured; "
                   f"the fill warms put, put and get warm mixed; 0 for none ({D.warmup_s}s)")
    p.add_argument("--range-rate", type=int, default=D.range_rate, help=f"range reads/s ({D.range_rate})")
    p.add_argument("--keys", type=int, default=D.keys, help=f"key space ({D.keys})")
    p.add_argument("--key-prefix", default=D.key_prefix, help=f"keys are this and the key's index in 10 digits ({D.key_prefix})")
    p.add_argument("--value-size", type=int, default=D.value_size, help=f"bytes per value ({D.value_size})")
    p.add_argument("--replicas", default=D.replicas, help="ack/from on every request (the server's default)")
    p.add_argument("--read-share", type=float, default=D.read_share, help=f"GETs in the mixed phase ({D.read_share:g})")
    p.add_argument("--range-size", type=int, default=D.range_size, help=f"keys per range read ({D.range_size})")
    p.add_argument("--multiget-rate", type=int, default=D.multiget_rate, help=f"multi-gets/s ({D.multiget_rate})")
    p.add_argument("--multiget-size", type=int, default=D.multiget_size, help=f"keys per multi-get ({D.multiget_size})")
    p.add_argument("--ttl", type=int, default=D.ttl_s,
                   help=f"the ttl phase: seconds to live of its PUTs, over a key space of its own ({D.ttl_s})")
    p.add_argument("--tool", choices=["k6", "wrk"], default=D.tool,
                   help=f"load generator of the timed phases ({D.tool}); the fill and mixed always use k6")
    p.add_argument("--vus", type=int, default=D.vus, help=f"k6 VUs (connections per target) at start ({D.vus})")
    p.add_argument("--max-vus", type=int, default=D.max_vus, help=f"k6 VUs at most ({D.max_vus})")
    p.add_argument("--connections", type=int, default=D.connections, help=f"wrk connections in all ({D.connections})")
    p.add_argument("--threads", type=int, default=D.threads,
                   help=f"wrk threads in all, split across the targets like the connections, at least one each ({D.threads})")
    p.add_argument("--slo-p99-ms", type=float, default=D.slo_p99_ms, help=f"SLO on p99 latency ({D.slo_p99_ms:g} ms)")
    p.add_argument("--request-timeout", type=duration, default=D.request_timeout_s,
                   help=f"a request not answered by then counts as failed ({D.request_timeout_s:g}s)")
    p.add_argument("--max-error-rate", type=float, default=D.max_error_rate,
                   help=f"share of failed requests allowed ({D.max_error_rate:g})")
    p.add_argument("--events", type=events, default=D.events,
                   help=f"profiler events per phase, comma-separated, or none ({','.join(D.events) or 'none'})")
    p.add_argument("--heal-timeout", type=duration, default=D.heal_timeout_s,
                   help="after an outage phase, how long to wait for the hints to be replayed and a repair round "
                   f"between every two nodes ({D.heal_timeout_s}s)")
    p.add_argument("--ledger-rate", type=int, default=D.ledger_rate,
                   help="phases that break something (faults, outage): operations a second of the ledger, whose every "
                   f"acknowledged write is read back at its replicas once the cluster healed; 0 for none ({D.ledger_rate})")
    p.add_argument("--ledger-keys", type=int, default=D.ledger_keys, help=f"keys of the ledger's own ({D.ledger_keys})")
    p.add_argument("--fill-vus", type=int, default=D.fill_vus, help=f"fill: k6 VUs ({D.fill_vus})")
    p.add_argument("--batch", type=int, default=D.batch, help=f"fill: requests in flight per VU ({D.batch})")
    p.add_argument("--fill-max-duration", type=duration, default=D.fill_timeout_s,
                   help=f"fill: the longest it may run ({D.fill_timeout_s}s)")
    p.add_argument("--fill-request-timeout", type=duration, default=D.fill_request_timeout_s,
                   help=f"fill: a PUT not answered by then fails ({D.fill_request_timeout_s:g}s)")
    p.add_argument("--reports-dir", type=Path, default=D.reports_dir)
    p.add_argument("--compare", type=Path, default=None, help="a report to compare with (the latest other)")
    add_gate_option(p)
    add_k8s_options(p)


def accept_every_knob(p: argparse.ArgumentParser) -> None:
    """Every knob of defaults.env this command has no option for, taken but neither used nor shown:
    make passes every knob to every run command (mk/lab.mk's LAB_OPTIONS). Called last."""
    for name, value in defaults.VALUES.items():
        if name.startswith("K8S_"):
            continue
        try:
            p.add_argument(f"--{name.lower().replace('_', '-')}", default=value, help=argparse.SUPPRESS)
        except argparse.ArgumentError:
            pass  # the command's own option


def add_k8s_options(p: argparse.ArgumentParser) -> None:
    from .k8s import K8sConfig

    d = K8sConfig()
    g = p.add_argument_group("in Kubernetes (--executor k8s: load generators as Jobs in the cluster KUBECONFIG points at)")
    g.add_argument("--executor", choices=["local", "k8s"], default="local",
                   help="local: load generators and profilers as processes here (default); k8s: Jobs against a release")
    g.add_argument("--namespace", default=d.namespace, help=f"the release's namespace ({d.namespace})")
    g.add_argument("--release", default=d.release, help=f"the kvlab chart's release ({d.release})")
    g.add_argument("--kubectl", default=d.kubectl, help="the kubectl command (kubectl)")
    g.add_argument("--helm", default=d.helm, help="the helm command (helm)")
    g.add_argument("--k6-pods", type=int, default=d.k6_pods, help=f"k6 pods per phase, execution segments ({d.k6_pods})")
    g.add_argument("--k6-image", default=d.k6_image, help=f"({d.k6_image})")
    g.add_argument("--wrk-image", default=d.wrk_image, help=f"wrk or wrk2 image ({d.wrk_image})")
    g.add_argument("--k6-resources", default=d.k6_resources, help=f"of each k6 pod ({d.k6_resources})")
    g.add_argument("--wrk-resources", default=d.wrk_resources, help=f"of the wrk pod ({d.wrk_resources})")
    g.add_argument("--start-timeout", type=int, default=d.start_timeout_s,
                   help=f"seconds for a phase's pods to run ({d.start_timeout_s})")
    g.add_argument("--profile-gap", type=float, default=d.profile_gap_s,
                   help=f"seconds between profiling windows, for copying a flame graph out ({d.profile_gap_s:g})")
    g.add_argument("--keep-jobs", action="store_true", help="leave each phase's Job and pods for a look")


def run_config(a: argparse.Namespace, phases: list[str]) -> RunConfig:
    return RunConfig(
        targets=a.targets,
        pids=a.pids,
        name=a.name,
        phases=phases,
        rate=a.rate,
        duration_s=a.duration,
        warmup_s=a.warmup,
        range_rate=a.range_rate,
        keys=a.keys,
        key_prefix=a.key_prefix,
        value_size=a.value_size,
        replicas=a.replicas,
        read_share=a.read_share,
        range_size=a.range_size,
        multiget_rate=a.multiget_rate,
        multiget_size=a.multiget_size,
        ttl_s=a.ttl,
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
        fill_timeout_s=a.fill_max_duration,
        fill_request_timeout_s=a.fill_request_timeout,
        reports_dir=a.reports_dir,
        compare=a.compare,
        heal_timeout_s=a.heal_timeout,
        ledger_rate=a.ledger_rate,
        ledger_keys=a.ledger_keys,
        pid_files=getattr(a, "pid_files", []),
    )


def executor_of(a: argparse.Namespace, cfg: RunConfig) -> Executor | None:
    """The executor of a run: None (local, the runs' default) or the Kubernetes one."""
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
