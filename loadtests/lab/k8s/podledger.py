"""The ledger in Kubernetes (the lab's Kubernetes executor): its workload as a one-pod k6 Job beside
the phase's load (loadtests/k6/ledger.js, whose log carries the operations), the cluster's node
names from each pod's /actuator/kvlab, and each replica's own records read inside its pod: the
replica port takes calls from the release's pods only, so a `kubectl exec` loop in each pod's
kvlab container curls its own node with the calls this machine signs (the secret read once from
the pod's secret file)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

from ..ledger.check import Held
from ..ledger.history import FOREIGN, GET, OK, Op
from ..ledger.replicas import Topology, authorization, held, read_each, record_target, topology
from ..ledger.workload import Plan
from .kubectl import Kubectl, container_running, why_waiting
from .management import Channel, Management
from .manifests import SCRIPTS_MOUNT, WORK_MOUNT

LINE = "KVLAB-LEDGER "
CONTAINER = "ledger"
# In the node's container (curl, its replica port in KVLAB_REPLICATION_PORT): one signed GET a line,
# "n method limit scheme token path", answered with curl -i's output and a marker line.
RECORD_LOOP = r"""port=${KVLAB_REPLICATION_PORT:-${SERVER_PORT:-8080}}
while read -r n method limit scheme token path; do
  out=$(curl -sS -i -m "$limit" -X "$method" -H "Authorization: $scheme $token" "http://127.0.0.1:$port$path" 2>&1)
  rc=$?
  printf '%s\nKVLAB-HTTP %s %s\n' "$out" "$n" "$rc"
