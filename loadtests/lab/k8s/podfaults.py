"""Faults of a kvlab pod (the kinds of lab.faults.ScheduledFault on Kubernetes), each one or two
kubectl calls:

- pause: the node's JVM stopped with SIGSTOP and let go on with SIGCONT, sent from the pod's
  profiler sidecar, which shares the pod's process namespace and runs as the JVM's user;
- kill: the JVM killed with SIGKILL from the sidecar, and Kubernetes restarts its container (or,
  in a pod without the sidecar, the pod deleted with a 1 s grace period, and the StatefulSet makes
  it again); the fault ends once the pod is ready again.

A cut-off is refused: a NetworkPolicy stops only new connections (the enforcers let established
ones through), and the nodes' replica connections and the load generators' are long-lived. On
k8s-local with kube-router, a pod denied all traffic (and left out of the chart's policy) refused
new connections at once, yet under 200 PUT/s its peers wrote no hint in 10 s of such a cut."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..faults import ScheduledFault
from ..load import log
from .kubectl import Kubectl, ready, restarts

# Signals the node's JVM, found by its name among the pod's processes (the sidecar has no java),
# and prints its pid; with an expected pid, only that process (a restarted JVM is another one).
SIGNAL = r"""sig=$1 want=${2:-} pid=
for dir in /proc/[0-9]*; do
  read -r comm 2>/dev/null <"$dir/comm" || continue
  if [ "$comm" = java ]; then pid=${dir#/proc/}; break; fi
done
[ -n "$pid" ] || { echo "no JVM among the pod's processes" >&2; exit 3; }
[ -z "$want" ] || [ "$pid" = "$want" ] || { echo "the JVM is pid $pid now, not $want: it was restarted" >&2; exit 4; }
kill -s "$sig" "$pid" && echo "$pid"
"""
SIDECAR = "profiler"

CUTOFF_REFUSED = (
    "the k8s executor cannot cut a pod off: a NetworkPolicy only stops new connections (the network plugins "
    "that enforce it, such as kube-router, let established connections through), while the nodes' replica "
    "connections and the load generators' stay open for the whole run; and k8s-local's bridge plugin enforces "
    "no NetworkPolicy at all. A cut-off needs something that drops the pod's packets inside its network "
    "namespace, established connections too (a container with NET_ADMIN in the pod, as chaos tools add); "
    "run the cutoff fault on local processes (make lab SCENARIO=faults)"
)


def signal_jvm(kubectl: Kubectl, pod: str, sig: str, pid: int = 0) -> int:
    """Sends sig (STOP, CONT, KILL) to the pod's JVM from its sidecar; the JVM's pid."""
    argv = ["exec", pod, "-c", SIDECAR, "--", "sh", "-c", SIGNAL, "sh", sig, *([str(pid)] if pid else [])]
    out = kubectl.run(*argv, timeout=20).strip()
    if not out.isdigit():
        raise RuntimeError(f"pod {pod}: the sidecar did not say which process it signalled ({out[-200:]!r})")
    return int(out)


def liveness_allows_s(pod: dict, container: str = "kvlab") -> float:
    """How long the container may stop answering before its liveness probe can restart it: the
    first failing probe may start at once, the last of failureThreshold ends timeoutSeconds later."""
    c = next((c for c in pod["spec"]["containers"] if c["name"] == container), None)
    probe = (c or {}).get("livenessProbe")
    if not probe:
        return float("inf")
    period, failures = probe.get("periodSeconds", 10), probe.get("failureThreshold", 3)
    return period * (failures - 1) + probe.get("timeoutSeconds", 1)


@dataclass
class PodPause(ScheduledFault):
    """The pod's JVM stopped (SIGSTOP) and let go on (SIGCONT) from its sidecar."""

    kubectl: Kubectl | None = None
    kind: str = "pause"
    pid: int = 0
    attempts: int = 3  # of SIGCONT: a JVM left stopped is a node lost until its liveness probe restarts it
    sleep: Callable[[float], None] = time.sleep

    def describe(self) -> str:
        jvm = f"JVM (pid {self.pid})" if self.pid else "JVM"
        return f"pod {self.node}'s {jvm} paused (SIGSTOP, then SIGCONT)"

    def begin(self) -> None:
        self.pid = signal_jvm(self.kubectl, self.node, "STOP")

    def end(self) -> None:
        for attempt in range(self.attempts):
            try:
                signal_jvm(self.kubectl, self.node, "CONT", self.pid)
                return
            except RuntimeError as e:
                if "it was restarted" in str(e) or "no JVM" in str(e) or attempt == self.attempts - 1:
                    raise
                self.sleep(1.0)


@dataclass
class PodKill(ScheduledFault):
    """The pod's JVM killed (SIGKILL from its sidecar; or the pod deleted without the sidecar); its
    end waits until Kubernetes has it ready again."""

    kubectl: Kubectl | None = None
    kind: str = "kill"
    sidecar: bool = True
    pid: int = 0
    ready_timeout_s: float = 240.0  # the chart's startup probe allows 180 s
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _before: tuple[str, int] = field(default=("", 0), repr=False)  # the pod's uid and restarts

    def describe(self) -> str:
        if not self.sidecar:
            return f"pod {self.node} deleted with a 1 s grace period (its JVM killed); its StatefulSet makes it again"
        jvm = f"JVM (pid {self.pid})" if self.pid else "JVM"
        return f"pod {self.node}'s {jvm} killed (SIGKILL); Kubernetes restarts its container"

    def begin(self) -> None:
        pod = self.kubectl.json("get", "pod", self.node, timeout=20)
        self._before = (pod["metadata"].get("uid", ""), restarts(pod))
        if self.sidecar:
            self.pid = signal_jvm(self.kubectl, self.node, "KILL")
        else:
            self.kubectl.run("delete", "pod", self.node, "--grace-period=1", "--wait=false", timeout=30)

    def end(self) -> None:
        """Waits until the pod is back (a new container or a new pod) and ready."""
        deadline = self.clock() + self.ready_timeout_s
        seen = "not read"
        while True:
            try:
                pod = self.kubectl.json("get", "pod", self.node, timeout=20)
                uid, count = pod["metadata"].get("uid", ""), restarts(pod)
                back = uid != self._before[0] or count > self._before[1]
                if back and ready(pod):
                    return
                seen = f"{'restarted' if back else 'not restarted yet'}, not ready"
            except RuntimeError as e:  # deleted and not made again yet
                seen = str(e)[-200:]
            if self.clock() >= deadline:
                raise RuntimeError(f"pod {self.node} not ready {self.ready_timeout_s:.0f} s after the kill ({seen})")
            self.sleep(1.0)


def make(kubectl: Kubectl, pods: list[dict], kind: str, index: int, at_s: float, for_s: float) -> ScheduledFault:
    """A fault of pod index (-1: the last), at_s into the phase's load, for for_s; not started.
    Refused (SystemExit) before the run when the cluster or the release cannot have it."""
    if len(pods) < 2:
        raise SystemExit("faults need two pods or more")
    if not -len(pods) <= index < len(pods):
        raise SystemExit(f"no pod {index} for a {kind} fault: the release has {len(pods)}")
    pod = pods[index]
    name = pod["metadata"]["name"]
    sidecar = SIDECAR in [c["name"] for c in pod["spec"]["containers"]]
    if kind == "pause":
        if not sidecar:
            raise SystemExit(
                f"pod {name} has no profiler sidecar, which pauses the JVM: install the chart with "
                "--set profiler.enabled=true (make k8s-up does)"
            )
        allowed = liveness_allows_s(pod)
        if for_s >= allowed:
            log(
                f"warning: a pause of {for_s:.0f} s is longer than pod {name}'s liveness probe allows "
                f"({allowed:.0f} s): the kubelet may restart its container"
            )
        return PodPause(name, at_s, for_s, kubectl=kubectl)
    if kind == "kill":
        return PodKill(name, at_s, for_s, kubectl=kubectl, sidecar=sidecar)
    if kind == "cutoff":
        raise SystemExit(CUTOFF_REFUSED)
    raise SystemExit(f"the k8s executor cannot make a {kind} fault")
