#!/usr/bin/env bash
# The hot-path benchmark: starts ONE kvlab node of its own with -Xmx256m on a
# free loopback port, fills 1M keys of 1 KiB, warms up, then at a constant rate with 64
# connections measures, each for 30 s, GET /v0/status (the no-op route) and GET at 10k/s, the
# same pair at 20k/s (--get-rates), then GET /v0/status and PUT at 15k/s (--put-rate). For every phase: latency percentiles, achieved rate, the
# node's CPU per request (utime+stime from /proc/PID/stat over the phase / requests answered), the
# load generator's own CPU, and the CPU other processes took meanwhile (the load generator and
# the node share the machine's cores). Writes reports/<timestamp>-hotpath/ and stops the node.
#
#   loadtests/bench/hotpath.sh [--tool k6|wrk] [--duration 30s] [--port 28080] [--data DIR] ...
#   (all options: loadtests/bench/hotpath.sh --help; `make lab-hotpath` builds the jar first)
#
# --tool wrk (default): wrk2 -R when installed, else Debian's wrk paced to the rate by the Lua
#   delay() hook; the light generator (k6 costs the machine several times more CPU per request).
# --tool k6: k6 constant-arrival-rate, 64 VUs = 64 connections, open model.
# --data DIR keeps the filled data directory and reuses it next time (the fill takes minutes).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$ROOT/loadtests/tools/install.sh"
export KVLAB_LAB_INVOCATION=${KVLAB_LAB_INVOCATION:-"loadtests/bench/hotpath.sh $*"}
PYTHONPATH="$ROOT/loadtests" exec "$ROOT/.tools/venv/bin/python" -m lab hotpath "$@"
