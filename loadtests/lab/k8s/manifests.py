"""What the lab creates in the cluster, as data: the labels of everything it makes, the load
generators' resources, the ConfigMap that carries the scripts, the Indexed Job of a phase and k6's
execution segments that split its load between the Job's pods."""

from __future__ import annotations

import math
import re

from .. import defaults, load, tools

JOB_SH = tools.ROOT / "k8s" / "loadgen" / "job.sh"
SCRIPTS_MOUNT = "/scripts"
WORK_MOUNT = "/work"
# Labels of everything the lab creates; the name is not the chart's, so that no Service,
# PodDisruptionBudget or NetworkPolicy of the release counts a load generator as a node.
NAME_LABEL = "kvlab-lab"
RUN_LABEL = "kvlab.dev/lab-run"
# The work directory holds k6's gzipped samples until the phase ends, some 40 bytes a request: room
# for three times that over the phase's rate and length (a soak's), 64 MiB at least.
SAMPLE_BYTES = 128
WORK_MIN_MIB = 64


def work_size(env: dict[str, str]) -> str:
    """The sizeLimit of a phase's work directory, from the RATE and DURATION its k6 is given."""
    if not (env.get("RATE") and env.get("DURATION")):
        return f"{WORK_MIN_MIB}Mi"
    requests = int(env["RATE"]) * defaults.duration(env["DURATION"])
    return f"{max(WORK_MIN_MIB, math.ceil(requests * SAMPLE_BYTES / 2**20))}Mi"


def segment_sequence(pods: int) -> list[str]:
    """k6's execution segment sequence that splits a test into `pods` equal parts: 0,1/3,2/3,1."""
    if pods < 1:
        raise ValueError("at least one pod")
    return ["0"] + [f"{i // math.gcd(i, pods)}/{pods // math.gcd(i, pods)}" for i in range(1, pods)] + ["1"]


def segments(pods: int) -> list[str]:
    seq = segment_sequence(pods)
    return [f"{a}:{b}" for a, b in zip(seq, seq[1:])]


def parse_resources(text: str) -> dict:
    """requests.cpu=200m,requests.memory=128Mi,limits.memory=1Gi -> a container's resources."""
    out: dict[str, dict[str, str]] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        kind, _, resource = key.partition(".")
        if not sep or kind not in ("requests", "limits") or not resource or not value:
            raise SystemExit(f"bad resource {item!r}: use requests.cpu=200m,requests.memory=128Mi,limits.memory=1Gi")
        out.setdefault(kind, {})[resource] = value
    return out


def resources_text(resources: dict) -> str:
    parts = [f"{kind} {', '.join(f'{k} {v}' for k, v in values.items())}" for kind, values in resources.items()]
    return "; ".join(parts) or "none set"


def labels(release: str, run_id: str, component: str, version: str = "") -> dict[str, str]:
    out = {
        "app.kubernetes.io/name": NAME_LABEL,
        "app.kubernetes.io/instance": release,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": "kvlab",
        "app.kubernetes.io/managed-by": "kvlab-lab",
        RUN_LABEL: run_id,
    }
    if version:
        out["app.kubernetes.io/version"] = re.sub(r"[^A-Za-z0-9._-]", "_", version)[:63]
    return out


def scripts_configmap(name: str, namespace: str, labels_: dict[str, str]) -> tuple[dict, list[dict]]:
    """The ConfigMap with job.sh, the k6 and wrk scripts and the defaults file they read, and the
    items that mount them at their paths, the scripts' own relative to the file as in the
    repository (a ConfigMap key cannot hold a slash)."""
    files = {"job.sh": JOB_SH, "lab/defaults.env": defaults.FILE}
    for path in sorted(load.K6_SCRIPTS.rglob("*.js")):
        files[f"k6/{path.relative_to(load.K6_SCRIPTS)}"] = path
    for path in sorted(load.WRK_SCRIPTS.glob("*.lua")):
        files[f"wrk2/{path.name}"] = path
    data, items = {}, []
    for rel, path in files.items():
        key = rel.replace("/", "__")
        data[key] = path.read_text()
        items.append({"key": key, "path": rel})
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels_},
        "data": data,
    }
    return manifest, items


def job_name(release: str, run_id: str, index: int, label: str) -> str:
    tail = f"-lab-{run_id}-{index:02d}-{re.sub(r'[^a-z0-9-]+', '-', label.lower()).strip('-')}"
    return (release[: 63 - min(len(tail), 40)] + tail)[:63].rstrip("-")


def job_manifest(
    name: str,
    namespace: str,
    labels_: dict[str, str],
    container: str,
    image: str,
    argv: list[str],
    env: dict[str, str],
    pods: int,
    deadline_s: int,
    resources: dict,
    configmap: str,
    items: list[dict],
    ttl_s: int,
) -> dict:
    """An Indexed Job of `pods` pods that all run at once, never retried, bounded in time, as the
    chart's pods are: non-root, read-only root file system, no capabilities, no API token."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels_},
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline_s,
            "ttlSecondsAfterFinished": ttl_s,
            "template": {
                "metadata": {"labels": labels_},
                "spec": {
                    "restartPolicy": "Never",
                    "enableServiceLinks": False,
                    "automountServiceAccountToken": False,
                    "terminationGracePeriodSeconds": 10,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 10001,
                        "runAsGroup": 10001,
                        "fsGroup": 10001,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": container,
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "command": argv[:1],
                            "args": argv[1:],
                            "env": [{"name": k, "value": v} for k, v in env.items()],
                            "resources": resources,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [
                                {"name": "scripts", "mountPath": SCRIPTS_MOUNT, "readOnly": True},
                                {"name": "work", "mountPath": WORK_MOUNT},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "scripts", "configMap": {"name": configmap, "items": items}},
                        {"name": "work", "emptyDir": {"sizeLimit": work_size(env)}},
                    ],
                },
            },
        },
    }

