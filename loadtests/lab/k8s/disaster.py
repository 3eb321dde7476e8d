"""The disaster scenario's steps on a release of the chart (make lab SCENARIO=disaster LAB_TARGET=k8s),
the counterpart of lab.disasterlocal: the backup asked of the first pod's management port with the
pod's own credential; the release uninstalled and its pods' data claims deleted (their volumes go
with them), while the backup target stays (the backups' claim, which the chart keeps, or the S3
store); a fresh release of the same name and size installed from the chart with its restore mode
(restore.backup: each pod's init container fetches and checks its share before the node starts);
and the ledger's keys read back through the client port of each pod, inside it. Each step answers
what it did and how long it took.

The release must have backups on (backup.enabled=true); make lab LAB_TARGET=k8s SCENARIO=disaster
installs it so. The new release gets the old one's values (helm get values, kept in memory only:
they may hold the cluster's secret) and the restore's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from .. import tools
from ..disaster import held_of, read_count
from ..ledger.check import Held
from ..ledger.history import seq_in
from ..ledger.replicas import read_each
from ..load import log
from .kubectl import Kubectl, parallel, ready, why_waiting
from .management import Channel
from .podledger import parse_curl

CHART = tools.ROOT / "helm" / "kvlab"
DATA_VOLUME = "data"  # the StatefulSet's volumeClaimTemplate
BACKUP_VOLUME = "backups"  # the directory target's claim, mounted at /backups
RESTORE_CONTAINER = "restore"
UNINSTALL_TIMEOUT_S = 300
POLL_S = 1.0
READ_TIMEOUT_S = 10.0
READ_TRIES = 3
# In the node's container: one GET a line on the client port, "n method limit path", answered with
# curl -i's output and a marker line (lab.k8s.management's protocol).
CLIENT_LOOP = r"""port=${SERVER_PORT:-8080}
while read -r n method limit path; do
  out=$(curl -sS -i -m "$limit" "http://127.0.0.1:$port$path" 2>&1)
  rc=$?
  printf '%s\nKVLAB-HTTP %s %s\n' "$out" "$n" "$rc"
done"""
# The bytes under the node's storage directory (what the disaster destroys, what the restore brought).
DATA_BYTES = 'du -sb "${KVLAB_STORAGE_DIR:-/data}" | cut -f1'


class Helm:
    """helm in one namespace: a call's output, or RuntimeError with what went wrong."""

    def __init__(self, command: str, namespace: str):
        self.base = shlex.split(command)
        self.namespace = namespace

    def run(self, *args: str, timeout: float = 120) -> str:
        argv = [*self.base, *args, "--namespace", self.namespace]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"{shlex.join(argv)}: no answer in {timeout:.0f} s") from e
        if p.returncode != 0:
            raise RuntimeError(f"{shlex.join(argv)} exited {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}")
        return p.stdout


# ---- pure: what the pods and the values say, what the restore installs


def claims(pods: list[dict]) -> tuple[dict[str, str], str | None]:
    """Each pod's data claim (pod -> claim), and the backups' claim the pods mount (None when the
    target is not a directory on a claim)."""
    data, backups = {}, None
    for p in pods:
        for v in p["spec"].get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim and v["name"] == DATA_VOLUME:
                data[p["metadata"]["name"]] = claim
            elif claim and v["name"] == BACKUP_VOLUME:
                backups = claim
    missing = [p["metadata"]["name"] for p in pods if p["metadata"]["name"] not in data]
    if missing:
        raise RuntimeError(f"pods without a '{DATA_VOLUME}' claim: {', '.join(missing)}")
    return data, backups


def backup_target(values: dict, backup_claim: str | None) -> str:
    """Where the release's backups go, for the report; SystemExit when the release makes none."""
    backup = values.get("backup") or {}
    if not backup.get("enabled"):
        raise SystemExit(
            "the release has no backups (backup.enabled is false): install it with --set backup.enabled=true "
            "(make lab LAB_TARGET=k8s SCENARIO=disaster does)"
        )
    if backup.get("target"):
        return str(backup["target"])
    if not backup_claim:
        raise SystemExit("the release backs up to a directory, yet its pods mount no backups' claim")
    return f"the claim {backup_claim} (/backups)"


def install_args(release: str, chart: Path, values_file: Path, replicas: int, backup: str,
                 backup_claim: str | None) -> list[str]:
    """helm's arguments for the fresh release that restores backup: the old release's values, its size,
    the restore mode, and the backups' claim the old release left (the new one must not make its own)."""
    args = ["install", release, str(chart), "-f", str(values_file), "--set", f"replicaCount={replicas}",
            "--set-string", f"restore.backup={backup}", "--set", "restore.force=false"]
    if backup_claim:
        args += ["--set-string", f"backup.persistence.existingClaim={backup_claim}"]
    return args


