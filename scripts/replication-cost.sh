#!/usr/bin/env bash
# `make lab-replication-cost`: what replication costs, as one benchmark. For each scenario (PUT, GET):
# one node's saturation search (ack/from 1/1), then RUNS fixed-rate runs of CLUSTER_NODES nodes at
# CLUSTER_REPLICAS, at SHARE % of the rate one node sustained; then a verdict in
# reports/<timestamp>-replication-cost/summary.md. A scenario is met when every run met its rate, the
# SLO and the failure limit, as each step of the one-node search had to.
# Each run is a `scripts/lab.sh` run with a cluster of its own and a full report next to it.
# Knobs and their defaults: loadtests/lab/replication-cost.env (SHARE, RUNS, SCENARIOS,
# CLUSTER_NODES, CLUSTER_REPLICAS, START_RATE and FACTOR of the search, DURATION of a step or run,
# WARMUP before each); a value in the environment wins. LAB_JAVA_OPTS as for scripts/lab.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each knob of replication-cost.env the environment does not set.
while IFS='=' read -r name value; do
  [ -n "${!name:-}" ] || printf -v "$name" '%s' "$value"
done < <(grep -E '^[A-Z_]+=' loadtests/lab/replication-cost.env)
LAB_PY=${LAB_PY:-.tools/venv/bin/python}
export PYTHONPATH=$PWD/loadtests LAB_PY
stamp=$(date +%Y%m%d-%H%M%S)

say() { printf '[replication-cost %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
# The directory of the latest run named $1 (scripts/lab.sh writes reports/<timestamp>-<name>).
run_dir() { ls -d reports/*-"$1" | tail -n 1; }
# The wrk generator: lighter than k6, so more of the machine's CPU is left to the nodes. No run's
# own gate: a run that misses the SLO is a finding of the benchmark, whose verdict comes last.
lab() { scripts/lab.sh --tool wrk --events none --duration "$DURATION" --warmup "$WARMUP" --gate none "$@"; }

dirs=()
for scenario in ${SCENARIOS//,/ }; do
  name=replication-cost-1node-$scenario
  say "$scenario: one node's saturation search from $START_RATE/s, x$FACTOR per step"
  NODES=1 SCENARIO=saturation lab --name "$name" --search "$scenario" --search-step "$DURATION" --replicas 1/1 \
    --start-rate "$START_RATE" --factor "$FACTOR"
  dirs+=("$(run_dir "$name")")
  if ! rate=$("$LAB_PY" -m lab target-rate "${dirs[-1]}" --share "$SHARE"); then
    say "$scenario: no rate to aim the cluster at; skipping its cluster runs"
    continue
  fi
  phases=$([ "$scenario" = get ] && echo fill,get || echo "$scenario")
  for i in $(seq 1 "$RUNS"); do
    name=replication-cost-${CLUSTER_NODES}nodes-$scenario-$i
    say "$scenario: $CLUSTER_NODES nodes at $CLUSTER_REPLICAS, $rate/s ($SHARE % of one node), run $i of $RUNS"
    NODES=$CLUSTER_NODES SCENARIO=phases lab --name "$name" --phases "$phases" --rate "$rate" --replicas "$CLUSTER_REPLICAS" --search none
    dirs+=("$(run_dir "$name")")
  done
done
"$LAB_PY" -m lab replication-cost --share "$SHARE" --out "reports/$stamp-replication-cost" "${dirs[@]}"
