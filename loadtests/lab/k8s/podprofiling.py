"""Profiling windows on pods: k8s/profile-pod.sh POD EVENT SECONDS DIR for each pod, the script
`make profile` runs (kubectl exec kvlab-profile in the sidecar, kubectl cp of the HTML)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import profiling, tools
from .kubectl import Kubectl, parallel

PROFILE_POD_SH = tools.ROOT / "k8s" / "profile-pod.sh"


@dataclass
class PodProfiling(profiling.Profiling):
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
