#!/usr/bin/env bash
# `make lab`: from a built jar to a report. Starts a cluster of its own (NODES local processes on
# 127.0.0.1:LAB_PORT.., fresh data under data/lab), runs the load lab against it (the phases, or a
# saturation search with SCENARIO=saturation), stops the cluster, and prints where the report is.
# Every knob comes from the environment; mk/lab.mk passes make's variables.
set -euo pipefail
cd "$(dirname "$0")/.."

# LAB_TARGET=k8s: the same lab inside the Kubernetes cluster KUBECONFIG points at (k8s/lab.sh).
if [ "${LAB_TARGET:-local}" = k8s ]; then
  exec k8s/lab.sh "$@"
fi

NODES=${NODES:-3}
LAB_PORT=${LAB_PORT:-8280}
LAB_JAVA_OPTS=${LAB_JAVA_OPTS:--Xmx512m}
SCENARIO=${SCENARIO:-phases}
case $SCENARIO in
  phases | saturation) ;;
  *) echo "SCENARIO=$SCENARIO: phases (the default) or saturation" >&2; exit 2 ;;
esac
LAB_PY=${LAB_PY:-.tools/venv/bin/python}
export DATA_ROOT=${LAB_DATA:-./data/lab}
export BASE_PORT=$LAB_PORT
export JAVA_OPTS=$LAB_JAVA_OPTS

say() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

if ls "$DATA_ROOT"/run/*.pid >/dev/null 2>&1; then
  say "a lab cluster is still up in $DATA_ROOT; stopping it first"
  scripts/local-cluster.sh down
fi
rm -rf "$DATA_ROOT"
cleanup() {
  say "stopping the lab cluster"
  scripts/local-cluster.sh down || true
  [ -n "${KEEP_DATA:-}" ] || rm -rf "$DATA_ROOT"
}
trap cleanup EXIT

say "starting $NODES nodes on 127.0.0.1:$LAB_PORT.. ($LAB_JAVA_OPTS)"
scripts/local-cluster.sh up "$NODES"
targets=$(seq -s, -f "http://127.0.0.1:%g" "$LAB_PORT" "$((LAB_PORT + NODES - 1))")
pids=$(cat "$DATA_ROOT"/run/n*.pid | paste -sd,)

export PYTHONPATH=$PWD/loadtests
export KVLAB_LAB_INVOCATION=${KVLAB_LAB_INVOCATION:-scripts/lab.sh}
common=(--targets "$targets" --pids "$pids" "$@")
if [ "$SCENARIO" = saturation ]; then
  say "saturation search"
  "$LAB_PY" -m lab saturate "${common[@]}"
else
  say "phases"
  "$LAB_PY" -m lab run "${common[@]}"
fi
