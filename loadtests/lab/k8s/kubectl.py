"""kubectl for the lab: one namespace's calls, several at once, and what a pod's JSON says about it."""

from __future__ import annotations

import json
import shlex
import subprocess
import threading


class Kubectl:
    """kubectl in one namespace: a call's output, or RuntimeError with what went wrong."""

    def __init__(self, command: str, namespace: str):
        self.base = shlex.split(command)
        self.namespace = namespace

    def argv(self, *args: str) -> list[str]:
        return [*self.base, "--namespace", self.namespace, *args]

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60, check: bool = True) -> str:
        argv = self.argv(*args)
        try:
            p = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"{shlex.join(argv)}: no answer in {timeout:.0f} s") from e
        if check and p.returncode != 0:
            raise RuntimeError(f"{shlex.join(argv)} exited {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}")
        return p.stdout

    def json(self, *args: str, timeout: float = 60) -> dict:
        return json.loads(self.run(*args, "-o", "json", timeout=timeout))


def parallel(fn, items: list) -> list:
    """fn(item) for every item at once (kubectl calls are mostly waiting); exceptions come back as values."""
    results: list = [None] * len(items)

    def call(i, item):
        try:
            results[i] = fn(item)
        except Exception as e:  # noqa: BLE001 - handed to the caller
            results[i] = e

    threads = [threading.Thread(target=call, args=(i, item)) for i, item in enumerate(items)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results

# ---- what a pod's JSON says


def restarts(pod: dict) -> int:
    return sum(c.get("restartCount", 0) for c in pod.get("status", {}).get("containerStatuses", []))


def ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))


def container_running(pod: dict) -> bool:
    statuses = pod.get("status", {}).get("containerStatuses", [])
    return bool(statuses) and all("running" in c.get("state", {}) for c in statuses)


def why_waiting(pod: dict) -> str:
    """Why a pod does not run yet, when Kubernetes says (not scheduled: too little CPU, ...)."""
    for c in pod.get("status", {}).get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] != "True":
            return f"{pod['metadata']['name']} not scheduled: {c.get('message') or c.get('reason', '')}"
    for c in pod.get("status", {}).get("containerStatuses", []):
        waiting = c.get("state", {}).get("waiting") or {}
        if waiting.get("reason") not in (None, "ContainerCreating"):
            return f"{pod['metadata']['name']}: {waiting['reason']} {waiting.get('message', '')}".strip()
    return ""


def completion_index(pod: dict) -> int:
    meta = pod.get("metadata", {})
    raw = (meta.get("annotations") or {}).get("batch.kubernetes.io/job-completion-index") or (
        meta.get("labels") or {}
    ).get("batch.kubernetes.io/job-completion-index", "0")
    return int(raw)


def json_of(argv: list[str], default):
    """The JSON a command prints, or default when it fails (facts for the report are best effort)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else default
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return default
