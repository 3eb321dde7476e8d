"""Facts about the cluster for a run's env.json: the machines it runs on, its versions, the release
and its pods with their JVMs; and whether the API server is on this machine (the cluster then
shares this machine's CPUs with the load generators' orchestration)."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import socket
import sys
import time

from .. import envinfo, tools
from .config import K8sConfig
from .kubectl import Kubectl, json_of, parallel, restarts
from .manifests import RUN_LABEL, parse_resources, resources_text


def is_local_address(host: str) -> bool:
    """Whether host (a name or an address) is this machine: the cluster then shares its CPUs."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    for family, _, _, _, addr in infos:
        ip = ipaddress.ip_address(addr[0])
        if ip.is_loopback:
            return True
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.bind((addr[0], 0))
                return True
        except OSError:
            continue
    return False


def node_facts(node: dict) -> dict:
    status = node.get("status", {})
    info = status.get("nodeInfo", {})
    return {
        "name": node["metadata"]["name"],
        "cpu": status.get("capacity", {}).get("cpu"),
        "memory": status.get("capacity", {}).get("memory"),
        "allocatable_cpu": status.get("allocatable", {}).get("cpu"),
        "os_image": info.get("osImage"),
        "kernel": info.get("kernelVersion"),
        "runtime": info.get("containerRuntimeVersion"),
        "kubelet": info.get("kubeletVersion"),
    }


def pod_facts(pod: dict, java_version: str) -> tuple[dict, dict]:
    """A kvlab pod for the report's environment: where it runs, its containers' images and
    resources; and its JVM (the node container's command and JAVA_OPTS)."""
    name = pod["metadata"]["name"]
    statuses = {c["name"]: c for c in pod.get("status", {}).get("containerStatuses", [])}
    containers = [
        {
            "name": c["name"],
            "image": c["image"],
            "image_id": statuses.get(c["name"], {}).get("imageID", ""),
            "resources": resources_text(c.get("resources", {})),
        }
        for c in pod["spec"]["containers"]
    ]
    kvlab = next((c for c in pod["spec"]["containers"] if c["name"] == "kvlab"), pod["spec"]["containers"][0])
    java_opts = next((e.get("value", "") for e in kvlab.get("env", []) if e["name"] == "JAVA_OPTS"), "")
    command = [*(kvlab.get("command") or ["(the image's entrypoint)"]), *(kvlab.get("args") or [])]
    facts = {
        "name": name,
        "node": pod["spec"].get("nodeName", ""),
        "containers": containers,
        "restarts": restarts(pod),
    }
    jvm = {
        "pid": name,
        "label": f"in pod {name}",
        "version": java_version.strip().replace("\n", "; "),
        "command_line": " ".join(command) + (f"; JAVA_OPTS={java_opts}" if java_opts else ""),
    }
    return facts, jvm



def environment(
    k: K8sConfig, kubectl: Kubectl, pods: list[dict], tool: str, wrk2: bool, local: bool, run_id: str, target: str
) -> dict:
    """env.json of a run in Kubernetes: this machine, the cluster (versions, nodes), the release
    and its pods with their JVMs, the load generators' images and resources."""
    kc, helm, ns, rel = shlex.split(k.kubectl), shlex.split(k.helm), k.namespace, k.release
    version = json_of([*kc, "version", "-o", "json"], {})
    listed = json_of([*helm, "list", "--namespace", ns, "--filter", f"^{re.escape(rel)}$", "-o", "json"], [])
    release = listed[0] if listed else {}
    user_values = json_of([*helm, "get", "values", rel, "--namespace", ns, "-o", "json"], {}) or {}
    java = parallel(
        lambda pod: kubectl.run("exec", pod, "-c", "kvlab", "--", "sh", "-c", "java -version 2>&1", timeout=30),
        [p["metadata"]["name"] for p in pods],
    )
    facts = [pod_facts(p, v if isinstance(v, str) else f"unknown ({v})") for p, v in zip(pods, java)]
    wrk_label = (
        f"wrk2 (built from source) in image {k.wrk_image}"
        if wrk2
        else f"Debian's wrk, not wrk2, in image {k.wrk_image}: a closed-loop tool paced by a Lua delay() "
        "hook, its latency measured from the send, not corrected for coordinated omission (the wrk2 image "
        "builds from source only where GitHub answers: make lab-k8s-images WRK2=1)"
    )
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": socket.gethostname(),
        "os": envinfo.os_name(),
        "kernel": os.uname().release,
        "cpu_model": envinfo.cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(envinfo.memory_gib(), 1),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": sys.version.split()[0],
        "git": envinfo.git(),
        "jvms": [jvm for _, jvm in facts],
        "load_tool": f"{tool}, in Kubernetes Jobs",
        "k6": f"k6 {tools.PINS['K6_VERSION']} in image {k.k6_image}, {k.k6_pods} pods per phase",
        "async_profiler": tools.PINS["ASYNC_PROFILER_VERSION"],
        "jattach": (
            "the pods' profiler sidecar: k8s/profile-pod.sh runs kvlab-profile in it (kubectl exec), which runs "
            "loadtests/profiler/profile.sh (jattach + libasyncProfiler.so), and copies the HTML out (kubectl cp)"
        ),
        "wrk": {"path": None, "is_wrk2": wrk2, "version": "", "label": wrk_label, "image": k.wrk_image},
        "k8s": {
            "api_server_local": local,
            "kubectl": (version.get("clientVersion") or {}).get("gitVersion", "unknown"),
            "server": (version.get("serverVersion") or {}).get("gitVersion", "unknown"),
            "helm": tools.first_line([*helm, "version", "--short"]),
            "nodes": [node_facts(n) for n in json_of([*kc, "get", "nodes", "-o", "json"], {}).get("items", [])],
            "namespace": ns,
            "release": {
                "name": rel,
                "chart": release.get("chart", "unknown"),
                "app_version": release.get("app_version", "unknown"),
                "revision": release.get("revision", "unknown"),
                "values": json.dumps(user_values, separators=(",", ":"), sort_keys=True),
            },
            "target": target,
            "pods": [pod for pod, _ in facts],
            "k6_image": k.k6_image,
            "k6_pods": k.k6_pods,
            "k6_resources": resources_text(parse_resources(k.k6_resources)),
            "wrk_image": k.wrk_image,
            "wrk_resources": resources_text(parse_resources(k.wrk_resources)),
            "run_label": f"{RUN_LABEL}={run_id}",
        },
    }
