#!/usr/bin/env bash
# CI: the chart's end-to-end tests on a real Kubernetes that comes up offline (k8s-local).
#   k8s/ci-e2e.sh
# Brings k8s-local up, runs `make k8s-test` against it (chart lint, both images built and loaded with
# k8s-local load-image, the scenarios of k8s/e2e/run.sh), and brings it down again on any exit.
# A cluster that was already up when it started is left up.
# K8S_CI_LAB=1 adds a last step on the same cluster: a short in-cluster load lab whose report must
# have every part (make lab-k8s-smoke; the load lab's, see loadtests/README.md).
# k8s-local's bridge CNI does not enforce NetworkPolicy, so `make k8s-test` gets
# NETPOL_ENFORCER=kube-router: kube-router's network policy controller (k8s/netpol/) is installed
# before the scenarios, and removed again at the end (before k8s-local down, so that its ipsets go
# too) unless it was there before.
#
# Environment: K8S_LOCAL (default ../shared/k8s-local/k8s-local, next to this repository), K8S_CI_LAB,
# NETPOL_ENFORCER (default kube-router).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

K8S_LOCAL=${K8S_LOCAL:-$(cd .. && pwd)/shared/k8s-local/k8s-local}
[ -x "$K8S_LOCAL" ] || { echo "[ci-e2e] no k8s-local at $K8S_LOCAL (set K8S_LOCAL)" >&2; exit 1; }

log() { printf '[ci-e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
now() { date +%s; }

was_up=0
netpol_ours=0
NETPOL_ENFORCER=${NETPOL_ENFORCER-kube-router}
if "$K8S_LOCAL" status >/dev/null 2>&1; then
  was_up=1
  log "k8s-local is already up: using it, and leaving it up"
fi
# shellcheck disable=SC2317 # run by the EXIT trap
down() {
  local rc=$? t
  if [ "$netpol_ours" = 1 ]; then
    t=$(now)
    log "make k8s-netpol-down"
    make k8s-netpol-down || log "make k8s-netpol-down failed"
    log "make k8s-netpol-down took $(($(now) - t))s"
  fi
  if [ "$was_up" = 0 ]; then
    t=$(now)
    log "k8s-local down"
    "$K8S_LOCAL" down || log "k8s-local down failed"
    log "k8s-local down took $(($(now) - t))s"
  fi
  exit "$rc"
}
trap down EXIT
trap 'exit 130' INT TERM

t=$(now)
log "k8s-local up"
eval "$("$K8S_LOCAL" up)"
log "k8s-local up took $(($(now) - t))s; $(kubectl version 2>/dev/null | tail -n 1)"

# An enforcer that was there before (its DaemonSet in kube-system bears its name) is someone else's: it stays.
if [ -n "$NETPOL_ENFORCER" ] && ! kubectl -n kube-system get daemonset "$NETPOL_ENFORCER" >/dev/null 2>&1; then
  netpol_ours=1
fi

t=$(now)
log "make k8s-test IMAGE_LOADER=\"$K8S_LOCAL load-image\" NETPOL_ENFORCER=$NETPOL_ENFORCER"
rc=0
make k8s-test IMAGE_LOADER="$K8S_LOCAL load-image" NETPOL_ENFORCER="$NETPOL_ENFORCER" || rc=$?
log "make k8s-test took $(($(now) - t))s and exited $rc"

# Optional: the in-cluster load lab, short, on the same cluster (it removes its release afterwards).
if [ "${K8S_CI_LAB:-0}" = 1 ]; then
  t=$(now)
  log "make lab-k8s-smoke IMAGE_LOADER=\"$K8S_LOCAL load-image\""
  lab_rc=0
  make lab-k8s-smoke IMAGE_LOADER="$K8S_LOCAL load-image" || lab_rc=$?
  log "make lab-k8s-smoke took $(($(now) - t))s and exited $lab_rc"
  [ "$rc" != 0 ] || rc=$lab_rc
fi
exit "$rc"
