"""The settings of a lab run in Kubernetes (python -m lab --executor k8s)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import tools


@dataclass
class K8sConfig:
    namespace: str = "kvlab"
    release: str = "kvlab"
    kubectl: str = "kubectl"
    helm: str = "helm"
    k6_pods: int = 2
    k6_image: str = f"kvlab/k6:{tools.PINS['K6_VERSION'].lstrip('v')}"
    wrk_image: str = f"kvlab/wrk:{tools.project_version()}"
    k6_resources: str = "requests.cpu=200m,requests.memory=128Mi,limits.memory=1Gi"
    wrk_resources: str = "requests.cpu=100m,requests.memory=32Mi,limits.memory=256Mi"
    start_timeout_s: int = 120  # for the pods of a phase to run
    profile_gap_s: float = 2.0  # between profiling windows: profile-pod.sh copies the graph out
    keep_jobs: bool = False
    ttl_s: int = 3600  # finished Jobs the runner could not delete go away after this long