done"""
READ_TIMEOUT_S = 10.0
JOB_END_SLACK_S = 90  # how long after its planned end the ledger's Job may take to end


def parse_log(text: str, t0_epoch: float) -> list[Op]:
    """The operations in a ledger pod's log, their times in seconds from t0_epoch (the phase's
    start, seconds since the epoch); ValueError on a malformed ledger line."""
    ops = []
    for line in text.splitlines():
        if not line.startswith(LINE):
            continue
        f = line[len(LINE) :].split()
        if len(f) != 8:
            raise ValueError(f"a ledger line of {len(f)} fields, not 8: {line!r}")
        seq, kind, key, invoked, completed, outcome, status, seen = f
        saw = None
        if kind == GET and outcome == OK and status == "200":
            saw = int(seen) if seen != "-" else FOREIGN
        ops.append(
            Op(int(seq), key, kind, int(invoked) / 1000 - t0_epoch, int(completed) / 1000 - t0_epoch, outcome, status, saw)
        )
    return ops


def parse_curl(text: str) -> tuple[int, dict[str, str], bytes]:
    """curl -i's output, as the exec loop hands it over (its line ends made "\n"): the status, the
    headers (names in lower case), the body."""
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    parts = lines[0].split()
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise RuntimeError(f"not an HTTP answer: {text[:200]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    # The loop's marker line follows the body on a line of its own.
    return int(parts[1]), headers, body.removesuffix("\n").encode()


class JobWorkload:
    """The ledger's k6 Job: made and running (its pod waiting for the start signal) when created,
    started on the phase's t0, its operations read from its log when it is done."""

    def __init__(self, kubectl: Kubectl, name: str, manifest: dict, out: Path, plan: Plan, start_timeout_s: float):
        self.kubectl = kubectl
        self.name = name
        self.out = out
        self.plan = plan
        self.t0_epoch = math.nan
        (out / "ledger-job.json").write_text(json.dumps(manifest, indent=1))
        kubectl.run("apply", "-f", str(out / "ledger-job.json"))
        try:
            self.pod = self._running(start_timeout_s)
        except BaseException:
            self._delete()
            raise

    def _pods(self) -> list[dict]:
        return self.kubectl.json("get", "pods", "-l", f"batch.kubernetes.io/job-name={self.name}")["items"]

    def _running(self, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            pods = self._pods()
            running = [p["metadata"]["name"] for p in pods if container_running(p)]
            if running:
                return running[0]
            if time.monotonic() > deadline:
                why = "; ".join(filter(None, map(why_waiting, pods))) or "no pod yet"
                raise RuntimeError(f"the ledger's Job {self.name} does not run after {timeout_s:.0f} s: {why}")
            time.sleep(0.5)

    def start(self, t0: float) -> JobWorkload:
        """The pod starts at t0 (a time.monotonic() value), as the load's pods do (k8s/loadgen/job.sh)."""
        self.t0_epoch = time.time() - (time.monotonic() - t0)
        start_ns = int(self.t0_epoch * 1e9)
        part, final = f"{WORK_MOUNT}/start-at.part", f"{WORK_MOUNT}/start-at"
        signal = f"printf %s {start_ns} > {part} && mv {part} {final}"
        self.kubectl.run("exec", self.pod, "-c", CONTAINER, "--", "sh", "-c", signal, timeout=30)
        return self

    def stop(self) -> list[Op]:
        """Waits for the Job's end (its k6 ends with the load, every request answered or given up
        on), then its operations from its log; RuntimeError when it does not end: an operation
        missing from the log may have been applied."""
        deadline = time.monotonic() + self.plan.duration_s + self.plan.timeout_s + JOB_END_SLACK_S
        try:
            while True:
                st = self.kubectl.json("get", "job", self.name).get("status", {})
                if st.get("succeeded", 0) + st.get("failed", 0) >= 1:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the ledger's Job {self.name} still runs long after the load ended")
                time.sleep(1)
            text = self.kubectl.run("logs", self.pod, "-c", CONTAINER, timeout=120)
        finally:
            self._delete()
        (self.out / "ledger-k6.log").write_text(text)
        return parse_log(text, self.t0_epoch)

    def abandon(self) -> None:
        self._delete()

    def _delete(self) -> None:
        self.kubectl.run("delete", "job", self.name, "--ignore-not-found", "--wait=false", timeout=60, check=False)


class PodCluster:
    """The release's pods; manifest(name, argv, env, deadline_s) makes the ledger's one-pod Job as
    the executor makes its load generators' (image, resources, the scripts' ConfigMap)."""

    def __init__(
        self,
        kubectl: Kubectl,
        management: Management,
        target: str,
        job_name: Callable[[str], str],
        manifest: Callable[[str, list[str], dict[str, str], int], dict],
        start_timeout_s: float,
    ):
        self.kubectl = kubectl
        self.management = management
        self.target = target
        self.job_name = job_name
        self.manifest = manifest
        self.start_timeout_s = start_timeout_s
        self.channels: dict[str, Channel] = {}

    def workload(self, plan: Plan, out: Path) -> JobWorkload:
        env = {
            "TARGETS": self.target,
            "DURATION": f"{plan.duration_s:g}s",
            "LEDGER_TAG": plan.tag,
            "LEDGER_KEYS": str(plan.keys),
            "LEDGER_RATE": f"{plan.rate:g}",
            "LEDGER_WORKERS": str(plan.workers),
            "REPLICAS": plan.replicas,
            "REQUEST_TIMEOUT": f"{plan.timeout_s:g}s",
            "START_TIMEOUT": str(int(self.start_timeout_s) + 60),
        }
        argv = ["bash", f"{SCRIPTS_MOUNT}/job.sh", "k6", "run", "--no-usage-report", "--no-color",
                "--log-format", "raw", f"{SCRIPTS_MOUNT}/k6/ledger.js"]
        name = self.job_name(plan.tag)
        deadline = int(self.start_timeout_s + 60 + plan.duration_s + 60)
        return JobWorkload(self.kubectl, name, self.manifest(name, argv, env, deadline), out, plan, self.start_timeout_s)

    def topology(self) -> Topology:
        pods = list(self.management.channels)
        return topology({p: json.loads(self.management.request(p, "/actuator/kvlab", timeout=READ_TIMEOUT_S)) for p in pods})

    def reader(self):
        """A function that reads keys of the ledger at one pod: key -> Held."""
        pod = next(iter(self.management.channels))
        secret_file = '"${KVLAB_CLUSTER_SECRET_FILE:-/etc/kvlab/cluster-secret}"'
        secret = self.kubectl.run("exec", pod, "-c", "kvlab", "--", "sh", "-c", f"cat {secret_file}", timeout=30)
        secret = secret.strip().encode()
        if not secret:
            raise RuntimeError(f"pod {pod} has no cluster secret in its secret file")

        def read(pod: str, node: str, keys: list[str], tag: str) -> dict[str, Held]:
            channel = self.channels.setdefault(pod, Channel(self.kubectl, pod, loop=RECORD_LOOP, retry_s=0.0))

            def fetch(key: str) -> Held:
                path = record_target(key)
                text = channel.request(f"{authorization(secret, node, 'GET', path)} {path}", timeout=READ_TIMEOUT_S)
                return held(*parse_curl(text), tag, key)

            return read_each(keys, fetch)

        return read

    def close(self) -> None:
        for channel in self.channels.values():
            channel.close()
