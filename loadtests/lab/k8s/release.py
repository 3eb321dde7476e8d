"""The kvlab release a run in Kubernetes loads: its client Service and the URL the load generator
pods reach it at, its pods (the nodes), and whether the cluster runs on this machine."""

from __future__ import annotations

import shlex
import subprocess
from urllib.parse import urlparse

from ..load import log
from . import facts
from .config import K8sConfig
from .kubectl import Kubectl, json_of, ready


class Release:
    def __init__(self, k: K8sConfig, kubectl: Kubectl):
        self.k, self.kubectl = k, kubectl
        self.service = self._service()
        ports = self.service["spec"]["ports"]
        port = next((p["port"] for p in ports if p.get("name") == "http"), None) or ports[0]["port"]
        self.selector = ",".join(f"{a}={b}" for a, b in sorted(self.service["spec"]["selector"].items()))
        self.target = f"http://{self.service['metadata']['name']}.{k.namespace}.svc.{self._domain()}:{port}"
        self.local = self._cluster_is_local()

    def _service(self) -> dict:
        try:
            found = self.kubectl.json(
                "get", "services", "-l", f"app.kubernetes.io/instance={self.k.release},app.kubernetes.io/component=client"
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
        argv = [*shlex.split(self.k.helm), "get", "values", self.k.release, "--namespace", self.k.namespace, "--all"]
        values = json_of([*argv, "-o", "json"], {}) or {}
        return (values.get("cluster") or {}).get("domain") or "cluster.local"

    def _cluster_is_local(self) -> bool:
        argv = [*shlex.split(self.k.kubectl), "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"]
        try:
            server = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return False
        host = urlparse(server).hostname
        return bool(host) and facts.is_local_address(host)

    def pods(self) -> list[dict]:
        """The release's kvlab pods now, by name."""
        pods = self.kubectl.json("get", "pods", "-l", self.selector)["items"]
        return sorted(pods, key=lambda p: p["metadata"]["name"])

    def check(self, pods: list[dict], profiled: bool) -> None:
        """SystemExit unless every pod is ready and, when the run profiles, has the profiler sidecar."""
        if not pods:
            raise SystemExit(f"release {self.k.release} has no pods in namespace {self.k.namespace}")
        for p in pods:
            name = p["metadata"]["name"]
            if not ready(p):
                raise SystemExit(f"pod {name} is not ready: wait for the release (kubectl -n {self.k.namespace} get pods)")
            containers = [c["name"] for c in p["spec"]["containers"]]
            if profiled and "profiler" not in containers:
                raise SystemExit(
                    f"pod {name} has no profiler sidecar (containers: {', '.join(containers)}): install the chart with "
                    "--set profiler.enabled=true (make k8s-up does), or run with EVENTS=none"
                )
        log(
            f"k8s: release {self.k.release} in namespace {self.k.namespace}, pods "
            f"{', '.join(p['metadata']['name'] for p in pods)}; load at {self.target}"
            + ("; the cluster runs on this machine" if self.local else "")
        )
