#!/usr/bin/env bash
# A kvlab cluster of local processes on 127.0.0.1, one data directory and log per node.
#   local-cluster.sh up [N]      start N nodes (default 3) on ports BASE_PORT.. (default 8080)
#   local-cluster.sh down        stop them with SIGTERM (they drain and close RocksDB)
#   local-cluster.sh status      each node: serving or down, topology, hints, repair, handoff
#   local-cluster.sh repair      ask every node for a repair round with every peer now
#   local-cluster.sh stop I      stop node I alone (SIGTERM), as a node that fails; the others go on
#   local-cluster.sh start I     start node I again, on its data (its log is appended to)
#   local-cluster.sh backup [NAME]  back the whole cluster up now (asked of the first node that serves);
#                                its last line: `backup <name> in <where>`
#   local-cluster.sh backups     the complete backups in the target, newest first (the cluster may be down)
#   local-cluster.sh restore NAME|latest [N]  with every node down: restore each node's data dir
#                                DATA_ROOT/n0..n(N-1) (default 3) from the backup, then start N nodes
# Backups: BACKUP_TARGET, a directory every node sees (default ./backups, made absolute) or
# s3://bucket[/prefix] with S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY and S3_REGION (us-east-1), which
# the nodes and the restore get as KVLAB_BACKUP_S3_* in their environment. FORCE=1: a restore
# replaces a node's data that is there (without it, a data dir that holds data stops the restore).
# BACKUP_TIMEOUT: seconds `backup` waits for the backup to be complete (3600).
# Environment: JAVA (java binary), JAR, DATA_ROOT (./data), BASE_PORT (8080), JAVA_OPTS, START_TIMEOUT
# (seconds a node may take to answer, 60; more on a machine other work keeps busy),
# EVENT_LOOPS (Netty event loops per node) and STORAGE_THREADS (RocksDB threads per node): 1 each
# by default when several nodes share this machine's CPUs, the node's own defaults for a single node.
# MANAGEMENT_ADDRESS (127.0.0.1): the address each node's management port listens on; only this
# machine reaches it unless it is set to 0.0.0.0 or another interface.
# The nodes share the secret in DATA_ROOT/cluster-secret (made on the first `up`, kept with the data):
# only callers that hold it may speak the replica protocol. A node that runs out of heap exits
# (-XX:+ExitOnOutOfMemoryError) rather than serve on half-broken. Each node's actuator is on its
# client port + 1000 (the node's default management port): status and repair ask it there, through
# scripts/cluster-status.py (Python 3); a repair sends the cluster secret as its credential
# (Authorization: Bearer), which every state-changing call on a management port needs.
# TLS=1: the nodes speak the replica protocol over mutual TLS on ports of their own (client port +
# 2000), with a throwaway CA and certificate made by scripts/local-tls.sh in DATA_ROOT/tls (kept with
# the data). The client port stays plain HTTP.
set -euo pipefail

JAVA=${JAVA:-java}
JAR=${JAR:-service/target/kvlab-service.jar}
DATA_ROOT=${DATA_ROOT:-./data}
BASE_PORT=${BASE_PORT:-8080}
JAVA_OPTS=${JAVA_OPTS:-}
EVENT_LOOPS=${EVENT_LOOPS:-}
STORAGE_THREADS=${STORAGE_THREADS:-}
START_TIMEOUT=${START_TIMEOUT:-60}
MANAGEMENT_ADDRESS=${MANAGEMENT_ADDRESS:-127.0.0.1}
RUN_DIR="$DATA_ROOT/run"
SECRET="$DATA_ROOT/cluster-secret"
# The client URLs of the nodes `up` started, one a line: status and repair find them there, whatever
# BASE_PORT is when they run.
NODES_FILE="$RUN_DIR/nodes"
MANAGEMENT_OFFSET=1000
TLS=${TLS:-}
REPLICA_OFFSET=2000
TLS_DIR="$DATA_ROOT/tls"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BACKUP_TARGET=${BACKUP_TARGET:-./backups}
BACKUP_TIMEOUT=${BACKUP_TIMEOUT:-3600}
FORCE=${FORCE:-}

