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
  local args=(curl -sS -m 10 -X "$method" -w '\n%{http_code}') base=http://localhost:8080
  [ $# -eq 0 ] || args+=(--data-binary "$1")
  if [ -n "${CLIENT_TLS:-}" ]; then
    # A release with tls.client.enabled: HTTPS to the pod's DNS name, which its certificate holds.
    args+=(--cacert /etc/kvlab-tls/ca.crt)
    base=https://$pod.$RELEASE-headless.$NS.svc.cluster.local:8080
  fi
  local out
  out=$(in_pod "$pod" "${args[@]}" "$base$path") || fail "curl in $pod failed: $method $path"
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

# replica_call POD METHOD URL [NODE]: a replica protocol call from inside POD, signed for NODE (the
# target's name in the cluster, by default the URL's scheme and authority) with the release's
# cluster secret (from its Secret; the signature is made here, with scripts/replica-call.sh).
# Prints the answer's body, then a line with its HTTP status.
replica_call() {
  local pod=$1 method=$2 url=$3 node=${4:-} secret header
  secret=$(k get secret "$RELEASE-cluster-secret" -o jsonpath='{.data.cluster-secret}' | base64 -d) ||
    fail "cannot read the Secret $RELEASE-cluster-secret"
  header=$(SECRET=$secret "$ROOT/scripts/replica-call.sh" --header ${node:+--node "$node"} "$method" "$url")
  in_pod "$pod" curl -sS -m 10 -X "$method" -H "$header" -w '\n%{http_code}' "$url"
}

# The cluster size in POD's view: its kvlab_cluster_nodes gauge, from the management port.
nodes_seen() {
  in_pod "$1" curl -fsS -m 5 http://localhost:9080/actuator/prometheus |
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

# Probe pods: pods of the kvlab image (for its curl) that only sleep, in the test namespace, as
# non-root as the chart's pods, and not part of the release.
# start_probe NAME [LABEL=VALUE...]   (the kvlab image's curl and openssl; /dev/shm is writable)
start_probe() {
  local name=$1 label labels=""
  shift
  # app.kubernetes.io/name is kvlab-e2e-probe unless given.
  [[ " $* " == *" app.kubernetes.io/name="* ]] || labels="        app.kubernetes.io/name: kvlab-e2e-probe"
  for label in "$@"; do labels+="${labels:+$'\n'}        ${label%%=*}: \"${label#*=}\""; done
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels:
$labels
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  # sleep ignores SIGTERM: nothing to wait for on deletion.
  terminationGracePeriodSeconds: 1
  securityContext:
    runAsNonRoot: true
    runAsUser: 10001
    runAsGroup: 10001
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: probe
      image: $KVLAB_IMAGE
      imagePullPolicy: IfNotPresent
      command: [sleep, "900"]
      resources:
        requests: {cpu: 10m, memory: 16Mi}
        limits: {memory: 64Mi}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: [ALL]
YAML
}

# probe_request POD URL: a GET from POD's first container. Sets PROBE_CODE, the HTTP status (000
# when no answer came within 3 s), and PROBE_EXIT, curl's exit status (7: refused or unreachable,
# 28: timed out, 6: no DNS answer). Fails only when kubectl exec does.
probe_request() {
  local out
  # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
  out=$(k exec "$1" -- sh -c 'curl -s -o /dev/null -m 3 -w "%{http_code}" "$1"; echo " $?"' sh "$2" 2>/dev/null) || return 1
  PROBE_CODE=${out% *}
  PROBE_EXIT=${out##* }
}

# answers POD URL [STATUS]: POD gets an HTTP answer from URL (with STATUS, when given).
answers() {
  probe_request "$1" "$2" && [ "$PROBE_CODE" != 000 ] && { [ -z "${3:-}" ] || [ "$PROBE_CODE" = "$3" ]; }
}

# blocked POD URL: POD's connection to URL fails: refused, unreachable or timed out (not a DNS or
# kubectl failure).
blocked() {
  probe_request "$1" "$2" && [ "$PROBE_CODE" = 000 ] && { [ "$PROBE_EXIT" = 7 ] || [ "$PROBE_EXIT" = 28 ]; }
}

# How a blocked connection failed, for the log.
blocked_how() {
  case $PROBE_EXIT in
    7) echo "no HTTP answer: connection refused or unreachable (curl exit 7)" ;;
    28) echo "no HTTP answer: timed out (curl exit 28)" ;;
    *) echo "curl exit $PROBE_EXIT, HTTP $PROBE_CODE" ;;
  esac
}
