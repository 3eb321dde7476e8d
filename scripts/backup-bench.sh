#!/usr/bin/env bash
# `make lab-backup-bench`: what a backup and a restore cost, on a local cluster of NODES nodes of its own
# (127.0.0.1:BASE_PORT.., data in DATA_ROOT) over KEYS keys of VALUE_SIZE bytes, filled once at
# NODES/NODES (kept for the next run with KEEP_DATA=1):
#   full         the first backup into an empty target (POST /actuator/kvlab/backup): its time, bytes,
#                keys/s and MiB/s, as the node answers them
#   incremental  a second backup right after, nothing written between: what it uploads again (the
#                files of the first are in the target already) and how long it takes
#   disk         the nodes' data on disk, the target on disk (a directory target), and what the
#                backup leaves in the nodes' storage dirs after it (its checkpoints are deleted)
#   restore      the cluster stopped, each node's data moved aside, each restored from the full backup
#                (`java -jar kvlab-service.jar restore`, one node after the other, as make restore):
#                its time, keys/s and MiB/s; then the nodes started on it and SAMPLE keys read back
#                (every one must answer 200 with the value's size)
# Everything goes to OUT (reports/<timestamp>-backup-bench): results.jsonl (a line per measurement),
# summary.txt, the nodes' logs and the restores' output.
# Knobs (environment): KEYS (1000000), VALUE_SIZE (100), NODES (1), SAMPLE (200), BASE_PORT (18720),
# DATA_ROOT (/tmp/kvlab-backup-bench), BACKUP_TARGET ($DATA_ROOT/backups; s3://bucket/prefix with
# S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY), KEEP_DATA=1 (keep the filled data and reuse it),
# LAB_JAVA_OPTS (-Xmx512m), JAR (service/target/kvlab-service.jar).
set -euo pipefail
cd "$(dirname "$0")/.."

KEYS=${KEYS:-1000000}
VALUE_SIZE=${VALUE_SIZE:-100}
NODES=${NODES:-1}
SAMPLE=${SAMPLE:-200}
BASE_PORT=${BASE_PORT:-18720}
DATA_ROOT=${DATA_ROOT:-/tmp/kvlab-backup-bench}
LAB_JAVA_OPTS=${LAB_JAVA_OPTS:--Xmx512m}
JAR=${JAR:-service/target/kvlab-service.jar}
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
K6=${K6:-.tools/bin/k6}
OUT=${OUT:-reports/$(date +%Y%m%d-%H%M%S)-backup-bench}
mkdir -p "$DATA_ROOT"
DATA_ROOT=$(cd "$DATA_ROOT" && pwd)
BACKUP_TARGET=${BACKUP_TARGET:-$DATA_ROOT/backups}
KEY_PREFIX=k
export JAVA DATA_ROOT BASE_PORT BACKUP_TARGET
export START_TIMEOUT=${START_TIMEOUT:-300}

