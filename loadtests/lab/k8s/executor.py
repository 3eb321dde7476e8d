"""The lab's Kubernetes executor (make lab LAB_TARGET=k8s): the phases of a run as Jobs inside the
cluster KUBECONFIG points at, against a kvlab release's client Service, the release's pods profiled
through their async-profiler sidecar; the same runner, results and report as on one machine.

- Load: k6 as an Indexed Job of k6_pods pods, pod i running the i-th k6 execution segment of
  0,1/n,...,1, so that together they send exactly the requested rate (and the fill writes every
  key once); wrk as a Job of one pod (wrk2 when its image was built, else Debian's wrk). The k6
  and wrk scripts and the pods' wrapper (k8s/loadgen/job.sh) reach the pods in a ConfigMap: the
  images hold only the tools (lab.k8s.manifests).
- Start: the pods of a phase wait for a start signal, which the runner writes into all of them once
  they all run (kubectl exec); they then sleep to the same instant.
- Results: the pods' logs (the tool's output, then KVLAB-JOB lines: start and end times, exit code,
  CPU, k6's summary JSON), saved in the phase's directory; the Job is deleted once collected.
  The k6 pods' percentiles are merged from their percentile spectra (lab.k8s.outputs).
- Profiling: k8s/profile-pod.sh for each pod and window, the script `make profile` runs.
- CPU: each kvlab container's cgroup CPU time before and after the phase (kubectl exec), each load
  generator's CPU from bash's `times` in its pod.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from .. import healing, load, nodeseries, procstat, profiling, promtext, tools
from ..faults import ScheduledFault
from ..load import LoadSpec, log
from ..loadseries import K6_CSV_ENV, K6_SAMPLES_FILE, Samples, k6_output_args
from ..runner import Prepared, RunConfig
from . import facts
from .config import K8sConfig
from .kubectl import (
    Kubectl,
    completion_index,
    container_running,
    json_of,
    parallel,
    ready,
    restarts,
    why_waiting,
)
from .management import Management
from .manifests import (
    RUN_LABEL,
    SCRIPTS_MOUNT,
    WORK_MOUNT,
    job_manifest,
    job_name,
    labels,
    parse_resources,
    scripts_configmap,
    segment_sequence,
)
from .outputs import PodOutput, container_cpu_seconds, merge_k6, parse_job_log, pods_table
from .podfaults import CUTOFF_REFUSED, SIDECAR, PodKill, PodPause, liveness_allows_s

PROFILE_POD_SH = tools.ROOT / "k8s" / "profile-pod.sh"


@dataclass
class PodProfiling(profiling.Profiling):
    """Profiling windows on pods: k8s/profile-pod.sh POD EVENT SECONDS DIR for each pod, the script
    `make profile` runs (kubectl exec kvlab-profile in the sidecar, kubectl cp of the HTML)."""

    namespace: str = ""
    kubectl: str = "kubectl"

    def _folder(self, path: Path) -> Path:
        return path.parent / f".{path.stem}"

    def command(self, node: profiling.Node, event: str, seconds: float, path: Path) -> tuple[list[str], dict]:
        argv = [
            "env",
            f"K8S_NAMESPACE={self.namespace}",
            f"KUBECTL={self.kubectl}",
            str(PROFILE_POD_SH),
            node.name,
            event,
            f"{seconds:.1f}",
            str(self._folder(path)),
        ]
        return argv, dict(os.environ)

    def stop(self) -> None:
        """As for local JVMs, and then SIGTERM to profile.sh in the sidecars: killing kubectl exec
        leaves the remote command running, and its EXIT trap is what stops async-profiler."""
        super().stop()
        stop = (
            'for p in /proc/[0-9]*; do [ "${p#/proc/}" = "$$" ] && continue; '
            'case "$(tr "\\0" " " <"$p/cmdline" 2>/dev/null)" in '
            '*/opt/kvlab/profile.sh*) kill -TERM "${p#/proc/}" 2>/dev/null;; esac; done; true'
        )
        kubectl = Kubectl(self.kubectl, self.namespace)
        parallel(
            lambda pod: kubectl.run("exec", pod, "-c", "profiler", "--", "sh", "-c", stop, timeout=30, check=False),
            [n.name for n in self.nodes],
        )

    def collected(self, node: profiling.Node, path: Path, returncode: int) -> bool:
        folder = self._folder(path)
        graphs = sorted(folder.glob("*.html")) if folder.is_dir() else []
        if returncode == 0 and graphs:
            graphs[-1].replace(path)
        shutil.rmtree(folder, ignore_errors=True)
        return returncode == 0 and path.exists()


@dataclass
class _Phase:
    job: str
    tool: str  # k6 | wrk | wrk2
    image: str
    pods: int
    container: str
    manifest_path: Path
    argv: list[str]
    env: dict[str, str]
    deadline_s: int
    start_ns: int = 0
    cpu_before: dict = field(default_factory=dict)
    machine_before: procstat.CpuSample | None = None
    started_at: str = ""


class K8sExecutor:
    """The phases as Jobs in a namespace of the cluster, against a release of the chart."""

    name = "k8s"

    def __init__(self, cfg: RunConfig, k: K8sConfig):
        self.cfg = cfg
        self.k = k
        self.kubectl = Kubectl(k.kubectl, k.namespace)
        self.run_id = secrets.token_hex(3)
        self.k6_resources = parse_resources(k.k6_resources)
        self.wrk_resources = parse_resources(k.wrk_resources)
        if k.k6_pods < 1:
            raise SystemExit("k6_pods must be at least 1")
        self.wrk2 = "wrk2" in k.wrk_image.rsplit("/", 1)[-1].split(":")[0]
        self.service = self._service()
        port = next((p["port"] for p in self.service["spec"]["ports"] if p.get("name") == "http"), None)
        port = port or self.service["spec"]["ports"][0]["port"]
        self.selector = ",".join(f"{a}={b}" for a, b in sorted(self.service["spec"]["selector"].items()))
        self.target = f"http://{self.service['metadata']['name']}.{k.namespace}.svc.{self._domain()}:{port}"
        cfg.targets = [self.target]
        cfg.pids = []
        self.pods = self._kvlab_pods()
        self.nodes = [profiling.Node(p["metadata"]["name"], 0, self.target) for p in self.pods]
        self.restarts = {p["metadata"]["name"]: restarts(p) for p in self.pods}
        self.configmap = ""
        self.items: list[dict] = []
        self.local = self._cluster_is_local()
        self.management = Management(self.kubectl, [n.name for n in self.nodes])
        self.faults: list[ScheduledFault] = []
        self._phase_faults = 0  # faults made before the current phase

    # ---- the release

    def _service(self) -> dict:
        try:
            found = self.kubectl.json(
                "get",
                "services",
                "-l",
                f"app.kubernetes.io/instance={self.k.release},app.kubernetes.io/component=client",
            )["items"]
        except RuntimeError as e:
            raise SystemExit(f"no Kubernetes answers ({e}); is KUBECONFIG set?") from e
        if not found:
            raise SystemExit(
                f"no client Service of release {self.k.release} in namespace {self.k.namespace}: install the chart "
                f"first (make k8s-up K8S_NAMESPACE={self.k.namespace} RELEASE={self.k.release})"
            )
        return found[0]

    def _domain(self) -> str:
        values = self._helm_values()
        return (values.get("cluster") or {}).get("domain") or "cluster.local"

    def _helm_values(self) -> dict:
        argv = [*shlex.split(self.k.helm), "get", "values", self.k.release, "--namespace", self.k.namespace, "--all"]
        return json_of([*argv, "-o", "json"], {}) or {}

    def _kvlab_pods(self) -> list[dict]:
        pods = self.kubectl.json("get", "pods", "-l", self.selector)["items"]
        return sorted(pods, key=lambda p: p["metadata"]["name"])

    def _cluster_is_local(self) -> bool:
        try:
            server = subprocess.run(
                [
                    *shlex.split(self.k.kubectl),
                    "config",
                    "view",
                    "--minify",
                    "-o",
                    "jsonpath={.clusters[0].cluster.server}",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return False
        host = urlparse(server).hostname
        return bool(host) and facts.is_local_address(host)

    def check(self) -> None:
        if not self.pods:
            raise SystemExit(f"release {self.k.release} has no pods in namespace {self.k.namespace}")
        for p in self.pods:
            name = p["metadata"]["name"]
            if not ready(p):
                raise SystemExit(
                    f"pod {name} is not ready: wait for the release (kubectl -n {self.k.namespace} get pods)"
                )
            containers = [c["name"] for c in p["spec"]["containers"]]
            if self.cfg.events and "profiler" not in containers:
                raise SystemExit(
                    f"pod {name} has no profiler sidecar (containers: {', '.join(containers)}): install the chart with "
                    "--set profiler.enabled=true (make k8s-up does), or run with EVENTS=none"
                )
        log(
            f"k8s: release {self.k.release} in namespace {self.k.namespace}, pods "
            f"{', '.join(n.name for n in self.nodes)}; load at {self.target}"
            + ("; the cluster runs on this machine" if self.local else "")
        )

    def config(self) -> dict:
        return {"k8s": asdict(self.k) | {"run_id": self.run_id, "target": self.target}}

    # ---- facts for the report

    def env(self) -> dict:
        return facts.environment(
            self.k, self.kubectl, self.pods, self.cfg.tool, self.wrk2, self.local, self.run_id, self.target
        )

    # ---- profiling and CPU

    def profiling_gap_s(self) -> float:
        return self.k.profile_gap_s

    def profiling(self, windows: list[profiling.Window], out: Path, t0: float) -> profiling.Profiling:
        return PodProfiling(self.nodes, windows, out, t0, namespace=self.k.namespace, kubectl=self.k.kubectl)

    def _cpu(self) -> dict[str, float]:
        script = (
            "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2>/dev/null"
            " || cat /sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"
        )
        names = [n.name for n in self.nodes]
        found = parallel(
            lambda n: self.kubectl.run("exec", n, "-c", "kvlab", "--", "sh", "-c", script, timeout=30), names
        )
        out = {}
        for name, text in zip(names, found):
            try:
                out[name] = container_cpu_seconds(text) if isinstance(text, str) else math.nan
            except ValueError:
                out[name] = math.nan
        return out

    def node_metrics(
        self, timeout: float = nodeseries.SCRAPE_TIMEOUT_S, parse: Callable[[str], dict[str, float]] = promtext.parse
    ) -> dict[str, dict[str, float] | str]:
        """Each pod's Prometheus page now (parsed with lab.promtext.parse, as the node sampler wants
        it; see runner.LocalExecutor.node_metrics), by pod name,
        or why a pod gave none; within about timeout seconds, whatever the pods do, and it never
        raises: a sampler may call it every second during a phase."""
        try:
            pages = self.management.get_all("/actuator/prometheus", timeout)
            return {pod: parse(page) if isinstance(page, str) else str(page) for pod, page in pages.items()}
        except Exception as e:  # noqa: BLE001 - a sample is never a reason to stop a phase
            return {n.name: f"not read: {e}" for n in self.nodes}

    def heal_sample(self) -> dict:
        """Each pod's healing counters (lab.healing) from its management port; a pod that cannot be
        read gets why instead."""
        return self.node_metrics(timeout=5.0, parse=healing.parse)

    def await_healed(self, timeout_s: float) -> dict:
        """After a fault: every hint replayed, then a repair round between every two pods (lab.healing),
        each pod asked through its management port."""

        def status(pod: str) -> dict | None:
            try:
                return json.loads(self.management.request(pod, "/actuator/kvlab"))
            except (RuntimeError, ValueError):
                return None

        def repair(pod: str) -> str:
            try:
                self.management.request(pod, "/actuator/kvlab/repair", method="POST")
                return ""
            except RuntimeError as e:
                return str(e)

        return healing.await_healed(
            {n.name: n.name for n in self.nodes},
            timeout_s,
            log,
            sampler=lambda _: self.heal_sample(),
            repairer=repair,
            reader=status,
        )

    def fault(self, kind: str, index: int, at_s: float, for_s: float) -> ScheduledFault:
        """A fault of pod index (-1: the last), at_s into the phase's load, for for_s; not started.
        Refused before the run when the cluster or the release cannot have it."""
        if len(self.pods) < 2:
            raise SystemExit("faults need two pods or more")
        if not -len(self.pods) <= index < len(self.pods):
            raise SystemExit(f"no pod {index} for a {kind} fault: the release has {len(self.pods)}")
        pod = self.pods[index]
        name = pod["metadata"]["name"]
        sidecar = SIDECAR in [c["name"] for c in pod["spec"]["containers"]]
        if kind == "pause":
            if not sidecar:
                raise SystemExit(
                    f"pod {name} has no profiler sidecar, which pauses the JVM: install the chart with "
                    "--set profiler.enabled=true (make k8s-up does)"
                )
            allowed = liveness_allows_s(pod)
            if for_s >= allowed:
                log(
                    f"warning: a pause of {for_s:.0f} s is longer than pod {name}'s liveness probe allows "
                    f"({allowed:.0f} s): the kubelet may restart its container"
                )
            fault: ScheduledFault = PodPause(name, at_s, for_s, kubectl=self.kubectl)
        elif kind == "kill":
            fault = PodKill(name, at_s, for_s, kubectl=self.kubectl, sidecar=sidecar)
        elif kind == "cutoff":
            raise SystemExit(CUTOFF_REFUSED)
        else:
            raise SystemExit(f"the {self.name} executor cannot make a {kind} fault")
        self.faults.append(fault)
        return fault

    # ---- phases

    def _ensure_configmap(self) -> None:
        if self.configmap:
            return
        name = f"{self.k.release[:40]}-lab-{self.run_id}-scripts"
        manifest, self.items = scripts_configmap(name, self.k.namespace, labels(self.k.release, self.run_id, "scripts"))
        self.kubectl.run("apply", "-f", "-", stdin=json.dumps(manifest))
        self.configmap = name

    def prepare(self, spec: LoadSpec, out: Path, label: str) -> Prepared:
        self._ensure_configmap()
        index = int(out.name.split("-", 1)[0])
        name = job_name(self.k.release, self.run_id, index, label)
        grace = 60
        if spec.tool == "k6":
            pods = self.k.k6_pods
            samples = f"{WORK_MOUNT}/{K6_SAMPLES_FILE}"
            env = load.k6_env(spec) | K6_CSV_ENV | {
                "SUMMARY_JSON": f"{WORK_MOUNT}/summary.json",
                "K6_NO_USAGE_REPORT": "true",
                "K6_SAMPLES": samples,  # job.sh sends them back in the pod's log
            }
            if pods > 1:
                env["K6_SEGMENT_SEQUENCE"] = ",".join(segment_sequence(pods))
            argv = [
                "bash",
                f"{SCRIPTS_MOUNT}/job.sh",
                "k6",
                "run",
                "--no-usage-report",
                "--no-color",
                *k6_output_args(samples),
                f"{SCRIPTS_MOUNT}/k6/{spec.scenario}.js",
            ]
            tool, image, resources = "k6", self.k.k6_image, self.k6_resources
        else:
            pods = 1
            options, env = load.wrk_args(spec, self.wrk2, 1)
            tool = "wrk2" if self.wrk2 else "wrk"
            argv = [
                "bash",
                f"{SCRIPTS_MOUNT}/job.sh",
                tool,
                *options,
                "-s",
                f"{SCRIPTS_MOUNT}/wrk2/{spec.scenario}.lua",
                self.target,
            ]
            image, resources = self.k.wrk_image, self.wrk_resources
        env["START_TIMEOUT"] = str(self.k.start_timeout_s + 60)
        deadline = self.k.start_timeout_s + 60 + spec.duration_s + grace
        manifest = job_manifest(
            name,
            self.k.namespace,
            labels(self.k.release, self.run_id, "loadgen", image.rsplit(":", 1)[-1]),
            "loadgen",
            image,
            argv,
            env,
            pods,
            deadline,
            resources,
            self.configmap,
            self.items,
            self.k.ttl_s,
        )
        manifest_path = out / "job.json"
        manifest_path.write_text(json.dumps(manifest, indent=1))
        ph = _Phase(name, tool, image, pods, "loadgen", manifest_path, argv, env, deadline)
        log(f"{label}: Job {name}: {pods} pod{'s' if pods > 1 else ''} of {image}")
        self.kubectl.run("apply", "-f", str(manifest_path))
        try:
            running = self._wait_running(ph)
            ph.cpu_before = self._cpu()
            ph.machine_before = procstat.sample([])
            # The signal goes to all pods at once; they start together a moment later.
            lead_ns = int((1.0 + 0.25 * pods) * 1e9)
            ph.start_ns = time.time_ns() + lead_ns
            part, final = f"{WORK_MOUNT}/start-at.part", f"{WORK_MOUNT}/start-at"
            signal = f"printf %s {ph.start_ns} > {part} && mv {part} {final}"
            sent = parallel(
                lambda pod: self.kubectl.run("exec", pod, "-c", "loadgen", "--", "sh", "-c", signal, timeout=30),
                running,
            )
            failed = [f"{pod}: {e}" for pod, e in zip(running, sent) if isinstance(e, Exception)]
            if failed:
                raise RuntimeError(f"could not start the load: {'; '.join(failed)}")
            late = time.time_ns() - ph.start_ns
            if late > 0:
                log(f"{label}: the start signal reached the pods {late / 1e9:.2f} s late; they started on it")
        except BaseException:
            self._delete_job(name)
            raise
        ph.started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        t0 = time.monotonic() + (ph.start_ns - time.time_ns()) / 1e9
        return Prepared(spec, out, label, t0, ph)

    def _job_pods(self, job: str) -> list[dict]:
        pods = self.kubectl.json("get", "pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
        return sorted(pods, key=completion_index)

    def _wait_running(self, ph: _Phase) -> list[str]:
        deadline = time.monotonic() + self.k.start_timeout_s
        next_note = time.monotonic() + 10
        while True:
            pods = self._job_pods(ph.job)
            for p in pods:
                for c in p["status"].get("containerStatuses", []):
                    waiting = c.get("state", {}).get("waiting") or {}
                    reason = waiting.get("reason", "")
                    if reason in ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"):
                        raise SystemExit(
                            f"pod {p['metadata']['name']} cannot get image {ph.image} ({reason}): build and load it "
                            "(make lab-k8s-images IMAGE_LOADER=...)"
                        )
                    if reason in ("CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff"):
                        raise RuntimeError(f"pod {p['metadata']['name']}: {reason}: {waiting.get('message', '')}")
                if p["status"].get("phase") in ("Succeeded", "Failed"):
                    logs = self.kubectl.run("logs", p["metadata"]["name"], check=False)
                    raise RuntimeError(f"pod {p['metadata']['name']} ended before the start: {logs.strip()[-600:]}")
            running = [p["metadata"]["name"] for p in pods if container_running(p)]
            if len(running) == ph.pods:
                return running
            waiting = "; ".join(filter(None, (why_waiting(p) for p in pods)))
            now = time.monotonic()
            if now > deadline:
                raise SystemExit(
                    f"Job {ph.job}: {len(running)} of {ph.pods} pods running after {self.k.start_timeout_s} s"
                    + (f": {waiting}" if waiting else "")
                    + " (too little room on the nodes? fewer K6_PODS, smaller K6_RESOURCES, a longer --start-timeout)"
                )
            if waiting and now >= next_note:
                log(f"{ph.job}: {len(running)} of {ph.pods} pods running; {waiting}")
                next_note = now + 10
            time.sleep(0.5)

    def run(self, prepared: Prepared, status=None) -> load.PhaseRun:
        ph: _Phase = prepared.state
        spec, out, label = prepared.spec, prepared.out, prepared.label
        t0 = prepared.t0
        deadline = t0 + spec.duration_s + 90
        last_progress = time.monotonic()
        try:
            while True:
                job = self.kubectl.json("get", "job", ph.job)
                st = job.get("status", {})
                done = (st.get("succeeded", 0) + st.get("failed", 0)) >= ph.pods or any(
                    c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in st.get("conditions", [])
                )
                if done:
                    break
                now = time.monotonic()
                if now > deadline:
                    raise RuntimeError(
                        f"Job {ph.job} still runs {now - t0:.0f} s after its start; see kubectl -n "
                        f"{self.k.namespace} logs job/{ph.job}"
                    )
                if now - last_progress >= 5:
                    shown = (
                        f"{max(0.0, now - t0):.0f}/{spec.duration_s} s" if spec.rate else f"{max(0.0, now - t0):.0f} s"
                    )
                    line = f"{label}: {shown} | {ph.tool} pods running {st.get('active', 0)}/{ph.pods}"
                    progress = self._progress(ph) if ph.tool == "k6" else ""
                    line += f" | {progress}" if progress else ""
                    line += f" | {status()}" if status else ""
                    log(line)
                    last_progress = now
                time.sleep(1)
            cpu_after = self._cpu()
            machine_after = procstat.sample([])
            finished_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            pods = self._job_pods(ph.job)
            outputs = self._collect(ph, pods, out)
        finally:
            if not self.k.keep_jobs:
                self._delete_job(ph.job)
        return self._result(ph, spec, out, outputs, cpu_after, machine_after, finished_at)

    def _progress(self, ph: _Phase) -> str:
        pods = self._job_pods(ph.job)
        if not pods:
            return ""
        tail = self.kubectl.run("logs", pods[0]["metadata"]["name"], "--tail", "6", check=False, timeout=20)
        lines = [x.strip() for x in tail.splitlines() if x.strip().startswith("main ")]
        return ("pod 0: " + " ".join(lines[-1].split()[1:])) if lines else ""

    def _collect(self, ph: _Phase, pods: list[dict], out: Path) -> list[PodOutput]:
        outputs = []
        for p in pods:
            index = completion_index(p)
            name = p["metadata"]["name"]
            text = self.kubectl.run("logs", name, check=False, timeout=60)
            suffix = f"-{index}" if ph.pods > 1 else ""
            (out / (f"wrk{suffix or '-0'}.txt" if ph.tool != "k6" else f"k6{suffix}.log")).write_text(text)
            o = parse_job_log(text, index)
            o.pod, o.node = name, p["spec"].get("nodeName", "")
            if o.summary is not None:
                (out / f"k6-summary{suffix}.json").write_text(json.dumps(o.summary, indent=1))
            if o.samples is not None:
                (out / f"k6-samples{suffix or '-0'}.csv").write_bytes(o.samples)
            elif o.samples_note:
                log(f"{ph.job}: pod {name} sent no per-request samples: {o.samples_note}")
            outputs.append(o)
        if len(outputs) < ph.pods:
            raise RuntimeError(f"Job {ph.job}: only {len(outputs)} of {ph.pods} pods left a log")
        return outputs

    def _result(self, ph, spec, out, outputs, cpu_after, machine_after, finished_at) -> load.PhaseRun:
        for o in outputs:
            if o.error or o.exit_code is None:
                raise RuntimeError(
                    f"{ph.tool} pod {o.pod}: {o.error or 'no exit code in its log'}; see {tools.rel(out)}"
                )
            if o.exit_code not in (0, 99):
                log(f"{ph.job}: {ph.tool} in pod {o.pod} exited with {o.exit_code}; see {tools.rel(out)}")
        if ph.tool == "k6":
            missing = [o.pod for o in outputs if o.summary is None]
            if missing:
                raise RuntimeError(
                    f"k6 wrote no summary in pods {', '.join(missing)}; see their logs in {tools.rel(out)}"
                )
            parts = [o.summary for o in outputs]
            result = merge_k6(parts)
        else:
            log_path = out / "wrk-0.txt"
            raw = load.parse_wrk(spec, load.Command([], {}, log_path, target=self.target))
            version = outputs[0].version
            result = load.merge_wrk(spec, [raw], wrk=tools.Wrk(f"{ph.tool} in {ph.image}", self.wrk2, version))
            parts = [result]
        result["tool_version"] = outputs[0].version

        wall = machine_after.wall - ph.machine_before.wall
        processes = {}
        requests = result.get("requests") or 0
        for name, before in ph.cpu_before.items():
            used = cpu_after.get(name, math.nan) - before
            processes[name] = {
                "cpu_s": used,
                "cores": used / wall if wall > 0 else math.nan,
                "us_per_request": used * 1e6 / requests if requests else math.nan,
            }
        gen = sum(o.cpu_s for o in outputs if o.cpu_s is not None)
        busy = machine_after.machine_busy - ph.machine_before.machine_busy
        total = machine_after.machine_total - ph.machine_before.machine_total
        cpu = {
            "wall_s": wall,
            "processes": processes,
            "machine_busy_s": busy,
            "machine_busy_share": busy / total if total > 0 else math.nan,
            "cores": os.cpu_count(),
            "loadgen": {
                "cpu_s": gen,
                "cores": gen / wall if wall > 0 else math.nan,
                "tool": f"{ph.tool}, {ph.pods} pod{'s' if ph.pods > 1 else ''}",
                "us_per_request": gen * 1e6 / requests if requests else math.nan,
            },
        }
        if self.local:
            ours = gen + sum(v["cpu_s"] for v in processes.values() if not math.isnan(v["cpu_s"]))
            cpu["others_cpu_s"] = max(0.0, busy - ours)
        result["pods"] = pods_table(outputs, parts if ph.tool == "k6" else [result], wall)
        starts = [r["start_ms"] for r in result["pods"] if r["start_ms"] is not None]
        if len(starts) > 1 and max(starts) > 100:
            log(f"{ph.job}: the pods started up to {max(starts):.0f} ms apart")

        commands = [
            f"kubectl --namespace {self.k.namespace} apply -f {tools.rel(ph.manifest_path)}   "
            f"# Job {ph.job}: {ph.pods} pod{'s' if ph.pods > 1 else ''} of {ph.image}",
            ("in each pod: " if ph.pods > 1 else "in the pod: ")
            + " ".join(f"{k}={shlex.quote(v)}" for k, v in ph.env.items())
            + " "
            + shlex.join(ph.argv[2:])
            + (
                "   # plus --execution-segment <its segment> --execution-segment-sequence "
                f"{ph.env['K6_SEGMENT_SEQUENCE']}"
                if "K6_SEGMENT_SEQUENCE" in ph.env
                else ""
            ),
        ]
        csv = sorted(out.glob("k6-samples-*.csv")) if ph.tool == "k6" else []
        # The fill has no fixed length: its series ends with its samples, as a local run's does.
        length = None if spec.scenario == "fill" else spec.duration_s
        return load.PhaseRun(
            result,
            cpu,
            commands,
            [o.exit_code for o in outputs],
            ph.started_at,
            finished_at,
            samples=Samples("k6", csv=csv, duration_s=length) if csv else None,
        )

    def after_phase(self, label: str) -> None:
        """Every pod still there and not restarted, unless a fault of the phase did it."""
        faulted = {f.node for f in self.faults[self._phase_faults :] if f.began_at_s is not None}
        self._phase_faults = len(self.faults)
        now = {p["metadata"]["name"]: p for p in self._kvlab_pods()}
        for n in self.nodes:
            p = now.get(n.name)
            if p is None:
                raise SystemExit(f"pod {n.name} is gone after phase {label}")
            if n.name in faulted:
                self.restarts[n.name] = restarts(p)
            elif restarts(p) > self.restarts.get(n.name, 0):
                raise SystemExit(f"pod {n.name} restarted during phase {label} (restarts {restarts(p)})")
            if not ready(p):
                log(f"warning: pod {n.name} is not ready after phase {label}")

    def _delete_job(self, job: str) -> None:
        try:
            self.kubectl.run("delete", "job", job, "--ignore-not-found", "--wait=false", timeout=60)
        except RuntimeError as e:
            log(f"could not delete Job {job}: {e}")

    def close(self) -> None:
        """Ends every fault (a paused JVM goes on), deletes what this run created (Jobs and their
        pods, the ConfigMap), even when it was cut short, and ends the pods' management channels."""
        for f in self.faults:
            f.stop()
        self.management.close()
        what = "configmaps" if self.k.keep_jobs else "jobs,configmaps"
        try:
            self.kubectl.run(
                "delete", what, "-l", f"{RUN_LABEL}={self.run_id}", "--ignore-not-found", "--wait=false", timeout=60
            )
        except RuntimeError as e:
            log(f"could not clean up after the run ({RUN_LABEL}={self.run_id}): {e}")
