#!/usr/bin/env bash
# The load lab inside Kubernetes: `make lab LAB_TARGET=k8s` (scripts/lab.sh hands over here).
#   k8s/lab.sh [python -m lab run|saturate options, without --targets]
# The release must be installed with the profiler sidecar and the load generator images must be
# in the cluster: make does both first (make k8s-up, make lab-k8s-images). This runs the lab's
# Kubernetes executor (loadtests/lab/k8s/) against the release's client Service: each phase a
# Job in the release's namespace, k6 over K6_PODS pods with execution segments, wrk in one pod,
# every kvlab pod profiled through its sidecar; the report lands in reports/ as a local run's does.
# The release stays installed; LAB_UNINSTALL=1 uninstalls it afterwards and deletes its data claims.
#
# Environment (mk/k8s.mk exports make's variables): K8S_NAMESPACE (kvlab), RELEASE (kvlab),
# KUBECTL, HELM, K6_PODS (2), K6_IMAGE, WRK_IMAGE, WRK2_IMAGE (used when the local Docker engine has
# it), LAB_WRK_IMAGE (this wrk image, whatever exists), K6_RESOURCES, WRK_RESOURCES,
# SCENARIO (phases | saturation | faults: its schedule comes as --faults among the options | soak |
# disaster: a backup under load, the release uninstalled with its data claims, restored into a new one),
# LAB_UNINSTALL, LAB_PY.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

K8S_NAMESPACE=${K8S_NAMESPACE:-kvlab}
RELEASE=${RELEASE:-kvlab}
KUBECTL=${KUBECTL:-kubectl}
HELM=${HELM:-helm}
SCENARIO=${SCENARIO:-phases}
LAB_PY=${LAB_PY:-.tools/venv/bin/python}

say() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

args=(--executor k8s --namespace "$K8S_NAMESPACE" --release "$RELEASE" --kubectl "$KUBECTL" --helm "$HELM")
[ -z "${K6_PODS:-}" ] || args+=(--k6-pods "$K6_PODS")
[ -z "${K6_IMAGE:-}" ] || args+=(--k6-image "$K6_IMAGE")
[ -z "${K6_RESOURCES:-}" ] || args+=(--k6-resources "$K6_RESOURCES")
[ -z "${WRK_RESOURCES:-}" ] || args+=(--wrk-resources "$WRK_RESOURCES")
# wrk2 when its image was built (it needs GitHub), else Debian's wrk; the report says which.
wrk_image=${LAB_WRK_IMAGE:-}
if [ -z "$wrk_image" ] && [ -n "${WRK2_IMAGE:-}" ] && docker image inspect "$WRK2_IMAGE" >/dev/null 2>&1; then
  wrk_image=$WRK2_IMAGE
fi
wrk_image=${wrk_image:-${WRK_IMAGE:-}}
[ -z "$wrk_image" ] || args+=(--wrk-image "$wrk_image")

export PYTHONPATH=$PWD/loadtests
export KVLAB_LAB_INVOCATION=${KVLAB_LAB_INVOCATION:-k8s/lab.sh}
case "$SCENARIO" in
  saturation) command=(saturate) what="saturation search" ;;
  faults) command=(faults) what="fault scenario" ;;
  soak) command=(soak) what="soak" ;;
  phases) command=(run) what="phases" ;;
  # The release is uninstalled, its data claims deleted, and installed again from its backup.
  disaster) command=(disaster) what="disaster scenario" ;;
  *) say "unknown SCENARIO=$SCENARIO: phases, saturation, faults, soak or disaster"; exit 2 ;;
esac
rc=0
say "$what in Kubernetes: release $RELEASE, namespace $K8S_NAMESPACE, wrk image ${wrk_image:-default}"
"$LAB_PY" -m lab "${command[@]}" "${args[@]}" "$@" || rc=$?

if [ "${LAB_UNINSTALL:-0}" = 1 ]; then
  say "LAB_UNINSTALL=1: uninstalling release $RELEASE and deleting its data claims"
  cleaned=0
  $HELM uninstall "$RELEASE" --namespace "$K8S_NAMESPACE" --ignore-not-found --wait --timeout 5m &&
    $KUBECTL --namespace "$K8S_NAMESPACE" delete pvc -l "app.kubernetes.io/instance=$RELEASE" --ignore-not-found \
      --wait=false || cleaned=1
  [ "$rc" != 0 ] || rc=$cleaned
else
  say "release $RELEASE stays installed in namespace $K8S_NAMESPACE (make k8s-down removes it)"
fi
exit "$rc"
