#!/usr/bin/env bash
# `make lab-replication-cost`: what replication costs, as one benchmark. For each scenario (PUT, GET):
# one node's saturation search (ack/from 1/1), then RUNS fixed-rate runs of CLUSTER_NODES nodes at
# CLUSTER_REPLICAS, at SHARE % of the rate one node sustained; then a verdict in
# reports/<timestamp>-replication-cost/summary.md. A scenario is met when every run met its rate, the
# SLO and the failure limit, as each step of the one-node search had to.
# Each run is a `scripts/lab.sh` run with a cluster of its own and a full report next to it.
# Knobs (environment): SHARE (40), RUNS (3), SCENARIOS ("put get"), CLUSTER_NODES (3),
# CLUSTER_REPLICAS (2/3), START_RATE (5000) and FACTOR (1.5) of the search, DURATION (30s) of a
# step or run, WARMUP (60s) before each; LAB_JAVA_OPTS as for scripts/lab.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

SHARE=${SHARE:-40}
RUNS=${RUNS:-3}
SCENARIOS=${SCENARIOS:-put get}
CLUSTER_NODES=${CLUSTER_NODES:-3}
CLUSTER_REPLICAS=${CLUSTER_REPLICAS:-2/3}
START_RATE=${START_RATE:-5000}
FACTOR=${FACTOR:-1.5}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-60s}
LAB_PY=${LAB_PY:-.tools/venv/bin/python}
export PYTHONPATH=$PWD/loadtests LAB_PY
stamp=$(date +%Y%m%d-%H%M%S)

say() { printf '[replication-cost %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
# The directory of the latest run named $1 (scripts/lab.sh writes reports/<timestamp>-<name>).
run_dir() { ls -d reports/*-"$1" | tail -n 1; }
# The wrk generator: lighter than k6, so more of the machine's CPU is left to the nodes.
lab() { scripts/lab.sh --tool wrk --events none --duration "$DURATION" --warmup "$WARMUP" "$@"; }

dirs=()
for scenario in $SCENARIOS; do
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
