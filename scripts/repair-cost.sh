#!/usr/bin/env bash
# `make lab-repair-cost`: what anti-entropy repair costs, on a local cluster of three nodes of its own
# (127.0.0.1:BASE_PORT.., data in DATA_ROOT) over KEYS keys of VALUE_SIZE bytes, filled once at 3/3:
#   refill      a node's volume wiped: stop node 2, delete its data, start it, ask it for repair
#               (POST /actuator/kvlab/repair), and time until it has received every record
#               (kvlab_repair_records_total{direction="received"}) and a round with each peer has
#               completed since it answered (/actuator/kvlab); keys/s, MiB/s of records, and the
#               CPU of all nodes per key received. With the default limits and with RAISED ones.
#   steady      one round of node 0 with each peer where nothing differs (both hash every key):
#               the CPU of all nodes (/proc/<pid>/stat, less what they burn idle) per key and round.
#   foreground  GET and PUT at 2/3 at a fixed rate (GET_RATE, PUT_RATE; paced wrk, one per node, by
#               the load lab) with repair rounds running all the time (ON: interval 1s) against
#               repair off (OFF: kvlab.heal.repair.enabled=false), arms alternated, each on a
#               cluster started afresh on the same data, after WARMUP of the same load. ARMS ("on off")
#               may name more arms, each with its node options in ARM_<name>, as
#               ARMS="on fast off" ARM_fast="-Dkvlab.heal.repair.interval=1s -Dkvlab.heal.repair.scan-rate=200000".
# With JAR_BASE=<another build's jar> every configuration with repair runs with both jars, alternated,
# so a change is measured against its base in the same run.
# Everything goes to OUT (reports/<timestamp>-repair-cost): results.jsonl (a line per measurement),
# summary.json (medians and ratios), summary.md (the first screen: each target, its figure, met or
# not; lab/repair_cost_summary.py), the lab's run directories and the nodes' logs (logs/, each foreground
# arm's as foreground-ARM-BUILD-RUN-n<i>.log: why a round scanned or the hashes were built anew).
# Knobs (environment): KEYS (1000000), VALUE_SIZE (100), RUNS (2), PARTS ("refill steady foreground"),
# GET_RATE (6000), PUT_RATE (8000), DURATION (30s), WARMUP (60s), BASE_PORT (18700), DATA_ROOT
# (/tmp/kvlab-repair-cost), KEEP_DATA=1 (keep it, and reuse a filled one next time), LAB_JAVA_OPTS
# (-Xmx512m), RAISED, ON, OFF (node options), JAR (service/target/kvlab-service.jar), JAR_BASE.
# shellcheck disable=SC2016 # the jq programs' $names are jq's, in single quotes on purpose
set -euo pipefail
cd "$(dirname "$0")/.."

KEYS=${KEYS:-1000000}
VALUE_SIZE=${VALUE_SIZE:-100}
RUNS=${RUNS:-2}
PARTS=${PARTS:-refill steady foreground}
GET_RATE=${GET_RATE:-6000}
PUT_RATE=${PUT_RATE:-8000}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-60s}
BASE_PORT=${BASE_PORT:-18700}
DATA_ROOT=${DATA_ROOT:-/tmp/kvlab-repair-cost}
LAB_JAVA_OPTS=${LAB_JAVA_OPTS:--Xmx512m}
RAISED=${RAISED:--Dkvlab.heal.repair.rate=1GB -Dkvlab.heal.repair.scan-rate=100000000}
ON=${ON:--Dkvlab.heal.repair.interval=1s}
OFF=${OFF:--Dkvlab.heal.repair.enabled=false}
ARMS=${ARMS:-on off}
ARM_on=${ARM_on:-$ON}
ARM_off=${ARM_off:-$OFF}
JAR=${JAR:-service/target/kvlab-service.jar}
JAR_BASE=${JAR_BASE:-}
JAVA=${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/}java}
LAB_PY=${LAB_PY:-.tools/venv/bin/python}
K6=${K6:-.tools/bin/k6}
OUT=${OUT:-reports/$(date +%Y%m%d-%H%M%S)-repair-cost}
# Bytes of a record besides its value (storage.Record.HEADER_BYTES): what the repair rate counts.
HEADER_BYTES=13
NODES=3
export PYTHONPATH=$PWD/loadtests JAVA DATA_ROOT BASE_PORT
# A shared machine can take minutes to start a JVM.
export START_TIMEOUT=${START_TIMEOUT:-300}

