#!/usr/bin/env bash
# Removes what k8s/netpol/install.sh installed (make k8s-netpol-down): the DaemonSet first, and
# waits until its pods are gone, for each pod removes kube-router's chains and ipsets from its node
# as it stops (kube-router-netpol); then the RBAC. The image stays in the cluster's image store.
#   k8s/netpol/uninstall.sh
# Environment: KUBECTL, NETPOL_TIMEOUT (seconds, default 120).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBECTL=${KUBECTL:-kubectl}
NETPOL_TIMEOUT=${NETPOL_TIMEOUT:-120}

say() { printf '[netpol %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

"$KUBECTL" version >/dev/null 2>&1 || die "no Kubernetes answers at ${KUBECONFIG:-~/.kube/config}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Each pod's last words say what it removed from its node: follow them while the pods stop.
pods=$("$KUBECTL" -n kube-system get pods -l app.kubernetes.io/name=kube-router -o name 2>/dev/null || true)
followers=()
for pod in $pods; do
  timeout "$((NETPOL_TIMEOUT + 10))" "$KUBECTL" -n kube-system logs -f --tail=1 "$pod" >"$logs/${pod#pod/}.log" 2>&1 &
  followers+=($!)
done
say "deleting kube-system/kube-router; its pods remove their rules as they stop"
"$KUBECTL" -n kube-system delete daemonset kube-router --ignore-not-found --wait=true --timeout="${NETPOL_TIMEOUT}s" >&2
"$KUBECTL" -n kube-system wait --for=delete pod -l app.kubernetes.io/name=kube-router --timeout="${NETPOL_TIMEOUT}s" >&2 ||
  die "kube-router pods still there after ${NETPOL_TIMEOUT}s"
for f in "${followers[@]}"; do wait "$f" || true; done
for pod in $pods; do
  removed=$(grep -h 'removed .* of kube-router' "$logs/${pod#pod/}.log" | tail -n 1 || true)
  say "${pod#pod/}: ${removed:-did not say it removed its rules (check the node: iptables -S | grep KUBE-ROUTER)}"
done
"$KUBECTL" delete -f "$HERE/kube-router.yaml" --ignore-not-found >&2
say "kube-router removed"
