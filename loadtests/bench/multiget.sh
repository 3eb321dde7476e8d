#!/usr/bin/env bash
# The multi-get benchmark: keys read per second of the node's CPU, by multi-gets of MULTIGET_SIZE
# keys against the same keys fetched by single GETs. Starts ONE node of its own (-Xmx512m) on PORT,
# fills KEYS keys of VALUE_SIZE bytes (k6 fill.js), then for each mode (get, multiget) a warm-up of
# WARMUP and a measured run of DURATION with VUS closed-model users (multiget.js). For each run: the
# keys answered, the node's CPU time (utime+stime of /proc/PID/stat over the run), keys/s and keys
# per CPU-second of the node. The load generator shares the machine: compare keys per CPU-second,
# not keys/s alone. Stops the node at the end; the data directory is a temporary one.
#
#   PORT=23005 KEYS=50000 VALUE_SIZE=1024 MULTIGET_SIZE=100 VUS=8 DURATION=30s loadtests/bench/multiget.sh
#   (build the jar first: make build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PORT=${PORT:-23005}
KEYS=${KEYS:-50000}
VALUE_SIZE=${VALUE_SIZE:-1024}
MULTIGET_SIZE=${MULTIGET_SIZE:-100}
# At most kvlab.api.multi-key.max-concurrent-requests (8) multi-gets at once: more get 503.
VUS=${VUS:-8}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-20s}
JAVA=${JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}
JAR=${JAR:-$ROOT/service/target/kvlab-service.jar}
K6=${K6:-$(command -v k6 || echo "$ROOT/.tools/bin/k6")}
[ -f "$JAR" ] || { echo "no $JAR: make build first" >&2; exit 1; }
[ -x "$K6" ] || { echo "no k6 at $K6 (make lab-tools, or K6=...)" >&2; exit 1; }

WORK=$(mktemp -d)
"$JAVA" -Xmx512m -XX:+ExitOnOutOfMemoryError -jar "$JAR" --server.port="$PORT" --management.server.port=$((PORT + 1000)) \
    --management.server.address=127.0.0.1 --kvlab.storage.dir="$WORK/data" > "$WORK/node.log" 2>&1 &
NODE=$!
trap 'kill "$NODE" 2>/dev/null; wait "$NODE" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$PORT/v0/status" > /dev/null && break
    sleep 0.5
done
curl -fs "http://127.0.0.1:$PORT/v0/status" > /dev/null || { echo "the node did not start: $WORK/node.log" >&2; tail -20 "$WORK/node.log" >&2; exit 1; }

echo "fill: $KEYS keys of $VALUE_SIZE bytes"
TARGETS="http://127.0.0.1:$PORT" KEYS=$KEYS VALUE_SIZE=$VALUE_SIZE KEY_PREFIX=k SUMMARY_JSON="$WORK/fill.json" \
    KVLAB_DEFAULTS="$ROOT/loadtests/lab/defaults.env" "$K6" run --quiet "$ROOT/loadtests/k6/fill.js" > "$WORK/fill.log" 2>&1

cpu_ticks() { awk '{print $14 + $15}' "/proc/$NODE/stat"; }
TICKS=$(getconf CLK_TCK)

run() {  # mode duration summary
    MODE=$1 DURATION=$2 TARGET="http://127.0.0.1:$PORT" KEYS=$KEYS MULTIGET_SIZE=$MULTIGET_SIZE VUS=$VUS KEY_PREFIX=k \
        SUMMARY_JSON=$3 "$K6" run --quiet "$ROOT/loadtests/bench/multiget.js" > "$WORK/k6-$1.log" 2>&1
}

printf '%-9s %9s %8s %10s %12s %14s %9s %9s\n' mode requests failed keys/s node-cpu-s keys/cpu-s p50-ms p99-ms
for mode in get multiget; do
    run "$mode" "$WARMUP" "$WORK/warm-$mode.json"
    before=$(cpu_ticks)
    run "$mode" "$DURATION" "$WORK/$mode.json"
    after=$(cpu_ticks)
    python3 - "$WORK/$mode.json" "$before" "$after" "$TICKS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print(f"{r['mode']:<9} {r['requests']:>9} {r['failed']:>8} {r['keys'] / r['duration_s']:>10.0f} {cpu:>12.1f} "
      f"{r['keys'] / cpu if cpu else float('nan'):>14.0f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f}")
PY
done
