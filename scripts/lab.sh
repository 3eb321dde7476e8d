#!/usr/bin/env bash
# `make lab`: from a built jar to a report. Starts a cluster of its own (NODES local processes on
# 127.0.0.1:LAB_PORT.., fresh data under data/lab), runs the load lab against it (the phases, a
# saturation search with SCENARIO=saturation, or a mixed phase during which one node is killed,
# paused and cut off with SCENARIO=faults, or a long mixed phase with SCENARIO=soak, or a backup
# under load, every node's data destroyed and restored with SCENARIO=disaster), stops the
# cluster, and prints where the report is; it exits 99 when the report's verdict fails the gate
# (GATE), after stopping the cluster.
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
  phases | saturation | faults | soak | disaster) ;;
  *) echo "SCENARIO=$SCENARIO: phases (the default), saturation, faults, soak or disaster" >&2; exit 2 ;;
esac
LAB_PY=${LAB_PY:-.tools/venv/bin/python}
export DATA_ROOT=${LAB_DATA:-./data/lab}
export BASE_PORT=$LAB_PORT
export JAVA_OPTS=$LAB_JAVA_OPTS
# The nodes' backups (SCENARIO=disaster takes one): beside their data unless BACKUP_TARGET says
# where (a directory, or s3://bucket/prefix with S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY).
export BACKUP_TARGET=${BACKUP_TARGET:-$DATA_ROOT/backups}

say() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

if ls "$DATA_ROOT"/run/*.pid >/dev/null 2>&1; then
  say "a lab cluster is still up in $DATA_ROOT; stopping it first"
  scripts/local-cluster.sh down
fi
rm -rf "$DATA_ROOT"
targets=$(seq -s, -f "http://127.0.0.1:%g" "$LAB_PORT" "$((LAB_PORT + NODES - 1))")
export PYTHONPATH=$PWD/loadtests
cleanup() {
  local rc=$?
  # A faults run that was killed may have left a node cut off: its firewall table and cgroup go first.
  [ "$SCENARIO" != faults ] || "$LAB_PY" -m lab cleanup-faults --targets "$targets" || true
  say "stopping the lab cluster"
  scripts/local-cluster.sh down || true
  [ -n "${KEEP_DATA:-}" ] || rm -rf "$DATA_ROOT"
  # 99: the run and its report are whole, and its verdict failed the gate (GATE).
  [ "$rc" != 99 ] || say "the report's verdict failed its gate (GATE): its failing rows and the report's path are above"
}
trap cleanup EXIT

if [ "$SCENARIO" = faults ]; then
  # Cutting a node off takes nft (and root); without root the lab leaves the cut-off out and says why.
  if [ "$(id -u)" = 0 ]; then loadtests/tools/install.sh nft; fi
fi

say "starting $NODES nodes on 127.0.0.1:$LAB_PORT.. ($LAB_JAVA_OPTS)"
scripts/local-cluster.sh up "$NODES"
# In the targets' order; a node the lab kills and starts again gets its new pid written to its file.
run_dir=$(cd "$DATA_ROOT/run" && pwd)
pid_files="" pids=""
for ((i = 0; i < NODES; i++)); do
  pid_files+="${pid_files:+,}$run_dir/n$i.pid"
  pids+="${pids:+,}$(cat "$run_dir/n$i.pid")"
done

export KVLAB_LAB_INVOCATION=${KVLAB_LAB_INVOCATION:-scripts/lab.sh}
common=(--targets "$targets" --pids "$pids" "$@")
if [ "$SCENARIO" = saturation ]; then
  say "saturation search"
  "$LAB_PY" -m lab saturate "${common[@]}"
elif [ "$SCENARIO" = faults ]; then
  say "faults"
  "$LAB_PY" -m lab faults --pid-files "$pid_files" "${common[@]}"
elif [ "$SCENARIO" = soak ]; then
  say "soak"
  "$LAB_PY" -m lab soak "${common[@]}"
elif [ "$SCENARIO" = disaster ]; then
  say "disaster"
  "$LAB_PY" -m lab disaster --pid-files "$pid_files" "${common[@]}"
else
  say "phases"
  "$LAB_PY" -m lab run "${common[@]}"
fi