say() { printf '[repair-cost %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in curl jq "$JAVA" "$LAB_PY" "$K6"; do
  command -v "$tool" >/dev/null || die "no $tool: run make lab-tools (and make build)"
done
[ -f "$JAR" ] || die "no $JAR: run make build"
[[ $KEYS =~ ^[0-9]+$ && $RUNS =~ ^[0-9]+$ ]] || die "KEYS and RUNS must be numbers"
mkdir -p "$OUT" "$DATA_ROOT/jars"
OUT=$(cd "$OUT" && pwd)
RESULTS=$OUT/results.jsonl
: >"$RESULTS"

# Private copies of the jars: a rebuild meanwhile cannot pull one away from under a running node.
cp "$JAR" "$DATA_ROOT/jars/head.jar"
jars=(head)
if [ -n "$JAR_BASE" ]; then
  cp "$JAR_BASE" "$DATA_ROOT/jars/base.jar"
  jars+=(base)
fi

# cluster JAR_NAME "NODE OPTIONS" ARGS...: scripts/local-cluster.sh on our ports and data.
cluster() {
  local jar=$1 opts=$2
  shift 2
  JAR="$DATA_ROOT/jars/$jar.jar" JAVA_OPTS="$LAB_JAVA_OPTS $opts" scripts/local-cluster.sh "$@" >&2
}
running() { ls "$DATA_ROOT"/run/n*.pid >/dev/null 2>&1; }
# keep_logs [NAME]: the nodes' logs so far, as $OUT/logs/[NAME-]n<i>.log (the next cluster writes over them).
keep_logs() {
  local log
  mkdir -p "$OUT/logs"
  for log in "$DATA_ROOT"/run/n*.log; do
    [ -f "$log" ] && cp "$log" "$OUT/logs/${1:+$1-}$(basename "$log")"
  done
  return 0
}
stop_cluster() { if running; then cluster head "" down; fi; }
cleanup() {
  stop_cluster || true
  keep_logs
  [ -n "${KEEP_DATA:-}" ] || rm -rf "$DATA_ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

url() { echo "http://127.0.0.1:$((BASE_PORT + $1))"; }
mgmt() { echo "http://127.0.0.1:$((BASE_PORT + 1000 + $1))"; }
pids() { cat "$DATA_ROOT"/run/n*.pid; }
now() { date +%s.%N; }
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.%3NZ; }
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
# The CPU seconds the node processes used so far (user + system; /proc/<pid>/stat fields 14 and 15).
cpu_s() {
  local ticks=0 pid
  for pid in $(pids); do ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat"))); done
  calc "$ticks / $(getconf CLK_TCK)"
}
status() { curl -fsS --max-time 5 "$(mgmt "$1")/actuator/kvlab"; }
# metric NODE NAME{LABELS}: one sample of a node's /actuator/prometheus (0 when it has none).
metric() {
  curl -fsS --max-time 5 "$(mgmt "$1")/actuator/prometheus" |
    awk -v m="$2" 'index($0, m) == 1 { split($0, f, " "); v = f[2] } END { printf "%.0f\n", v + 0 }'
}
# A repair changes state: the node takes it with the cluster's secret as its credential, given to
# curl on its stdin rather than on a command line.
repair_now() {
  printf 'Authorization: Bearer %s\n' "$(cat "$DATA_ROOT/cluster-secret")" |
    curl -fsS --max-time 5 -X POST -H @- -H 'Content-Type: application/json' -d '{}' "$(mgmt "$1")/actuator/kvlab/repair" >/dev/null
}
record() { jq -cn "$@" >>"$RESULTS"; }

# Until no node runs a repair round and each has finished one with every peer (the rounds at start).
settle() {
  local deadline=$((SECONDS + 600)) i
  for ((i = 0; i < NODES; i++)); do
    until status "$i" | jq -e '[.repair.peers[] | (.running | not) and .lastRound != null] | all' >/dev/null; do
      ((SECONDS < deadline)) || die "node $i's repair rounds did not settle within 600 s"
      sleep 0.5
    done
  done
}

fill() {
  if [ -f "$DATA_ROOT/filled-$KEYS-$VALUE_SIZE" ]; then
    say "reusing the $KEYS keys of $VALUE_SIZE bytes in $DATA_ROOT"
    return
  fi
  rm -rf "${DATA_ROOT:?}"/n* "$DATA_ROOT/run" "$DATA_ROOT/cluster-secret"
  # A replica that answers a write late on a busy machine fails it at 3/3 (504): give it time.
  cluster head "-Dkvlab.replication.timeout=30s" up "$NODES"
  local t0 targets attempt
  t0=$(now)
  targets=$(for ((i = 0; i < NODES; i++)); do url "$i"; done | paste -sd,)
  for attempt in 1 2 3; do
    say "filling $KEYS keys of $VALUE_SIZE bytes at 3/3 (k6, 16 VUs x 8 requests), attempt $attempt"
    TARGETS=$targets KEYS=$KEYS VALUE_SIZE=$VALUE_SIZE REPLICAS=3/3 FILL_VUS=16 BATCH=8 FILL_MAX_DURATION=20m \
      SUMMARY_JSON="$OUT/fill.json" "$K6" run --no-usage-report --no-color --quiet loadtests/k6/fill.js >"$OUT/fill.log" 2>&1 ||
      say "k6 exited with $?: see $OUT/fill.log"
    if jq -e --argjson keys "$KEYS" '.status_counts["201"] == $keys' "$OUT/fill.json" >/dev/null; then break; fi
    say "the fill did not store every key at 3/3: $(jq -c .status_counts "$OUT/fill.json")"
    ((attempt < 3)) || die "three fills did not store every key at 3/3"
  done
  say "filled in $(calc "$(now) - $t0") s"
  record --arg t "$(calc "$(now) - $t0")" --argjson keys "$KEYS" --argjson value "$VALUE_SIZE" \
    '{part: "fill", keys: $keys, value_size: $value, seconds: ($t | tonumber)}'
  cluster head "" down
  touch "$DATA_ROOT/filled-$KEYS-$VALUE_SIZE"
}

# A cluster of JAR with LIMITS ("default" or "raised") on the filled data, its rounds at start done.
start() {
  local jar=$1 limits=$2 opts=""
  [ "$limits" = raised ] && opts=$RAISED
  stop_cluster
  cluster "$jar" "$opts" up "$NODES"
  settle
}

# steady JAR LIMITS: node 0's rounds with both peers when nothing differs, and the CPU they cost.
steady() {
  local jar=$1 limits=$2 c0 c1 t0 t1 idle
  c0=$(cpu_s); sleep 5; c1=$(cpu_s)
  idle=$(calc "($c1 - $c0) / 5")
  t0=$(now); c0=$(cpu_s)
  repair_now 0
  local deadline=$((SECONDS + 600)) st
  until st=$(status 0) && jq -e --arg t0 "$(iso "$t0")" \
    '[.repair.peers[] | (.running | not) and .lastRound != null and .lastRound.started >= $t0] | all' <<<"$st" >/dev/null; do
    ((SECONDS < deadline)) || die "node 0's rounds did not end within 600 s"
    sleep 0.2
  done
  t1=$(now); c1=$(cpu_s)
  local wall cpu net
  wall=$(calc "$t1 - $t0"); cpu=$(calc "$c1 - $c0"); net=$(calc "$cpu - $idle * $wall")
  say "steady ($jar, $limits limits): 2 rounds over $KEYS keys in $wall s, $cpu CPU s ($net above idle):" \
    "$(calc "$net * 1e6 / (2 * $KEYS)") us per key and round"
  record --arg jar "$jar" --arg limits "$limits" --argjson keys "$KEYS" --arg wall "$wall" --arg cpu "$cpu" \
    --arg idle "$idle" --arg net "$net" --argjson peers "$(jq -c '.repair.peers' <<<"$st")" \
    '{part: "steady", jar: $jar, limits: $limits, keys: $keys, rounds: 2, wall_s: ($wall | tonumber),
      cpu_s: ($cpu | tonumber), idle_cores: ($idle | tonumber), cpu_above_idle_s: ($net | tonumber),
      us_per_key_round: (($net | tonumber) * 1e6 / (2 * $keys)), peers: $peers}'
}

