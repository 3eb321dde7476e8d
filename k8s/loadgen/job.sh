#!/bin/bash
# In a load generator pod of the in-cluster lab (a Job the lab's Kubernetes executor,
# loadtests/lab/k8s/, creates; this file reaches the pod in a ConfigMap with the k6 and wrk scripts):
#   job.sh k6 run [OPTIONS] SCRIPT          job.sh wrk|wrk2 [OPTIONS] URL
# 1. prints the tool's version, then waits (at most START_TIMEOUT seconds, 300) for the runner's
#    start signal: the file $WORK/start-at (WORK=/work, the pod's emptyDir) holding a time in
#    nanoseconds since the epoch, which the runner writes into every pod of the phase once they all
#    run; sleeps until that time, so that the pods of a phase start together;
# 2. k6 with K6_SEGMENT_SEQUENCE set (0,1/2,1 for two pods): runs this pod's execution segment, the
#    JOB_COMPLETION_INDEX-th of the sequence (0:1/2 for pod 0), so that the pods together send
#    exactly the requested rate, iterations and VUs;
# 3. runs the tool (its output is the pod's log) and prints, each on a line of its own:
#      KVLAB-JOB version <the tool's version>      KVLAB-JOB start <ns since the epoch>
#      KVLAB-JOB exit <the tool's exit code>       KVLAB-JOB end <ns since the epoch>
#      KVLAB-JOB times <bash's `times`: this shell's, then its children's user and system CPU>
#      KVLAB-JOB summary <k6's summary JSON, base64>
#      KVLAB-JOB samples <a line of k6's per-request durations, gzipped CSV, base64>  (several lines;
#                        of a long phase, the durations summed per second: see the end)
# Exits 0 once the tool ran, whatever its exit code (k6 exits 99 when a threshold fails: a result,
# and a failed pod would make the Job stop the other pods); non-zero when it could not run it.
set -uo pipefail
WORK=${WORK:-/work}

mark() { printf 'KVLAB-JOB %s\n' "$*"; }
fail() { mark "error $*"; exit 3; }

[ $# -ge 1 ] || fail "usage: job.sh k6|wrk|wrk2 ARGS..."
tool=$1
shift
command -v "$tool" >/dev/null || fail "no $tool in this image"

case $tool in
  k6) mark "version $(k6 version 2>&1 | head -n 1)" ;;
  *) mark "version $("$tool" -v 2>&1 | head -n 1)" ;;
esac

if [ "$tool" = k6 ] && [ -n "${K6_SEGMENT_SEQUENCE:-}" ]; then
  IFS=, read -ra sequence <<<"$K6_SEGMENT_SEQUENCE"
  i=${JOB_COMPLETION_INDEX:-0}
  if [ "$i" -lt 0 ] || [ "$((i + 1))" -ge "${#sequence[@]}" ]; then
    fail "pod index $i has no segment in K6_SEGMENT_SEQUENCE=$K6_SEGMENT_SEQUENCE"
  fi
  segment="${sequence[i]}:${sequence[i + 1]}"
  mark "segment $segment of $K6_SEGMENT_SEQUENCE"
  # The segment options go right after `run`, before the script.
  set -- "$1" --execution-segment "$segment" --execution-segment-sequence "$K6_SEGMENT_SEQUENCE" "${@:2}"
fi

mark ready
timeout=${START_TIMEOUT:-300}
deadline=$(($(date +%s) + timeout))
until [ -s "$WORK/start-at" ]; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "no start signal ($WORK/start-at) within $timeout s"
  sleep 0.1
done
start_at=$(<"$WORK/start-at")
[[ $start_at =~ ^[0-9]+$ ]] || fail "bad start time '$start_at'"
wait_ns=$((start_at - $(date +%s%N)))
if [ "$wait_ns" -gt 0 ]; then
  sleep "$((wait_ns / 1000000000)).$(printf '%09d' $((wait_ns % 1000000000)))"
fi

# The tool runs in the background so that SIGTERM (the Job deleted, its deadline passed) reaches it.
child=
trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null' TERM INT
mark "start $(date +%s%N)"
"$tool" "$@" &
child=$!
wait "$child"
rc=$?
# A trapped signal ends `wait` early: wait again until the tool is gone.
while kill -0 "$child" 2>/dev/null; do
  wait "$child"
  rc=$?
done
mark "end $(date +%s%N)"
mark "exit $rc"
times >"$WORK/times"
mark "times $(tr '\n' ' ' <"$WORK/times")"
summary=${SUMMARY_JSON:-$WORK/summary.json}
if [ "$tool" = k6 ] && [ -s "$summary" ]; then
  mark "summary $(base64 -w0 "$summary")"
fi
# k6's per-request samples (K6_SAMPLES, its --out csv file; k6 gzips it when named *.gz): the
# header and the request durations, gzipped, base64 in lines of 8000 characters (a log line stays
# whole), unless that passes SAMPLES_MAX_BYTES (4 MB): the kubelet rotates a container's log at
# 10 MiB. A long phase's (a soak's) are then summed: a row per second of the phase (from the start
# signal), outcome, op and latency rounded up to two significant digits, with its count, which the
# lab reads as that many requests; left out, and said so, when even those pass it.
max=${SAMPLES_MAX_BYTES:-4000000}
summed() {
  awk -F, -v start_us="$((start_at / 1000))" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == "http_req_duration" {
      s = int(($col["timestamp"] - start_us) / 1000000 + 1000000) - 1000000
      v = $col["metric_value"] + 0  # rounded up to two significant digits: 1.234 -> 1.3
      if (v > 0) { unit = 10 ^ (int(log(v) / log(10) + 1000) - 1001); q = v / unit; v = unit * (int(q) + (q > int(q))) }
      ok = ("expected_response" in col) ? $col["expected_response"] : ""
      tags = ("extra_tags" in col) ? $col["extra_tags"] : ""
      n[s SUBSEP v SUBSEP ok SUBSEP tags]++
    }
    END {
      print "metric_name,timestamp,metric_value,expected_response,extra_tags,count"
      for (k in n) {
        split(k, f, SUBSEP)
        printf "http_req_duration,%.0f,%s,%s,%s,%d\n", start_us + f[1] * 1000000 + 500000, f[2], f[3], f[4], n[k]
      }
    }'
}
if [ "$tool" = k6 ] && [ -s "${K6_SAMPLES:-}" ]; then
  gzip -dcf "$K6_SAMPLES" | awk -F, 'NR == 1 || $1 == "http_req_duration"' | gzip -c >"$WORK/samples.gz"
  size=$(stat -c %s "$WORK/samples.gz")
  if [ "$size" -gt "$max" ]; then
    gzip -dcf "$K6_SAMPLES" | summed | gzip -c >"$WORK/samples.gz"
    mark "samples-summed $size bytes gzipped, over $max: summed per second and latency"
  fi
  sent=$(stat -c %s "$WORK/samples.gz")
  if [ "$sent" -le "$max" ]; then
    base64 -w 8000 "$WORK/samples.gz" | sed 's/^/KVLAB-JOB samples /'
  else
    mark "samples-skipped $size bytes gzipped, $sent summed, over $max"
  fi
fi
exit 0