say() { printf '[backup-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in curl jq "$JAVA" "$K6"; do
  command -v "$tool" >/dev/null || die "no $tool: run make lab-tools (and make build)"
done
[ -f "$JAR" ] || die "no $JAR: run make build"
[[ $KEYS =~ ^[0-9]+$ && $NODES =~ ^[1-9][0-9]*$ && $SAMPLE =~ ^[0-9]+$ ]] || die "KEYS, NODES and SAMPLE must be numbers"
mkdir -p "$OUT" "$DATA_ROOT/jars"
OUT=$(cd "$OUT" && pwd)
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
# A private copy of the jar: a rebuild meanwhile cannot pull it away from under a running node.
cp "$JAR" "$DATA_ROOT/jars/bench.jar"

cluster() { JAR="$DATA_ROOT/jars/bench.jar" JAVA_OPTS="$LAB_JAVA_OPTS" scripts/local-cluster.sh "$@" >&2; }
running() { ls "$DATA_ROOT"/run/n*.pid >/dev/null 2>&1; }
stop_cluster() { if running; then cluster down; fi; }
url() { echo "http://127.0.0.1:$((BASE_PORT + $1))"; }
mgmt() { echo "http://127.0.0.1:$((BASE_PORT + 1000 + $1))"; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
record() { jq -cn "$@" >>"$RESULTS"; }
bytes_of() { if [ -e "$1" ]; then du -sb "$1" | cut -f1; else echo 0; fi; }
data_bytes() {
  local total=0 i
  for ((i = 0; i < NODES; i++)); do total=$((total + $(bytes_of "$DATA_ROOT/n$i"))); done
  echo "$total"
}

cleanup() {
  stop_cluster || true
  # The filled data goes back where the next run finds it.
  local i
  for ((i = 0; i < NODES; i++)); do
    if [ -d "$DATA_ROOT/filled/n$i" ]; then rm -rf "${DATA_ROOT:?}/n$i"; mv "$DATA_ROOT/filled/n$i" "$DATA_ROOT/n$i"; fi
  done
  cp "$DATA_ROOT"/run/n*.log "$OUT/" 2>/dev/null || true
  if [ -z "${KEEP_DATA:-}" ]; then rm -rf "${DATA_ROOT:?}"; fi
}
trap cleanup EXIT

fill() {
  if [ -f "$DATA_ROOT/filled-$NODES-$KEYS-$VALUE_SIZE" ]; then
    say "reusing the $KEYS keys of $VALUE_SIZE bytes in $DATA_ROOT"
    return
  fi
  rm -rf "${DATA_ROOT:?}"/n* "$DATA_ROOT/run" "$DATA_ROOT/cluster-secret" "$DATA_ROOT"/filled-*
  cluster up "$NODES"
  local t0 targets
  t0=$(now)
  targets=$(for ((i = 0; i < NODES; i++)); do url "$i"; done | paste -sd,)
  say "filling $KEYS keys of $VALUE_SIZE bytes at $NODES/$NODES (k6, 16 VUs x 8 requests)"
  TARGETS=$targets KEYS=$KEYS KEY_PREFIX=$KEY_PREFIX VALUE_SIZE=$VALUE_SIZE REPLICAS=$NODES/$NODES FILL_VUS=16 BATCH=8 \
    FILL_MAX_DURATION=60m SUMMARY_JSON="$OUT/fill.json" "$K6" run --no-usage-report --no-color --quiet \
    loadtests/k6/fill.js >"$OUT/fill.log" 2>&1 || say "k6 exited with $?: see $OUT/fill.log"
  jq -e --argjson keys "$KEYS" '.status_counts["201"] == $keys' "$OUT/fill.json" >/dev/null ||
    die "the fill did not store every key: $(jq -c .status_counts "$OUT/fill.json")"
  say "filled in $(calc "$(now) - $t0") s"
  record --arg t "$(calc "$(now) - $t0")" --argjson keys "$KEYS" --argjson value "$VALUE_SIZE" \
    '{part: "fill", keys: $keys, value_size: $value, seconds: ($t | tonumber)}'
  cluster down
  touch "$DATA_ROOT/filled-$NODES-$KEYS-$VALUE_SIZE"
}

# backup PART: a whole backup asked of node 0; its answer as a line of results.jsonl.
backup() {
  local part=$1 t0 answer
  t0=$(now)
  answer=$(curl -fsS --max-time 3600 -X POST -H "Authorization: Bearer $(cat "$DATA_ROOT/cluster-secret")" \
    -H 'Content-Type: application/json' -d '{}' "$(mgmt 0)/actuator/kvlab/backup") || die "the $part backup failed"
  local wall; wall=$(calc "$(now) - $t0")
  jq -c --arg part "$part" --argjson wall "$wall" \
    '{part: $part, backup, wall_s: $wall, seconds: (.durationMillis / 1000), keys, bytes, uploadedBytes,
      nodes: [.nodes[] | {index, keys, bytes, uploadedBytes, files, seconds: (.durationMillis / 1000)}],
      keys_per_s: (.keys / ([.durationMillis, 1] | max) * 1000),
      mib_per_s: (.bytes / 1048576 / ([.durationMillis, 1] | max) * 1000)}' <<<"$answer" >>"$RESULTS"
  say "$part backup: $(jq -r '"\(.backup): \(.durationMillis) ms, \(.bytes) bytes, \(.uploadedBytes) uploaded, \(.keys) keys"' <<<"$answer")"
  jq -r .backup <<<"$answer"
}

rm -rf "${BACKUP_TARGET:?}" 2>/dev/null || true
case "$BACKUP_TARGET" in s3://*) say "an S3 target is not emptied first: use a prefix of its own" ;; esac
fill
stop_cluster
cluster up "$NODES"
before=$(data_bytes)
full=$(backup full)
backup incremental >/dev/null
after=$(data_bytes)
# What the backups left in the storage dirs besides the store (their checkpoints are to be deleted).
left=$(for ((i = 0; i < NODES; i++)); do (cd "$DATA_ROOT/n$i" && find . -mindepth 1 -maxdepth 1 -type d); done | sort -u | paste -sd, -)
target_bytes=null
case "$BACKUP_TARGET" in s3://*) ;; *) target_bytes=$(bytes_of "$BACKUP_TARGET") ;; esac
record --argjson data "$before" --argjson after "$after" --argjson target "$target_bytes" --arg left "$left" \
  '{part: "disk", data_bytes: $data, data_bytes_after_backups: $after, target_bytes: $target,
    dirs_in_storage_after_backups: ($left | split(",") | map(select(. != "")))}'