# refill JAR LIMITS: node 2 loses its volume and repair fills it again.
refill() {
  local jar=$1 limits=$2 opts="" wiped=2
  [ "$limits" = raised ] && opts=$RAISED
  cluster "$jar" "$opts" stop "$wiped"
  rm -rf "${DATA_ROOT:?}/n$wiped"
  local tl ta c0 r0
  tl=$(now)
  cluster "$jar" "$opts" start "$wiped"
  ta=$(now); c0=$(cpu_s)
  r0=$(metric "$wiped" 'kvlab_repair_records_total{application="kvlab",direction="received"}')
  repair_now "$wiped"
  local deadline=$((SECONDS + 1800)) received=0 t_rec="" c_rec="" t_done="" c_done="" st
  while [ -z "$t_done" ]; do
    ((SECONDS < deadline)) || die "node $wiped was not refilled within 1800 s (received $received of $KEYS)"
    received=$(metric "$wiped" 'kvlab_repair_records_total{application="kvlab",direction="received"}')
    if [ -z "$t_rec" ] && ((received >= KEYS)); then t_rec=$(now); c_rec=$(cpu_s); fi
    if [ -n "$t_rec" ] && st=$(status "$wiped") && jq -e --arg ta "$(iso "$ta")" \
      '[.repair.peers[] | .lastCompleteRoundStarted != null and .lastCompleteRoundStarted >= $ta] | all' <<<"$st" >/dev/null; then
      t_done=$(now); c_done=$(cpu_s)
    fi
    [ -n "$t_done" ] || sleep 0.25
  done
  local records_s done_s mib
  records_s=$(calc "$t_rec - $ta"); done_s=$(calc "$t_done - $ta")
  mib=$(calc "$received * ($VALUE_SIZE + $HEADER_BYTES) / 1048576")
  say "refill ($jar, $limits limits): $received records ($mib MiB) in $records_s s," \
    "$(calc "$received / $records_s") keys/s, $(calc "$mib / $records_s") MiB/s; rounds complete at $done_s s"
  record --arg jar "$jar" --arg limits "$limits" --argjson keys "$KEYS" --argjson received "$received" --argjson r0 "$r0" \
    --arg start "$(calc "$ta - $tl")" --arg rec "$records_s" --arg complete "$done_s" --arg mib "$mib" \
    --arg cpu_rec "$(calc "$c_rec - $c0")" --arg cpu_done "$(calc "$c_done - $c0")" \
    --argjson peers "$(jq -c '.repair.peers' <<<"$st")" \
    '{part: "refill", jar: $jar, limits: $limits, keys: $keys, received: $received,
      received_when_answering: $r0, node_start_s: ($start | tonumber), records_s: ($rec | tonumber),
      complete_s: ($complete | tonumber), keys_per_s: ($received / ($rec | tonumber)), mib: ($mib | tonumber),
      mib_per_s: (($mib | tonumber) / ($rec | tonumber)), cpu_s: ($cpu_rec | tonumber),
      cpu_to_complete_s: ($cpu_done | tonumber), us_per_key: (($cpu_rec | tonumber) * 1e6 / $received), peers: $peers}'
}

