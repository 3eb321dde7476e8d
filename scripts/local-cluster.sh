#!/usr/bin/env bash
# A kvlab cluster of local processes on 127.0.0.1, one data directory and log per node.
#   local-cluster.sh up [N]      start N nodes (default 3) on ports BASE_PORT.. (default 8080)
#   local-cluster.sh down        stop them with SIGTERM (they drain and close RocksDB)
#   local-cluster.sh status      list the nodes and whether they answer
#   local-cluster.sh stop I      stop node I alone (SIGTERM), keeping its data and the others
#   local-cluster.sh start I [N] start node I of an N-node cluster (3) again, with the same settings
# Environment: JAVA (java binary), JAR, DATA_ROOT (./data), BASE_PORT (8080), JAVA_OPTS,
# START_TIMEOUT (60 s a node has to answer), EVENT_LOOPS (Netty event loops per node) and STORAGE_THREADS (RocksDB threads per node): 1 each
# by default when several nodes share this machine's CPUs, the node's own defaults for a single node.
# The nodes share the secret in DATA_ROOT/cluster-secret (made on the first `up`, kept with the data):
# only callers that hold it may speak the replica protocol. A node that runs out of heap exits
# (-XX:+ExitOnOutOfMemoryError) rather than serve on half-broken.
set -euo pipefail

JAVA=${JAVA:-java}
JAR=${JAR:-service/target/kvlab-service.jar}
DATA_ROOT=${DATA_ROOT:-./data}
BASE_PORT=${BASE_PORT:-8080}
JAVA_OPTS=${JAVA_OPTS:-}
EVENT_LOOPS=${EVENT_LOOPS:-}
STORAGE_THREADS=${STORAGE_THREADS:-}
START_TIMEOUT=${START_TIMEOUT:-60}
RUN_DIR="$DATA_ROOT/run"
SECRET="$DATA_ROOT/cluster-secret"

node_url() { echo "http://127.0.0.1:$((BASE_PORT + $1))"; }

answers() { curl -fsS -o /dev/null --max-time 1 "$1/v0/status" 2>/dev/null; }

# launch I N: starts node I of an N-node cluster in the background; its pid goes to RUN_DIR/nI.pid,
# its output to the end of RUN_DIR/nI.log.
launch() {
  local i=$1 n=$2 port=$((BASE_PORT + $1)) nodes=""
  local loops=${EVENT_LOOPS:-$((n > 1 ? 1 : 0))} storage=${STORAGE_THREADS:-$((n > 1 ? 1 : 0))}
  for ((j = 0; j < n; j++)); do nodes+="${nodes:+,}$(node_url "$j")"; done
  if answers "$(node_url "$i")"; then echo "port $port is taken by a running node" >&2; exit 1; fi
  # shellcheck disable=SC2086 # JAVA_OPTS holds several options
  nohup "$JAVA" -XX:+ExitOnOutOfMemoryError $JAVA_OPTS -jar "$JAR" --server.port="$port" --kvlab.storage.dir="$DATA_ROOT/n$i" \
    --kvlab.cluster.nodes="$nodes" --kvlab.cluster.self="$(node_url "$i")" --kvlab.cluster.secret-file="$SECRET" \
    --kvlab.netty.event-loops="$loops" --kvlab.storage.threads="$storage" \
    >>"$RUN_DIR/n$i.log" 2>&1 &
  echo $! >"$RUN_DIR/n$i.pid"
}

# wait_for I: until node I answers (START_TIMEOUT s at most); fails with its log when it exits or does not.
wait_for() {
  local i=$1 deadline=$((SECONDS + START_TIMEOUT))
  until answers "$(node_url "$i")"; do
    if ! kill -0 "$(cat "$RUN_DIR/n$i.pid")" 2>/dev/null; then
      echo "node n$i exited; its log:" >&2; tail -20 "$RUN_DIR/n$i.log" >&2; return 1
    fi
    if ((SECONDS > deadline)); then echo "node n$i did not answer within $START_TIMEOUT s" >&2; return 1; fi
    sleep 0.3
  done
}

# stop_pid PID: SIGTERM, then SIGKILL after 40 s.
stop_pid() {
  local pid=$1 deadline=$((SECONDS + 40))
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then echo "node $pid did not stop; killing it" >&2; kill -KILL "$pid"; fi
    sleep 0.2
  done
}

up() {
  local n=${1:-3}
  [ -f "$JAR" ] || { echo "no $JAR: run make build" >&2; exit 1; }
  if ls "$RUN_DIR"/*.pid >/dev/null 2>&1; then
    echo "a cluster is already up (pid files in $RUN_DIR); run: make down" >&2
    exit 1
  fi
  mkdir -p "$RUN_DIR"
  if [ ! -s "$SECRET" ]; then
    (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$SECRET")
  fi
  for ((i = 0; i < n; i++)); do : >"$RUN_DIR/n$i.log"; launch "$i" "$n"; done
  for ((i = 0; i < n; i++)); do wait_for "$i" || { down; exit 1; }; done
  echo "kvlab cluster of $n nodes is up: $(seq -s, -f "http://127.0.0.1:%g" "$BASE_PORT" "$((BASE_PORT + n - 1))")"
  echo "data in $DATA_ROOT/n*, logs in $RUN_DIR/n*.log; stop it with: make down"
}

down() {
  local pids=()
  for f in "$RUN_DIR"/*.pid; do
    [ -e "$f" ] || continue
    local pid; pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; pids+=("$pid"); fi
    rm -f "$f"
  done
  for pid in "${pids[@]}"; do
    local deadline=$((SECONDS + 40))
    while kill -0 "$pid" 2>/dev/null; do
      if ((SECONDS > deadline)); then echo "node $pid did not stop; killing it" >&2; kill -KILL "$pid"; fi
      sleep 0.2
    done
  done
  echo "stopped ${#pids[@]} node(s)"
}

node_stop() {
  local f="$RUN_DIR/n$1.pid"
  [ -f "$f" ] || { echo "node n$1 is not running (no $f)" >&2; exit 1; }
  stop_pid "$(cat "$f")"
  rm -f "$f"
  echo "stopped node n$1"
}

node_start() {
  [ -f "$JAR" ] || { echo "no $JAR: run make build" >&2; exit 1; }
  [ -s "$SECRET" ] || { echo "no cluster secret in $SECRET: start the cluster with up first" >&2; exit 1; }
  [ ! -f "$RUN_DIR/n$1.pid" ] || { echo "node n$1 is running (pid $(cat "$RUN_DIR/n$1.pid"))" >&2; exit 1; }
  launch "$1" "$2"
  wait_for "$1" || { node_stop "$1"; exit 1; }
  echo "node n$1 is up: $(node_url "$1") (pid $(cat "$RUN_DIR/n$1.pid"))"
}

status() {
  for f in "$RUN_DIR"/*.pid; do
    [ -e "$f" ] || { echo "no cluster is up"; return; }
    local name; name=$(basename "$f" .pid)
    local i=${name#n}
    local state=down
    answers "$(node_url "$i")" && state=serving
    echo "$name pid $(cat "$f") $(node_url "$i") $state"
  done
}

case "${1:-}" in
  up) up "${2:-3}" ;;
  down) down ;;
  status) status ;;
  stop) node_stop "${2:?usage: $0 stop I}" ;;
  start) node_start "${2:?usage: $0 start I [N]}" "${3:-3}" ;;
  *) echo "usage: $0 up [N] | down | status | stop I | start I [N]" >&2; exit 2 ;;
esac