# The target as the nodes get it: a directory made absolute (the nodes and a restore agree on it
# whatever their working directory), an s3:// URL as it is; its credentials go in the environment,
# not on the command line, where `ps` would show them.
case "$BACKUP_TARGET" in
  s3://*)
    export KVLAB_BACKUP_S3_ENDPOINT=${S3_ENDPOINT:-} KVLAB_BACKUP_S3_REGION=${S3_REGION:-us-east-1}
    export KVLAB_BACKUP_S3_ACCESSKEY=${S3_ACCESS_KEY:-} KVLAB_BACKUP_S3_SECRETKEY=${S3_SECRET_KEY:-}
    ;;
  /*) ;;
  *) BACKUP_TARGET="$(pwd)/${BACKUP_TARGET#./}" ;;
esac

node_url() { echo "http://127.0.0.1:$((BASE_PORT + $1))"; }

# The URL of node i of the cluster that is up: as `up` wrote it down, else from BASE_PORT.
started_url() {
  local url=""
  [ -f "$NODES_FILE" ] && url=$(sed -n "$(($1 + 1))p" "$NODES_FILE")
  echo "${url:-$(node_url "$1")}"
}

management_url() {
  local url=$1 port=${1##*:}
  echo "${url%:*}:$((port + MANAGEMENT_OFFSET))"
}

answers() { curl -fsS -o /dev/null --max-time 1 "$1/v0/status" 2>/dev/null; }

# replica_urls NODES: the nodes' replica URLs under TLS=1 (https, client port + REPLICA_OFFSET), comma-separated.
replica_urls() {
  local url out=""
  for url in ${1//,/ }; do out+="${out:+,}https://127.0.0.1:$((${url##*:} + REPLICA_OFFSET))"; done
  echo "$out"
}

# launch I NODES LOG_MODE: starts node I of the cluster NODES (its client URLs, comma-separated) in
# the background, its log truncated (>) or appended to (>>), and writes its pid file.
launch() {
  local i=$1 nodes=$2 mode=$3 n url port log="$RUN_DIR/n$1.log"
  n=$(tr , '\n' <<<"$nodes" | wc -l)
  url=$(cut -d, -f"$((i + 1))" <<<"$nodes")
  port=${url##*:}
  local loops=${EVENT_LOOPS:-$((n > 1 ? 1 : 0))} storage=${STORAGE_THREADS:-$((n > 1 ? 1 : 0))}
  if answers "$url"; then echo "port $port is taken by a running node" >&2; return 1; fi
  [ "$mode" = ">>" ] || : >"$log"
  local peers=(--kvlab.cluster.nodes="$nodes" --kvlab.cluster.self="$url")
  if [ -n "$TLS" ]; then
    # The topology names the replica ports, over https; the bundle is read again if its files change.
    peers=(--kvlab.cluster.nodes="$(replica_urls "$nodes")"
      --kvlab.cluster.self="https://127.0.0.1:$((port + REPLICA_OFFSET))" --kvlab.replication.port="$((port + REPLICA_OFFSET))"
      --kvlab.tls.replica-bundle=kvlab --spring.ssl.bundle.pem.kvlab.reload-on-update=true
      --spring.ssl.bundle.pem.kvlab.keystore.certificate="$TLS_DIR/tls.crt"
      --spring.ssl.bundle.pem.kvlab.keystore.private-key="$TLS_DIR/tls.key"
      --spring.ssl.bundle.pem.kvlab.truststore.certificate="$TLS_DIR/ca.crt")
  fi
  # shellcheck disable=SC2086 # JAVA_OPTS holds several options
  nohup "$JAVA" -XX:+ExitOnOutOfMemoryError $JAVA_OPTS -jar "$JAR" --server.port="$port" --kvlab.storage.dir="$DATA_ROOT/n$i" \
    "${peers[@]}" --kvlab.cluster.secret-file="$SECRET" \
    --kvlab.netty.event-loops="$loops" --kvlab.storage.threads="$storage" --management.server.address="$MANAGEMENT_ADDRESS" \
    --kvlab.backup.target="$BACKUP_TARGET" >>"$log" 2>&1 &
  echo $! >"$RUN_DIR/n$i.pid"
}

# await I: waits until node I answers (START_TIMEOUT s at most); 1 when it exited or did not answer, with why.
await() {
  local i=$1 url deadline=$((SECONDS + START_TIMEOUT))
  url=$(started_url "$i")
  until answers "$url"; do
    if ! kill -0 "$(cat "$RUN_DIR/n$i.pid")" 2>/dev/null; then
      echo "node n$i exited; its log:" >&2; tail -20 "$RUN_DIR/n$i.log" >&2; return 1
    fi
    if ((SECONDS > deadline)); then echo "node n$i did not answer within $START_TIMEOUT s (START_TIMEOUT)" >&2; return 1; fi
    sleep 0.3
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
  [ -z "$TLS" ] || "$HERE/local-tls.sh" "$TLS_DIR"
  local nodes=""
  for ((i = 0; i < n; i++)); do nodes+="${nodes:+,}$(node_url "$i")"; done
  tr , '\n' <<<"$nodes" >"$NODES_FILE"
  for ((i = 0; i < n; i++)); do
    launch "$i" "$nodes" ">" || { down; exit 1; }
  done
  for ((i = 0; i < n; i++)); do
    await "$i" || { down; exit 1; }
  done
  echo "kvlab cluster of $n nodes is up: $nodes"
  echo "data in $DATA_ROOT/n*, logs in $RUN_DIR/n*.log; stop it with: make down"
}

# The node number I of a cluster that is up, checked.
node_index() {
  local i=${1:-}
  [ -f "$NODES_FILE" ] || { echo "no cluster is up (no $NODES_FILE): run make up" >&2; exit 1; }
  if ! [[ "$i" =~ ^[0-9]+$ ]] || ((i >= $(wc -l <"$NODES_FILE"))); then
    echo "no node '$i' in the cluster: 0..$(($(wc -l <"$NODES_FILE") - 1))" >&2; exit 2
  fi
}

# stop I: SIGTERM to node I alone (it drains and closes RocksDB); its peers keep hints of what it misses.
stop_node() {
  node_index "$1"
  local pid; pid=$(cat "$RUN_DIR/n$1.pid" 2>/dev/null || true)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then echo "node n$1 is not running"; return; fi
  kill -TERM "$pid"
  local deadline=$((SECONDS + 40))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then echo "node n$1 did not stop; killing it" >&2; kill -KILL "$pid"; fi
    sleep 0.2
  done
  echo "stopped node n$1 (pid $pid); start it again with: make start-node NODE=$1"
}

# start I: starts node I of the cluster that is up again, on its data, with the same node list.
start_node() {
  node_index "$1"
  local pid; pid=$(cat "$RUN_DIR/n$1.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "node n$1 runs already (pid $pid)" >&2; exit 1; fi
  [ -f "$JAR" ] || { echo "no $JAR: run make build" >&2; exit 1; }
  launch "$1" "$(paste -sd, "$NODES_FILE")" ">>" || exit 1
  await "$1" || exit 1
  echo "node n$1 is up again: $(started_url "$1") (pid $(cat "$RUN_DIR/n$1.pid")); watch it catch up with: make status"
}

down() {
  local pids=()
  for f in "$RUN_DIR"/*.pid; do
    [ -e "$f" ] || continue
    local pid; pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; pids+=("$pid"); fi
    rm -f "$f"
  done
  rm -f "$NODES_FILE"
  for pid in "${pids[@]}"; do
    local deadline=$((SECONDS + 40))
    while kill -0 "$pid" 2>/dev/null; do
      if ((SECONDS > deadline)); then echo "node $pid did not stop; killing it" >&2; kill -KILL "$pid"; fi
      sleep 0.2
    done
  done
  echo "stopped ${#pids[@]} node(s)"
}

# The nodes with a pid file, as arguments of scripts/cluster-status.py: --node NAME URL MANAGEMENT PID.
node_args() {
  local f name i url files
  [ -n "$(compgen -G "$RUN_DIR/n*.pid")" ] || return 1
  mapfile -t files < <(printf '%s\n' "$RUN_DIR"/n*.pid | sort -V)
  for f in "${files[@]}"; do
    name=$(basename "$f" .pid)
    i=${name#n}
    url=$(started_url "$i")
    printf '%s\n' --node "$name" "$url" "$(management_url "$url")" "$(cat "$f")"
  done
}

status() {
  local args
  if ! args=$(node_args); then echo "no cluster is up (no pid files in $RUN_DIR)"; return; fi
  mapfile -t args <<<"$args"
  python3 "$HERE/cluster-status.py" "${args[@]}"
}

repair() {
  local args
  if ! args=$(node_args); then echo "no cluster is up (no pid files in $RUN_DIR)" >&2; exit 1; fi
  mapfile -t args <<<"$args"
  python3 "$HERE/cluster-status.py" --repair --token-file "$SECRET" "${args[@]}"
}

backup() {
  local args
  if ! args=$(node_args); then echo "no cluster is up (no pid files in $RUN_DIR): run make up" >&2; exit 1; fi
  mapfile -t args <<<"$args"
  local name=()
  [ -z "${1:-}" ] || name=("$1")
  python3 "$HERE/cluster-status.py" --backup "${name[@]}" --backup-timeout "$BACKUP_TIMEOUT" --token-file "$SECRET" "${args[@]}"
}

backups() {
  [ -f "$JAR" ] || { echo "no $JAR: run make build" >&2; exit 1; }
  "$JAVA" -jar "$JAR" backups --kvlab.backup.target="$BACKUP_TARGET"
}

# restore NAME N: every node down, each data dir DATA_ROOT/n<i> (i < N) restored as node i of N, then
# the cluster started. A restore verifies every file before it touches the data dir, so a node whose
# restore fails keeps its old data; the nodes restored before it are said.
restore() {
  local name=${1:-} n=${2:-3} f pid restored=()
  if [ -z "$name" ]; then echo "which backup? restore NAME|latest [N] (make backups lists them)" >&2; exit 2; fi
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then echo "N must be a number of nodes, 1 or more: '$n'" >&2; exit 2; fi
  [ -f "$JAR" ] || { echo "no $JAR: run make build" >&2; exit 1; }
  for f in "$RUN_DIR"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      echo "node $(basename "$f" .pid) runs (pid $pid): a restore replaces the nodes' data, so stop the cluster first: make down" >&2
      exit 1
    fi
  done
  local force=()
  case "$FORCE" in 1 | yes | true) force=(--force) ;; esac
  for ((i = 0; i < n; i++)); do
    echo "restoring node n$i of $n from backup $name in $BACKUP_TARGET into $DATA_ROOT/n$i"
    local rc=0
    "$JAVA" -jar "$JAR" restore --backup="$name" --data="$DATA_ROOT/n$i" --nodes="$n" --index="$i" "${force[@]}" \
      --kvlab.backup.target="$BACKUP_TARGET" || rc=$?
    if ((rc != 0)); then
      case $rc in
        3) echo "n$i holds data: restore it over that data with FORCE=1 (make restore BACKUP=$name FORCE=1)" >&2 ;;
        4) echo "n$i: the backup's files do not match its manifest; n$i's data was left as it was" >&2 ;;
      esac
      echo "the restore stopped at n$i (exit $rc)${restored[*]:+; restored already: ${restored[*]}}; the cluster was not started" >&2
      exit "$rc"
    fi
    restored+=("n$i")
  done
  if compgen -G "$DATA_ROOT/n*" >/dev/null; then
    local d extra=()
    for d in "$DATA_ROOT"/n*; do
      [[ "$(basename "$d")" =~ ^n([0-9]+)$ ]] && ((BASH_REMATCH[1] >= n)) && extra+=("$d")
    done
    [ ${#extra[@]} -eq 0 ] || echo "note: ${extra[*]} belong to no node of a cluster of $n; they are left as they are"
  fi
  up "$n"
}

case "${1:-}" in
  up) up "${2:-3}" ;;
  backup) backup "${2:-}" ;;
  backups) backups ;;
  restore) restore "${2:-}" "${3:-3}" ;;
  down) down ;;
  status) status ;;
  repair) repair ;;
  stop) stop_node "${2:-}" ;;
  start) start_node "${2:-}" ;;
  *) echo "usage: $0 up [N] | down | status | repair | stop I | start I | backup [NAME] | backups | restore NAME|latest [N]" >&2; exit 2 ;;
esac