# The repair counters of all nodes together, as JSON.
counters() {
  local i rounds=0 failed=0 compared=0 sent=0 received=0
  for ((i = 0; i < NODES; i++)); do
    rounds=$((rounds + $(metric "$i" 'kvlab_repair_rounds_total{application="kvlab",outcome="complete"}')))
    failed=$((failed + $(metric "$i" 'kvlab_repair_rounds_total{application="kvlab",outcome="failed"}')))
    compared=$((compared + $(metric "$i" 'kvlab_repair_keys_compared_total{application="kvlab"}')))
    sent=$((sent + $(metric "$i" 'kvlab_repair_records_total{application="kvlab",direction="sent"}')))
    received=$((received + $(metric "$i" 'kvlab_repair_records_total{application="kvlab",direction="received"}')))
  done
  jq -cn --argjson r "$rounds" --argjson f "$failed" --argjson c "$compared" --argjson s "$sent" --argjson v "$received" \
    '{rounds_complete: $r, rounds_failed: $f, keys_compared: $c, records_sent: $s, records_received: $v}'
}

# foreground ARM JAR RUN: GET then PUT at 2/3 on a fresh cluster with the arm's options (ARM_<arm>).
foreground() {
  local arm=$1 jar=$2 run=$3 opts_var="ARM_$1"
  [ -n "${!opts_var+set}" ] || die "arm $arm has no options: set $opts_var"
  local opts=${!opts_var}
  stop_cluster
  cluster "$jar" "$opts" up "$NODES"
  local targets pidlist scenario rate name before after dir dirs
  targets=$(for ((i = 0; i < NODES; i++)); do url "$i"; done | paste -sd,)
  pidlist=$(pids | paste -sd,)
  for scenario in get put; do
    rate=$([ "$scenario" = get ] && echo "$GET_RATE" || echo "$PUT_RATE")
    name=repair-cost-$arm-$jar-$run-$scenario
    before=$(counters)
    say "foreground: repair $arm ($jar), run $run: $scenario at 2/3, $rate/s"
    KVLAB_LAB_INVOCATION="scripts/repair-cost.sh" "$LAB_PY" -m lab run --targets "$targets" --pids "$pidlist" --name "$name" --search none \
      --phases "$scenario" --rate "$rate" --duration "$DURATION" --warmup "$WARMUP" --keys "$KEYS" --value-size "$VALUE_SIZE" \
      --replicas 2/3 --tool wrk --events none --gate none --reports-dir "$OUT/lab" >"$OUT/lab-$name.log" 2>&1 ||
      die "the lab failed: see $OUT/lab-$name.log"
    after=$(counters)
    dirs=("$OUT"/lab/*-"$name")
    dir=${dirs[-1]}
    record --arg arm "$arm" --arg jar "$jar" --argjson run "$run" --arg dir "${dir#"$OUT"/}" \
      --argjson before "$before" --argjson after "$after" --slurpfile doc "$dir/run.json" \
      '($doc[0].phases | map(select(.warmup | not)) | last) as $p
       | {part: "foreground", arm: $arm, jar: $jar, run: $run, scenario: $p.scenario, dir: $dir,
          requested_rate: $p.result.requested_rate, achieved_rate: $p.result.achieved_rate,
          error_rate: $p.result.error_rate, latency_ms: $p.result.latency.all.percentiles,
          node_cores: ([$p.cpu.processes[].cores] | add), machine_busy_share: $p.cpu.machine_busy_share,
          repair: ($after | with_entries(.value -= $before[.key]))}'
    say "  p99 $(tail -n 1 "$RESULTS" | jq -r '.latency_ms.p99') ms, $(tail -n 1 "$RESULTS" | jq -r '.achieved_rate | floor')/s," \
      "repair meanwhile: $(tail -n 1 "$RESULTS" | jq -c '.repair')"
  done
  keep_logs "foreground-$arm-$jar-$run"
}

say "output in $OUT; nodes on 127.0.0.1:$BASE_PORT.. with data in $DATA_ROOT"
record --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" --arg jars "${jars[*]}" \
  --arg jar_base "$JAR_BASE" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg cores "$(nproc)" \
  --argjson keys "$KEYS" --argjson value "$VALUE_SIZE" --argjson runs "$RUNS" --arg parts "$PARTS" \
  --argjson get "$GET_RATE" --argjson put "$PUT_RATE" --arg duration "$DURATION" --arg warmup "$WARMUP" \
  --arg java_opts "$LAB_JAVA_OPTS" --arg raised "$RAISED" --arg arms "$ARMS" \
  --argjson arm_options "$(for arm in $ARMS; do v="ARM_$arm"; jq -cn --arg k "$arm" --arg v "${!v:-}" '{($k): $v}'; done | jq -cs add)" \
  '{part: "setup", commit: $commit, jars: ($jars | split(" ")), jar_base: $jar_base, loadavg: $load, cores: ($cores | tonumber),
    keys: $keys, value_size: $value, runs: $runs, parts: $parts, get_rate: $get, put_rate: $put, duration: $duration,
    warmup: $warmup, java_opts: $java_opts, raised: $raised, arms: ($arms | split(" ")), arm_options: $arm_options}'
fill

if [[ " $PARTS " == *" refill "* || " $PARTS " == *" steady "* ]]; then
  for ((run = 1; run <= RUNS; run++)); do
    for limits in default raised; do
      for jar in "${jars[@]}"; do
        start "$jar" "$limits"
        if [[ " $PARTS " == *" steady "* ]]; then steady "$jar" "$limits"; fi
        if [[ " $PARTS " == *" refill "* ]]; then refill "$jar" "$limits"; fi
      done
    done
  done
fi

if [[ " $PARTS " == *" foreground "* ]]; then
  for ((run = 1; run <= RUNS; run++)); do
    for arm in $ARMS; do
      # Repair off is the same whichever jar: it runs on head alone.
      if [ "$arm" = off ]; then foreground off head "$run"; continue; fi
      for jar in "${jars[@]}"; do foreground "$arm" "$jar" "$run"; done
    done
  done
fi
stop_cluster

# summary.json: each figure's median over the runs, and p99 with repair on against off.
"$LAB_PY" - "$RESULTS" "$OUT/summary.json" <<'EOF'
import json, statistics, sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
med = lambda xs: statistics.median(xs) if xs else None
def group(part, key):
    out = {}
    for r in rows:
        if r["part"] == part:
            out.setdefault("/".join(str(r[k]) for k in key), []).append(r)
    return out
summary = {
    "setup": next(r for r in rows if r["part"] == "setup"),
    "fill": next((r for r in rows if r["part"] == "fill"), None),
    "refill": {k: {"runs": len(v), "records_s": med([r["records_s"] for r in v]), "complete_s": med([r["complete_s"] for r in v]),
                   "keys_per_s": med([r["keys_per_s"] for r in v]), "mib_per_s": med([r["mib_per_s"] for r in v]),
                   "us_per_key": med([r["us_per_key"] for r in v]), "each_records_s": [r["records_s"] for r in v]}
               for k, v in group("refill", ["jar", "limits"]).items()},
    "steady": {k: {"runs": len(v), "wall_s": med([r["wall_s"] for r in v]), "us_per_key_round": med([r["us_per_key_round"] for r in v]),
                   "each_us_per_key_round": [r["us_per_key_round"] for r in v]}
               for k, v in group("steady", ["jar", "limits"]).items()},
    "foreground": {k: {"runs": len(v), "p99_ms": med([r["latency_ms"]["p99"] for r in v]), "each_p99_ms": [r["latency_ms"]["p99"] for r in v],
                       "p50_ms": med([r["latency_ms"]["p50"] for r in v]), "achieved_rate": med([r["achieved_rate"] for r in v]),
                       "node_cores": med([r["node_cores"] for r in v]), "repair_rounds": sum(r["repair"]["rounds_complete"] for r in v)}
                   for k, v in group("foreground", ["scenario", "arm", "jar"]).items()},
}
# p99 with repair on against off, per scenario and jar: the median of the runs, and run by run (the
# arms alternate, so run i of one arm and run i of the other are a pair). Met: at most 1.2 times.
ratios = {}
fg = group("foreground", ["scenario", "arm", "jar"])
for key, on in fg.items():
    scenario, arm, jar = key.split("/")
    off = fg.get(f"{scenario}/off/head")
    if arm == "off" or not off:
        continue
    pairs = [a["latency_ms"]["p99"] / b["latency_ms"]["p99"] for a, b in zip(on, off)]
    ratio = med([r["latency_ms"]["p99"] for r in on]) / med([r["latency_ms"]["p99"] for r in off])
    ratios[f"{scenario}/{arm}/{jar}"] = {"p99_over_off": ratio, "each_pair": pairs, "within_a_fifth": ratio <= 1.2}
summary["foreground_p99_ratio"] = ratios
json.dump(summary, open(sys.argv[2], "w"), indent=1)
from lab import repair_cost_summary
open(sys.argv[2].removesuffix(".json") + ".md", "w").write(repair_cost_summary.markdown(summary))
print(json.dumps({k: summary[k] for k in ("refill", "steady", "foreground", "foreground_p99_ratio")}, indent=1))
EOF
say "results: $RESULTS, summary: $OUT/summary.md (first screen) and $OUT/summary.json"
