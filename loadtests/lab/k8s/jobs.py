"""The Job of a phase: its manifest (k6 as an Indexed Job of k6_pods pods, one execution segment
each; wrk as a Job of one pod), applied; the wait until its pods run; the start signal that makes
them start together; the wait until it has ended, with progress lines; its deletion."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import load, procstat
from ..load import LoadSpec, log
from ..loadseries import K6_CSV_ENV, K6_SAMPLES_FILE, k6_output_args
from .config import K8sConfig
from .kubectl import Kubectl, completion_index, container_running, parallel, why_waiting
from .manifests import SCRIPTS_MOUNT, WORK_MOUNT, job_manifest, job_name, labels, parse_resources, scripts_configmap, segment_sequence

# A phase's pods may run this long past their load before the Job counts as stuck.
GRACE_S = 60


@dataclass
class PhaseJob:
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


class Jobs:
    """The Jobs of a run's phases, in the release's namespace, against target."""

    def __init__(self, k: K8sConfig, kubectl: Kubectl, run_id: str, target: str, wrk2: bool):
        if k.k6_pods < 1:
            raise SystemExit("k6_pods must be at least 1")
        self.k, self.kubectl, self.run_id, self.target, self.wrk2 = k, kubectl, run_id, target, wrk2
        self.k6_resources = parse_resources(k.k6_resources)
        self.wrk_resources = parse_resources(k.wrk_resources)
        self.configmap = ""
        self.items: list[dict] = []

    def _ensure_configmap(self) -> None:
        if self.configmap:
            return
        name = f"{self.k.release[:40]}-lab-{self.run_id}-scripts"
        manifest, self.items = scripts_configmap(name, self.k.namespace, labels(self.k.release, self.run_id, "scripts"))
        self.kubectl.run("apply", "-f", "-", stdin=json.dumps(manifest))
        self.configmap = name

    def ledger_job_name(self, tag: str) -> str:
        """The name of a phase's ledger Job (lab.k8s.podledger)."""
        return job_name(self.k.release, self.run_id, 0, f"ledger-{tag}")

    def ledger_manifest(self, name: str, argv: list[str], env: dict[str, str], deadline_s: int) -> dict:
        """A phase's ledger Job: one k6 pod with the run's scripts, made as the load generators are."""
        from .podledger import CONTAINER

        self._ensure_configmap()
        return job_manifest(
            name, self.k.namespace, labels(self.k.release, self.run_id, "ledger"), CONTAINER, self.k.k6_image,
            argv, env, 1, deadline_s, self.k6_resources, self.configmap, self.items, self.k.ttl_s,
        )

    def create(self, spec: LoadSpec, out: Path, label: str) -> PhaseJob:
        """The phase's Job, its manifest written to out/job.json and applied."""
        self._ensure_configmap()
        index = int(out.name.split("-", 1)[0])
        name = job_name(self.k.release, self.run_id, index, label)
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
            argv = ["bash", f"{SCRIPTS_MOUNT}/job.sh", "k6", "run", "--no-usage-report", "--no-color",
                    *k6_output_args(samples), f"{SCRIPTS_MOUNT}/k6/{spec.scenario}.js"]
            tool, image, resources = "k6", self.k.k6_image, self.k6_resources
        else:
            pods = 1
            options, env = load.wrk_args(spec, self.wrk2, 1)
            tool = "wrk2" if self.wrk2 else "wrk"
            argv = ["bash", f"{SCRIPTS_MOUNT}/job.sh", tool, *options, "-s", f"{SCRIPTS_MOUNT}/wrk2/{spec.scenario}.lua",
                    self.target]
            image, resources = self.k.wrk_image, self.wrk_resources
        env["START_TIMEOUT"] = str(self.k.start_timeout_s + 60)
        deadline = self.k.start_timeout_s + 60 + spec.duration_s + GRACE_S
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
        ph = PhaseJob(name, tool, image, pods, "loadgen", manifest_path, argv, env, deadline)
        log(f"{label}: Job {name}: {pods} pod{'s' if pods > 1 else ''} of {image}")
        self.kubectl.run("apply", "-f", str(manifest_path))
        return ph

    def pods(self, job: str) -> list[dict]:
        pods = self.kubectl.json("get", "pods", "-l", f"batch.kubernetes.io/job-name={job}")["items"]
        return sorted(pods, key=completion_index)

    def wait_running(self, ph: PhaseJob) -> list[str]:
        """The names of the Job's pods once they all run; SystemExit or RuntimeError when they cannot."""
        deadline = time.monotonic() + self.k.start_timeout_s
        next_note = time.monotonic() + 10
        while True:
            pods = self.pods(ph.job)
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

    def signal_start(self, ph: PhaseJob, running: list[str], label: str) -> None:
        """Writes the start time into every pod at once; they start together a moment later."""
        lead_ns = int((1.0 + 0.25 * ph.pods) * 1e9)
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

    def wait_done(self, ph: PhaseJob, spec: LoadSpec, label: str, t0: float, status: Callable[[], str] | None) -> None:
        """Until the Job has ended (t0: when its load started), a progress line every 5 s."""
        deadline = t0 + spec.duration_s + 90
        last_progress = time.monotonic()
        while True:
            job = self.kubectl.json("get", "job", ph.job)
            st = job.get("status", {})
            done = (st.get("succeeded", 0) + st.get("failed", 0)) >= ph.pods or any(
                c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in st.get("conditions", [])
            )
            if done:
                return
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError(
                    f"Job {ph.job} still runs {now - t0:.0f} s after its start; see kubectl -n "
                    f"{self.k.namespace} logs job/{ph.job}"
                )
            if now - last_progress >= 5:
                shown = f"{max(0.0, now - t0):.0f}/{spec.duration_s} s" if spec.rate else f"{max(0.0, now - t0):.0f} s"
                line = f"{label}: {shown} | {ph.tool} pods running {st.get('active', 0)}/{ph.pods}"
                progress = self._progress(ph) if ph.tool == "k6" else ""
                line += f" | {progress}" if progress else ""
                line += f" | {status()}" if status else ""
                log(line)
                last_progress = now
            time.sleep(1)

    def _progress(self, ph: PhaseJob) -> str:
        pods = self.pods(ph.job)
        if not pods:
            return ""
        tail = self.kubectl.run("logs", pods[0]["metadata"]["name"], "--tail", "6", check=False, timeout=20)
        lines = [x.strip() for x in tail.splitlines() if x.strip().startswith("main ")]
        return ("pod 0: " + " ".join(lines[-1].split()[1:])) if lines else ""

    def delete(self, job: str) -> None:
        try:
            self.kubectl.run("delete", "job", job, "--ignore-not-found", "--wait=false", timeout=60)
        except RuntimeError as e:
            log(f"could not delete Job {job}: {e}")