def restore_state(pod: dict) -> tuple[str, int | None, float | None]:
    """Where a new pod's restore init container is: ("waiting"|"done"|"failed", exit code, seconds
    it ran). A container restarted after a failure counts as failed: the restore refused."""
    for c in (pod.get("status") or {}).get("initContainerStatuses") or []:
        if c.get("name") != RESTORE_CONTAINER:
            continue
        for state in ((c.get("state") or {}).get("terminated"), (c.get("lastState") or {}).get("terminated")):
            if state:
                code = state.get("exitCode")
                return ("done" if code == 0 else "failed"), code, _seconds(state)
        return "waiting", None, None
    if ready(pod):
        raise RuntimeError(f"pod {pod['metadata']['name']} started without the restore init container")
    return "waiting", None, None


def _seconds(state: dict) -> float | None:
    try:
        began = datetime.fromisoformat(state["startedAt"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(state["finishedAt"].replace("Z", "+00:00"))
    except (KeyError, AttributeError, ValueError):
        return None
    return (ended - began).total_seconds()


def client_path(key: str, count: int) -> str:
    return f"/v0/entity?id={quote(key, safe='')}&replicas={count}/{count}"


# ---- the steps


class K8sDisaster:
    """executor: lab.k8s.executor.K8sExecutor (its release, kubectl, run settings); out: the run's
    directory (the restore containers' logs)."""

    def __init__(self, executor, out: Path, helm: Helm | None = None, chart: Path = CHART,
                 timeout_s: float = 600.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.executor = executor
        self.kubectl: Kubectl = executor.kubectl
        self.k = executor.k
        self.cfg = executor.cfg
        self.out = out
        self.helm = helm or Helm(self.k.helm, self.k.namespace)
        self.chart = chart
        self.timeout_s = timeout_s
        self.clock, self.sleep = clock, sleep
        self.pods = [p["metadata"]["name"] for p in executor.release.pods()]
        self.data_claims, self.backup_claim = claims(executor.release.pods())
        # The values the release was installed with, for the new one; all of them, for its target.
        self.values = self.helm.run("get", "values", self.k.release, "-o", "json").strip() or "{}"
        self._target = backup_target(json.loads(self.helm.run("get", "values", self.k.release, "--all", "-o", "json")),
                                     self.backup_claim)
        self._restored: dict | None = None

    def target(self) -> str:
        return self._target

    # ---- the backup

    def backup(self, timeout_s: float) -> dict:
        """A whole backup, asked of the first pod's management port with its cluster secret (a channel
        of its own: the executor's keeps scraping the pods meanwhile): its answer, or why it failed."""
        channel = Channel(self.kubectl, self.pods[0], retry_s=0.0)
        try:
            return {"answer": json.loads(channel.request("/actuator/kvlab/backup", "POST", timeout_s))}
        except (RuntimeError, ValueError) as e:
            return {"error": str(e)}
        finally:
            channel.close()

    # ---- the disaster

    def destroy(self) -> dict:
        """The release uninstalled and its pods' data claims deleted, their volumes with them; the
        backups' claim stays. What was lost: each pod's bytes of data."""
        t = self.clock()
        sizes = parallel(lambda pod: self._data_bytes(pod), self.pods)
        self.executor.management.close()
        log(f"disaster: helm uninstall {self.k.release}, then its data claims deleted")
        self.helm.run("uninstall", self.k.release, "--wait", "--timeout", f"{UNINSTALL_TIMEOUT_S}s",
                      timeout=UNINSTALL_TIMEOUT_S + 30)
        self._until(lambda: not self.executor.release.pods(), UNINSTALL_TIMEOUT_S,
                    lambda: f"the pods of {self.k.release} are still there {UNINSTALL_TIMEOUT_S} s after the uninstall")
        claims_ = [self.data_claims[p] for p in self.pods]
        # --ignore-not-found: a retention policy of whenDeleted: Delete has removed them already.
        self.kubectl.run("delete", "pvc", *claims_, "--ignore-not-found", "--wait=true", f"--timeout={UNINSTALL_TIMEOUT_S}s",
                         timeout=UNINSTALL_TIMEOUT_S + 30)
        removed = [{"node": p, "claim": self.data_claims[p], "bytes": size if isinstance(size, int) else None}
                   for p, size in zip(self.pods, sizes)]
        total = sum(r["bytes"] or 0 for r in removed)
        log(f"disaster: release {self.k.release} uninstalled, {len(claims_)} data claims deleted ({total / 2**20:.1f} MiB)")
        return {"seconds": round(self.clock() - t, 3), "removed": removed,
                "kept": self.backup_claim or self._target}

    # ---- the restore

    def restore(self, name: str) -> dict:
        """A fresh release of the same name and size with restore.backup=name: the seconds from its
        install until every pod's restore init container ended, and per pod how long it ran; an
        init container that failed stops it with its last log line."""
        t = self.clock()
        # What the record and the log show: the values file is a temporary one, removed after the install.
        shown = install_args(self.k.release, self.chart, Path("OLD-RELEASE-VALUES.json"), len(self.pods), name,
                             self.backup_claim)
        log(f"restore: helm {shlex.join(shown)}")
        fd, values_file = tempfile.mkstemp(prefix="kvlab-restore-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(self.values)
            self.helm.run(*install_args(self.k.release, self.chart, Path(values_file), len(self.pods), name,
                                        self.backup_claim), timeout=120)
        finally:
            os.unlink(values_file)
        done: dict[str, dict] = {}
        deadline = t + self.timeout_s
        while len(done) < len(self.pods):
            now = {p["metadata"]["name"]: p for p in self.executor.release.pods()}
            for pod in self.pods:
                if pod in done or pod not in now:
                    continue
                state, code, seconds = restore_state(now[pod])
                if state == "waiting":
                    continue
                logfile = self.out / f"restore-{pod}.log"
                logfile.write_text(self.kubectl.run("logs", pod, "-c", RESTORE_CONTAINER, timeout=60, check=False))
                if state == "failed":
                    lines = logfile.read_text(errors="replace").strip().splitlines()
                    last = lines[-1].strip()[:200] if lines else "no output"
                    raise RuntimeError(f"the restore of {pod} exited with {code}: {last} (see {tools.rel(logfile)})")
                done[pod] = {"node": pod, "exit_code": code, "seconds": seconds, "log": logfile.name}
                log(f"restore: {pod} restored its share of {name} in {seconds} s")
            if len(done) < len(self.pods):
                if self.clock() > deadline:
                    why = "; ".join(filter(None, map(why_waiting, now.values()))) or "restore still running"
                    raise RuntimeError(f"not every pod restored within {self.timeout_s:g} s: {why}")
                self.sleep(POLL_S)
        self._restored = {"backup": name, "seconds": round(self.clock() - t, 3),
                          "nodes": [done[p] for p in self.pods], "bytes": None,
                          "command": f"helm {shlex.join(shown)}"}
        return self._restored

    def start(self) -> dict:
        """Until every pod of the new release is ready; then the bytes each one's volume holds (in
        the restore's record: what came back)."""
        t = self.clock()
        self._until(lambda: self._all_ready(), self.timeout_s,
                    lambda: f"not every pod of {self.k.release} is ready {self.timeout_s:g} s after its restore")
        took = round(self.clock() - t, 3)
        if self._restored is not None:
            sizes = parallel(lambda pod: self._data_bytes(pod), self.pods)
            for node, size in zip(self._restored["nodes"], sizes):
                node["bytes"] = size if isinstance(size, int) else None
            self._restored["bytes"] = sum(n["bytes"] or 0 for n in self._restored["nodes"])
        return {"seconds": took}

    def _all_ready(self) -> bool:
        pods = {p["metadata"]["name"]: p for p in self.executor.release.pods()}
        return all(pod in pods and ready(pods[pod]) for pod in self.pods)

    # ---- the check

    def read(self, keys: list[str], tag: str) -> dict[str, Held]:
        """What the new release answers for each key, read through the client port inside each pod
        from every replica of the key (replicas=from/from, so a record any replica holds is found),
        the keys shared out over the pods."""
        n = len(self.pods)
        count = read_count(self.cfg.replicas, n)
        shares = [keys[i::n] for i in range(n)]
        channels = [Channel(self.kubectl, pod, loop=CLIENT_LOOP, retry_s=0.0) for pod in self.pods]

        def fetch(channel: Channel, key: str) -> Held:
            status, body = None, b""
            for _ in range(READ_TRIES):
                status, _, body = parse_curl(channel.request(client_path(key, count), timeout=READ_TIMEOUT_S))
                if status in (200, 404):
                    break
                self.sleep(0.5)
            return held_of(status, seq_in(tag, key, body) if status == 200 else None)

        try:
            parts = parallel(lambda i: read_each(shares[i], lambda key: fetch(channels[i], key)), list(range(n)))
        finally:
            for c in channels:
                c.close()
        out: dict[str, Held] = {}
        for part in parts:
            if isinstance(part, Exception):
                raise RuntimeError(f"reading the keys back failed: {part}")
            out |= part
        return out

    # ---- helpers

    def _data_bytes(self, pod: str) -> int | None:
        try:
            return int(self.kubectl.run("exec", pod, "-c", "kvlab", "--", "sh", "-c", DATA_BYTES, timeout=60).strip())
        except (RuntimeError, ValueError):
            return None

    def _until(self, done: Callable[[], bool], timeout_s: float, why: Callable[[], str]) -> None:
        deadline = self.clock() + timeout_s
        while not done():
            if self.clock() > deadline:
                raise RuntimeError(why())
            self.sleep(POLL_S)
