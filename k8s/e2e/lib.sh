# shellcheck shell=bash
# Helpers of the end-to-end tests (k8s/e2e/run.sh): scenarios with PASS/FAIL, waiting with
# deadlines, and talking to kvlab pods through `kubectl exec` and curl (which the image has).
# Sourced; expects NS, RELEASE, KUBECTL and HELM to be set.

SCENARIOS_RUN=0
PASSED=()
FAILED=()
T0=$(date +%s)

log() { printf '[e2e %s +%ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T0))" "$*" >&2; }
# Inside a scenario: stop it, failed, saying why.
fail() { printf '  FAILED: %s\n' "$*" >&2; exit 1; }
# Inside a scenario: one checked fact, printed as it is confirmed.
ok() { printf '  ok: %s\n' "$*" >&2; }

# scenario TITLE FUNCTION: runs FUNCTION in a subshell that stops at the first failing command
# (and says which), then prints PASS or FAIL with the scenario's number and duration.
scenario() {
  local title=$1 fn=$2 start rc
  SCENARIOS_RUN=$((SCENARIOS_RUN + 1))
  log "scenario $SCENARIOS_RUN: $title"
  start=$(date +%s)
  (
    set -eEuo pipefail
    trap 'printf "  FAILED at %s line %s: %s\n" "${BASH_SOURCE[0]##*/}" "$LINENO" "$BASH_COMMAND" >&2' ERR
    "$fn"
  )
  rc=$?
  local took=$(($(date +%s) - start))
  if [ "$rc" -eq 0 ]; then
    PASSED+=("$title")
    printf 'PASS [%d] %s (%ss)\n' "$SCENARIOS_RUN" "$title" "$took"
  else
    FAILED+=("$title")
    printf 'FAIL [%d] %s (%ss)\n' "$SCENARIOS_RUN" "$title" "$took"
    diagnostics
  fi
  return "$rc"
}

# A scenario that cannot run because an earlier one it needs failed: counted as a failure.
not_run() {
  SCENARIOS_RUN=$((SCENARIOS_RUN + 1))
  FAILED+=("$1")
  printf 'FAIL [%d] %s (not run: %s)\n' "$SCENARIOS_RUN" "$1" "$2"
}

summary() {
  local total=$((${#PASSED[@]} + ${#FAILED[@]}))
  echo
  echo "e2e summary: ${#PASSED[@]} of $total scenarios passed, ${#FAILED[@]} failed, in $(($(date +%s) - T0))s"
  local t
  for t in "${FAILED[@]}"; do echo "  failed: $t"; done
  [ "${#FAILED[@]}" -eq 0 ]
}

# What the namespace looks like, after a failure.
diagnostics() {
  {
    echo "  --- namespace $NS after the failure ---"
    k get statefulsets,pods,services,pvc -o wide 2>&1 | sed 's/^/  /'
    echo "  --- latest events ---"
    k get events --sort-by=.lastTimestamp 2>&1 | tail -n 15 | sed 's/^/  /'
    local pod
    for pod in $(k get pods -o name 2>/dev/null); do
      echo "  --- last log lines of $pod ---"
      k logs "$pod" --all-containers --tail=15 2>&1 | sed 's/^/  /'
    done
  } >&2
}

k() { "$KUBECTL" --namespace "$NS" "$@"; }

# poll SECONDS COMMAND...: runs COMMAND every second until it succeeds; fails after SECONDS.
poll() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 1
  done
}

# wait_until SECONDS WHAT COMMAND...: poll, and fail the scenario saying WHAT did not happen.
wait_until() {
  local seconds=$1 what=$2
  shift 2
  poll "$seconds" "$@" || fail "not within ${seconds}s: $what"
}

# in_pod POD COMMAND...: COMMAND in the pod's kvlab container.
in_pod() {
  local pod=$1
  shift
  k exec "$pod" -c kvlab -- "$@"
}

# The URL of pod POD's port PORT, by its stable DNS name (the topology's node names).
pod_url() { echo "http://$1.$RELEASE-headless.$NS.svc.cluster.local:$2"; }

# request POD METHOD PATH_AND_QUERY [BODY]: a request to the node in POD, coordinated by it.
# Sets STATUS (the HTTP status code) and BODY.
request() {
  local pod=$1 method=$2 path=$3
  shift 3
  local args=(curl -sS -m 10 -X "$method" -w '\n%{http_code}')
  [ $# -eq 0 ] || args+=(--data-binary "$1")
  local out
  out=$(in_pod "$pod" "${args[@]}" "http://localhost:8080$path") || fail "curl in $pod failed: $method $path"
  STATUS=${out##*$'\n'}
  BODY=${out%$'\n'*}
}

# expect_put POD KEY VALUE REPLICAS: PUT answers 201.
expect_put() {
  request "$1" PUT "/v0/entity?id=$2&replicas=$4" "$3"
  [ "$STATUS" = 201 ] || fail "PUT $2 at $4 through $1 answered $STATUS, expected 201 ($BODY)"
  ok "PUT $2 at $4 through $1: 201"
}

# expect_get POD KEY REPLICAS VALUE: GET answers 200 with VALUE.
expect_get() {
  request "$1" GET "/v0/entity?id=$2&replicas=$3"
  [ "$STATUS" = 200 ] || fail "GET $2 at $3 through $1 answered $STATUS, expected 200 ($BODY)"
  [ "$BODY" = "$4" ] || fail "GET $2 at $3 through $1 returned '$BODY', expected '$4'"
  ok "GET $2 at $3 through $1: 200, the value written"
}

# The cluster size in POD's view: its kvlab_cluster_nodes gauge.
nodes_seen() {
  in_pod "$1" curl -fsS -m 5 http://localhost:8080/actuator/prometheus |
    awk '/^kvlab_cluster_nodes[{ ]/ { printf "%d\n", $2 }'
}

sees_nodes() { [ "$(nodes_seen "$1")" = "$2" ]; }

# expect_topology N: every one of the N pods sees N nodes (waits up to 60 s: DNS is read every 5 s).
expect_topology() {
  local n=$1 i
  for ((i = 0; i < n; i++)); do
    poll 60 sees_nodes "$RELEASE-$i" "$n" ||
      fail "$RELEASE-$i sees $(nodes_seen "$RELEASE-$i" 2>/dev/null || echo '?') nodes after 60s, not $n"
    ok "$RELEASE-$i sees $n nodes"
  done
}

pod_ready() { [ "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
pod_gone() { ! k get pod "$1" >/dev/null 2>&1; }
pod_uid() { k get pod "$1" -o jsonpath='{.metadata.uid}'; }
pod_restarts() { k get pod "$1" -o jsonpath='{.status.containerStatuses[?(@.name=="kvlab")].restartCount}'; }