cluster down

# The filled data aside, each node restored into an empty dir, one after the other.
mkdir -p "$DATA_ROOT/filled"
for ((i = 0; i < NODES; i++)); do mv "$DATA_ROOT/n$i" "$DATA_ROOT/filled/n$i"; done
total=0 restored=0
for ((i = 0; i < NODES; i++)); do
  t0=$(now)
  "$JAVA" -jar "$DATA_ROOT/jars/bench.jar" restore --backup="$full" --data="$DATA_ROOT/n$i" --nodes="$NODES" --index="$i" \
    --kvlab.backup.target="$BACKUP_TARGET" >"$OUT/restore-n$i.log" 2>&1 || die "the restore of n$i failed: see $OUT/restore-n$i.log"
  took=$(calc "$(now) - $t0")
  total=$(calc "$total + $took")
  restored=$((restored + $(bytes_of "$DATA_ROOT/n$i")))
  record --argjson node "$i" --argjson s "$took" --argjson bytes "$(bytes_of "$DATA_ROOT/n$i")" \
    '{part: "restore-node", node: $node, seconds: $s, bytes: $bytes}'
  say "restored n$i in $took s"
done
t0=$(now)
cluster up "$NODES"
started=$(calc "$(now) - $t0")
# SAMPLE keys spread over the key space, each read back at 1/N from node 0.
missing=0
for ((j = 0; j < SAMPLE; j++)); do
  k=$(printf '%s%010d' "$KEY_PREFIX" $(((j * 7919 + 13) % KEYS)))
  size=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "$(url 0)/v0/entity?id=$k&replicas=1/$NODES" || true)
  [ "$size" = "200 $VALUE_SIZE" ] || { missing=$((missing + 1)); say "key $k: $size"; }
done
record --argjson s "$total" --argjson start "$started" --argjson keys "$KEYS" --argjson bytes "$restored" \
  --argjson sample "$SAMPLE" --argjson missing "$missing" \
  '{part: "restore", seconds: $s, start_s: $start, keys_per_s: ($keys / $s), bytes: $bytes,
    mib_per_s: ($bytes / 1048576 / $s), sample: $sample, sample_missing: $missing}'
cluster down

jq -rs --arg nodes "$NODES" --arg keys "$KEYS" --arg value "$VALUE_SIZE" '
  (map(select(.part == "full"))[0]) as $f | (map(select(.part == "incremental"))[0]) as $i |
  (map(select(.part == "disk"))[0]) as $d | (map(select(.part == "restore"))[0]) as $r |
  def mib: . / 1048576 * 10 | round / 10;
  "\($keys) keys of \($value) bytes on \($nodes) node(s)",
  "full backup:        \($f.seconds) s, \($f.bytes | mib) MiB, \($f.keys_per_s | round) keys/s, \($f.mib_per_s * 10 | round / 10) MiB/s",
  "incremental backup: \($i.seconds) s, \($i.uploadedBytes | mib) MiB uploaded of \($i.bytes | mib) MiB",
  "restore:            \($r.seconds * 10 | round / 10) s, \($r.keys_per_s | round) keys/s, \($r.mib_per_s * 10 | round / 10) MiB/s; nodes serving \($r.start_s) s later; \($r.sample_missing) of \($r.sample) sampled keys missing",
  "disk:               data \($d.data_bytes | mib) MiB; target \(if $d.target_bytes then ($d.target_bytes | mib | tostring) + " MiB (both backups)" else "(S3: see the backup bytes)" end); data after the backups \($d.data_bytes_after_backups | mib) MiB; dirs beside the store after them: \($d.dirs_in_storage_after_backups | join(", ") | if . == "" then "none" else . end)"
' "$RESULTS" | tee "$OUT/summary.txt"
say "results in $OUT"
missing=$(jq -s 'map(select(.part == "restore"))[0].sample_missing' "$RESULTS")
[ "$missing" = 0 ] || die "$missing sampled keys were not read back after the restore"
