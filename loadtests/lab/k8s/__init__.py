"""The lab in Kubernetes: the phases as Jobs in the cluster, the release's pods profiled through
their sidecar. executor runs a phase; manifests, kubectl, outputs and facts are its parts."""

from .config import K8sConfig
from .executor import K8sExecutor

__all__ = ["K8sConfig", "K8sExecutor"]
