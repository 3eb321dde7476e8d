#!/usr/bin/env bash
# End-to-end tests of the kvlab chart on a real cluster: whatever KUBECONFIG points at, with the
# images already loaded (`make k8s-test` builds and loads them with IMAGE_LOADER first).
#
#   k8s/e2e/run.sh
#
# Every run works in a namespace of its own (kvlab-e2e-<time>-<random>), which is deleted at the end,
# passed or failed, volumes included. Each scenario prints PASS or FAIL with its number; the run
# ends with a count and exits non-zero when any failed.
#
# Environment: KVLAB_IMAGE (kvlab/service:0.1.0), PROFILER_IMAGE (kvlab/profiler:0.1.0), KUBECTL,
# HELM, E2E_KEEP_NAMESPACE=1 (leave the namespace for a look after a failure), E2E_ONLY=backup (the
# backup and restore scenario alone), E2E_ONLY=scaling (install, then helm upgrade 3 -> 5 -> 3 under
# writes alone), E2E_RESTORE_REPLICAS (the size of the release it restores into, 2).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CHART=$ROOT/helm/kvlab
KVLAB_IMAGE=${KVLAB_IMAGE:-kvlab/service:0.1.0}
PROFILER_IMAGE=${PROFILER_IMAGE:-kvlab/profiler:0.1.0}
KUBECTL=${KUBECTL:-kubectl}
HELM=${HELM:-helm}
RELEASE=kvlab
NS=kvlab-e2e-$(date +%H%M%S)-$((RANDOM % 1000))
WORK=$(mktemp -d)
# A value per run, so nothing a scenario reads can come from an earlier run.
RUN_ID=$NS

# shellcheck source=k8s/e2e/lib.sh
. "$HERE/lib.sh"

IMAGE_VALUES=(
  --set "image.repository=${KVLAB_IMAGE%:*}" --set "image.tag=${KVLAB_IMAGE##*:}"
  --set "profiler.image.repository=${PROFILER_IMAGE%:*}" --set "profiler.image.tag=${PROFILER_IMAGE##*:}"
)

cleanup() {
  local rc=$?
  local started
  started=$(date +%s)
  if [ "${E2E_KEEP_NAMESPACE:-0}" = 1 ]; then
    log "keeping namespace $NS (E2E_KEEP_NAMESPACE=1); remove it with: $KUBECTL delete namespace $NS"
  else
    log "cleanup: deleting namespace $NS and its volumes"
    "$KUBECTL" delete namespace "$NS" --ignore-not-found --wait=true --timeout=180s >/dev/null 2>&1 ||
      log "cleanup: namespace $NS is not gone after 180s"
    # local-path-provisioner (and kind's) delete the volumes of deleted claims in the background.
    local deadline=$(($(date +%s) + 120))
    while grep -qx "$NS" <<<"$("$KUBECTL" get pv -o jsonpath='{range .items[*]}{.spec.claimRef.namespace}{"\n"}{end}' 2>/dev/null)"; do
      [ "$(date +%s)" -lt "$deadline" ] || { log "cleanup: volumes of $NS are still there after 120s"; break; }
      sleep 2
    done
    log "cleanup: done in $(($(date +%s) - started))s"
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted: stopping, then cleaning up"; exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# The scenarios, in the order they run; each leaves the release as the next one expects it.

install_three_replicas() {
  "$HELM" install "$RELEASE" "$CHART" --namespace "$NS" "${IMAGE_VALUES[@]}" --set replicaCount=3 \
    --wait --timeout 5m >/dev/null
  local ready
  ready=$(k get statefulset "$RELEASE" -o jsonpath='{.status.readyReplicas}')
  [ "$ready" = 3 ] || fail "StatefulSet $RELEASE has $ready ready pods, expected 3"
  ok "helm install --wait returned; StatefulSet $RELEASE: 3 of 3 pods ready"
  local pdb
  pdb=$(k get pdb "$RELEASE" -o jsonpath='{.status.expectedPods}/{.status.disruptionsAllowed}')
  [ "$pdb" = 3/1 ] || fail "PodDisruptionBudget $RELEASE: expected pods/disruptions allowed are $pdb, expected 3/1"
  ok "PodDisruptionBudget $RELEASE counts the 3 pods and allows 1 disruption"
  k get pods -l "app.kubernetes.io/instance=$RELEASE" -o wide >&2
}

every_pod_sees_three_nodes() {
  expect_topology 3
}

write_through_one_pod_read_through_another() {
  local key=written-$RUN_ID value="written through $RELEASE-0 at 2/3"
  expect_put "$RELEASE-0" "$key" "$value" 2/3
  expect_get "$RELEASE-2" "$key" 2/3 "$value"
  expect_get "$RELEASE-1" "$key" 2/3 "$value"
}

helm_test_passes() {
  if ! "$HELM" test "$RELEASE" --namespace "$NS" --timeout 2m >"$WORK/helm-test.out" 2>&1; then
    cat "$WORK/helm-test.out" >&2
    k logs "$RELEASE-test-write-read" >&2 || true
    fail "helm test $RELEASE failed"
  fi
  grep -E '^(TEST SUITE|Phase):' "$WORK/helm-test.out" | sed 's/^/  /' >&2
  ok "helm test: the test pod wrote, read back and deleted a key through the client Service"
}

pod_deleted_by_force_comes_back_with_its_data() {
  local pod=$RELEASE-1 key=survives-$RUN_ID value="on every replica before $RELEASE-1 was deleted"
  expect_put "$RELEASE-0" "$key" "$value" 3/3
  local uid volume
  uid=$(pod_uid "$pod")
  volume=$(k get pvc "data-$pod" -o jsonpath='{.spec.volumeName}')
  k delete pod "$pod" --force --grace-period=0 >/dev/null 2>&1
  ok "deleted $pod by force (uid $uid, volume $volume)"
  wait_until 30 "a new $pod is created" new_pod "$pod" "$uid"
  wait_until 180 "the new $pod is ready" pod_ready "$pod"
  [ "$(k get pvc "data-$pod" -o jsonpath='{.spec.volumeName}')" = "$volume" ] || fail "data-$pod is bound to another volume"
  ok "a new $pod (uid $(pod_uid "$pod")) is ready, on the same volume $volume"
  # The node's own replica, through the replica protocol: what its RocksDB holds, not a merge of
  # the other nodes' answers (and no read repair ran: nothing read the key since the write).
  local out
  out=$(replica_call "$RELEASE-0" GET "$(pod_url "$pod" 7070)/internal/v1/record?id=$key")
  [ "${out##*$'\n'}" = 200 ] || fail "$pod's own replica answered ${out##*$'\n'} for $key, expected 200"
  [ "${out%$'\n'*}" = "$value" ] || fail "$pod's own replica holds '${out%$'\n'*}', expected '$value'"
  ok "$pod's own RocksDB still holds $key"
  expect_get "$pod" "$key" 3/3 "$value"
}
new_pod() { local uid; uid=$(pod_uid "$1") && [ -n "$uid" ] && [ "$uid" != "$2" ]; }

request_at_two_of_three_keeps_succeeding_while_one_pod_is_down() {
  local down=$RELEASE-2 key=before-outage-$RUN_ID value="written before $RELEASE-2 went down"
  expect_put "$RELEASE-0" "$key" "$value" 3/3
  # The StatefulSet gives up its last pod; the pod goes away (the claim stays), and it stays away
  # until scaled back. The other nodes keep it in their topology: it is down, not removed.
  k scale statefulset "$RELEASE" --replicas=2 >/dev/null
  wait_until 90 "$down stops" pod_gone "$down"
  ok "$down is down (its pod deleted, its claim kept)"
  if ! sees_nodes "$RELEASE-0" 3 || ! sees_nodes "$RELEASE-1" 3; then
    fail "the remaining pods no longer count $down in the cluster"
  fi
  ok "$RELEASE-0 and $RELEASE-1 still see 3 nodes"
  request "$RELEASE-0" GET "/v0/entity?id=$key&replicas=3/3"
  [ "$STATUS" = 504 ] || fail "GET at 3/3 answered $STATUS with $down down, expected 504"
  ok "GET at 3/3 answers 504: one of the three replicas is really down"
  expect_get "$RELEASE-1" "$key" 2/3 "$value"
  # 30 writes and reads at 2/3 through each remaining pod, bounded in time (curl -m 5 each).
  local pod out
  for pod in "$RELEASE-0" "$RELEASE-1"; do
    # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
    out=$(in_pod "$pod" sh -c '
      ok=0
      for i in $(seq 1 30); do
        url="http://localhost:8080/v0/entity?id=$1-$i&replicas=2/3"
        put=$(curl -s -o /dev/null -m 5 -w "%{http_code}" -X PUT --data-binary "value-$i" "$url")
        got=$(curl -s -m 5 "$url")
        if [ "$put" = 201 ] && [ "$got" = "value-$i" ]; then ok=$((ok + 1)); else echo "request $i: PUT $put, GET returned $got" >&2; fi
      done
      echo "$ok"' sh "during-outage-$pod-$RUN_ID")
    [ "$out" = 30 ] || fail "through $pod, only $out of 30 PUT+GET pairs at 2/3 succeeded while $down was down"
    ok "through $pod: 30 of 30 PUT+GET pairs at 2/3 succeeded while $down was down"
  done
  # Back to three: the pod returns with its volume.
  k scale statefulset "$RELEASE" --replicas=3 >/dev/null
  wait_until 180 "$down is ready again" pod_ready "$down"
  expect_topology 3
  ok "$down is back; every pod sees 3 nodes"
}

profiler_sidecar_takes_a_flame_graph_under_load() {
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set profiler.enabled=true \
    --wait --timeout 5m >/dev/null
  local pod=$RELEASE-1 containers
  containers=$(k get pod "$pod" -o jsonpath='{.spec.shareProcessNamespace} {.spec.containers[*].name}')
  [ "$containers" = "true kvlab profiler" ] || fail "$pod after the upgrade: shareProcessNamespace and containers are '$containers'"
  ok "helm upgrade --set profiler.enabled=true: $pod shares its process namespace with the profiler sidecar"
  expect_get "$pod" "written-$RUN_ID" 2/3 "written through $RELEASE-0 at 2/3"
  # Load on the pod: PUTs from another pod's container, 8 at a time, at most 100000 and at most
  # 35 s, while the sidecar profiles cpu, then alloc.
  # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
  k exec "$RELEASE-0" -c kvlab -- sh -c '
    timeout 35 curl -s -Z --parallel-max 8 -X PUT --data-binary "a value of sixty-four bytes, for the flame graph of a kvlab node" \
      -w "%{stderr}%{http_code}\n" "$1/v0/entity?id=load-[1-100000]" 2>&1 >/dev/null | sort | uniq -c' \
    sh "$(pod_url "$pod" 8080)" >"$WORK/load.out" 2>&1 &
  local load=$!
  sleep 3
  local html event
  for event in cpu alloc; do
    html=$(make -s -C "$ROOT" profile POD="$pod" EVENT=$event SECONDS=8 K8S_NAMESPACE="$NS" \
      PROFILE_DIR="$WORK/profiles" KUBECTL="$KUBECTL") || fail "make profile POD=$pod EVENT=$event failed"
    [ -s "$html" ] || fail "make profile wrote no flame graph"
    python3 "$HERE/flamegraph-check.py" "$html" 200 5 | sed 's/^/  /' >&2 || fail "$html is not a flame graph of kvlab"
    ok "make profile POD=$pod EVENT=$event SECONDS=8 copied out $(basename "$html") ($(wc -c <"$html") bytes)"
  done
  wait "$load" || true
  local created
  created=$(awk '$2 == 201 { print $1 }' "$WORK/load.out")
  sed 's/^/  load: /' "$WORK/load.out" >&2
  [ "${created:-0}" -ge 500 ] || fail "the load made only ${created:-0} PUTs"
  ok "the pod was under load: ${created} PUTs answered 201 during the profiles"
}

# helm upgrade 3 -> 5 -> 3 while a writer in $RELEASE-0 puts keys at 1/1, 2/2, 2/3 and 3/3 through
# the client Service, about 30 a second; then every key whose PUT answered 201 is read back at its
# replicas. Growing moves keys to the new pods (handoff), shrinking runs the chart's scale-in hook
# first: the pods that go away hand their records to the pods that stay. E2E_SCALE_IN=off shrinks
# with the hook turned off instead, which loses keys that only the removed pods held.
scaling_out_and_in_under_load_keeps_every_acknowledged_write() {
  local writer=$RELEASE-0 prefix=scaled-$RUN_ID hook=(--set scaleIn.enabled=true)
  # Not local: the EXIT trap (the scenario's subshell ending, failed or not) stops both.
  scaling_stop=/tmp/stop-writing-$RUN_ID scaling_watcher=""
  trap scaling_cleanup EXIT
  [ "${E2E_SCALE_IN:-on}" = on ] || hook=(--set scaleIn.enabled=false)
  # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
  k exec "$writer" -c kvlab -- sh -c '
    base=$1 prefix=$2 stop=$3 end=$(($(date +%s) + $4)) i=0
    while [ ! -e "$stop" ] && [ "$(date +%s)" -lt "$end" ] && [ "$i" -lt 4000 ]; do
      i=$((i + 1)) now=$(date +%s)
      set --
      for r in 1/1 2/2 2/3 3/3; do
        key="$prefix-${r%/*}of${r#*/}-$i"
        [ $# -eq 0 ] || set -- "$@" --next
        set -- "$@" -s -o /dev/null -m 5 -w "%{http_code} $r $key $now\n" -X PUT --data-binary "$key" "$base/v0/entity?id=$key&replicas=$r"
      done
      curl "$@"
      sleep 0.05
    done' sh "http://$RELEASE:8080" "$prefix" "$scaling_stop" 600 >"$WORK/writes.out" 2>"$WORK/writes.err" &
  local writing=$!
  wait_until 30 "the writer's first PUTs answer" grep -q ' 3/3 ' "$WORK/writes.out"
  ok "a writer in $writer puts keys at 1/1, 2/2, 2/3 and 3/3 through the client Service"
  sleep 5

  local started=$SECONDS grow_began grow_ended shrink_began shrink_ended
  grow_began=$(date +%s)
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set replicaCount=5 --wait --timeout 5m >/dev/null
  ok "helm upgrade --set replicaCount=5 under load: 5 pods ready after $((SECONDS - started))s"
  expect_topology 5
  grow_ended=$(date +%s)
  sleep 10

  # While the shrink runs: what the pods that go away say about their leaving, and the hook's log.
  watch_leaving 3 4 &
  scaling_watcher=$!
  started=$SECONDS shrink_began=$(date +%s)
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set replicaCount=3 "${hook[@]}" --wait --timeout 5m \
    >"$WORK/shrink.out" 2>&1 || { cat "$WORK/shrink.out" >&2; fail "helm upgrade --set replicaCount=3 failed"; }
  ok "helm upgrade --set replicaCount=3 ${hook[*]} under load returned after $((SECONDS - started))s"
  wait_until 120 "$RELEASE-3 and $RELEASE-4 are gone" pods_gone "$RELEASE-3" "$RELEASE-4"
  ok "$RELEASE-3 and $RELEASE-4 are gone, $((SECONDS - started))s after the upgrade began"
  kill "$scaling_watcher" 2>/dev/null || true
  wait "$scaling_watcher" 2>/dev/null || true
  scaling_watcher=""
  if [ -s "$WORK/scale-in.log" ]; then sed 's/^/  hook: /' "$WORK/scale-in.log" >&2; fi
  local pod
  for pod in "$RELEASE-3" "$RELEASE-4"; do
    if [ "${E2E_SCALE_IN:-on}" = on ]; then
      grep -qE '"passes":[1-9]' "$WORK/leaving-$pod" 2>/dev/null ||
        fail "$pod went away without a complete pass of its leave (last seen: $(cat "$WORK/leaving-$pod" 2>/dev/null || echo nothing))"
      ok "$pod was leaving before it went away: $(cat "$WORK/leaving-$pod")"
    else
      ok "$pod went away without leaving (the hook is off): $(cat "$WORK/leaving-$pod" 2>/dev/null || echo null)"
    fi
  done
  # Each pod drops the two from its topology once DNS has shown them gone for cluster.shrinkAfter (60 s).
  local i
  for i in 0 1 2; do
    poll 120 sees_nodes "$RELEASE-$i" 3 || fail "$RELEASE-$i still sees $(nodes_seen "$RELEASE-$i") nodes"
  done
  ok "every pod sees 3 nodes, $((SECONDS - started))s after the upgrade began"
  shrink_ended=$(date +%s)
  sleep 5
  k exec "$writer" -c kvlab -- touch "$scaling_stop"
  wait "$writing" || fail "the writer failed: $(tail -n 3 "$WORK/writes.err")"

  # What was acknowledged, by replicas.
  local r acknowledged total
  for r in 1/1 2/2 2/3 3/3; do
    acknowledged=$(awk -v r="$r" '$1 == 201 && $2 == r' "$WORK/writes.out" | wc -l)
    total=$(awk -v r="$r" '$2 == r' "$WORK/writes.out" | wc -l)
    [ "$acknowledged" -ge 100 ] || fail "only $acknowledged of $total PUTs at $r answered 201"
    ok "PUTs at $r: $acknowledged of $total answered 201 ($(awk -v r="$r" '$2 == r && $1 != 201 { print $1 }' "$WORK/writes.out" | sort | uniq -c | awk '{ printf "%s%s x %s", sep, $1, $2; sep = ", " }'))"
  done
  # When the PUTs that failed were sent: while growing (upgrade to 5 until every pod sees 5), while
  # shrinking (upgrade to 3 until every pod sees 3), or in between and around.
  ok "PUTs not answered 201, by when they were sent: $(awk -v g0="$grow_began" -v g1="$grow_ended" -v s0="$shrink_began" -v s1="$shrink_ended" '
    $1 != 201 { if ($4 >= g0 && $4 <= g1) grow++; else if ($4 >= s0 && $4 <= s1) shrink++; else other++ }
    END { printf "%d growing (%ds), %d shrinking (%ds), %d otherwise", grow, g1 - g0, shrink, s1 - s0, other }' "$WORK/writes.out")"
  # Every acknowledged key, read back at its replicas through the client Service: its value is its key.
  # Each answer's body, then a line "@@ <status> <url>".
  awk '$1 == 201 { printf "url = \"http://'"$RELEASE"':8080/v0/entity?id=%s&replicas=%s\"\n", $3, $2 }' "$WORK/writes.out" >"$WORK/reads.conf"
  k exec -i "$writer" -c kvlab -- curl -s -m 5 -w '\n@@ %{http_code} %{url}\n' -K - <"$WORK/reads.conf" >"$WORK/reads.out" || true
  awk '/^@@ / {
         key = $3; sub(/.*[?]id=/, "", key); sub(/&.*/, "", key)
         replicas = $3; sub(/.*replicas=/, "", replicas)
         if ($2 != 200 || body != key) print replicas, $2, key, body
         body = ""; next
       }
       { body = body == "" ? $0 : body " " $0 }' "$WORK/reads.out" >"$WORK/lost.out"
  local read answered lost
  read=$(wc -l <"$WORK/reads.conf")
  answered=$(grep -c '^@@ ' "$WORK/reads.out" || true)
  [ "$answered" = "$read" ] || fail "only $answered of $read reads were answered"
  if [ -s "$WORK/lost.out" ]; then
    head -n 10 "$WORK/lost.out" | sed 's/^/  not read back: /' >&2
    for pod in "$RELEASE-3" "$RELEASE-4"; do
      grep -hiE 'leav|handoff|handover|shut' "$WORK/log-$pod" 2>/dev/null | tail -n 15 | sed "s/^/  $pod: /" >&2 || true
    done
    lost=$(awk '{ print $1 }' "$WORK/lost.out" | sort | uniq -c | awk '{ printf "%s%s at %s", sep, $1, $2; sep = ", " }')
    fail "$(wc -l <"$WORK/lost.out") of $read acknowledged keys were not read back with their value ($lost)"
  fi
  ok "all $read acknowledged keys read back at their replicas with their values"
}
pods_gone() { local pod; for pod; do pod_gone "$pod" || return 1; done; }
# The writer stopped (its loop ends at the stop file) and the watcher gone, however the scenario ends.
scaling_cleanup() {
  [ -z "$scaling_watcher" ] || kill "$scaling_watcher" 2>/dev/null || true
  k exec "$RELEASE-0" -c kvlab -- touch "$scaling_stop" >/dev/null 2>&1 || true
}
# watch_leaving ORDINAL...: until killed, keeps each pod's last handoff.leaving in $WORK/leaving-<pod>,
# and follows the scale-in hook's log into $WORK/scale-in.log once its pod runs.
watch_leaving() {
  local i out following=0
  # The leaving pods' own log, to the end: what their passes and their last handover sent.
  for i; do k logs -f "$RELEASE-$i" -c kvlab --since=1s >"$WORK/log-$RELEASE-$i" 2>/dev/null & done
  while :; do
    for i; do
      out=$(k exec "$RELEASE-$i" -c kvlab -- curl -s -m 2 localhost:9080/actuator/kvlab 2>/dev/null | sed -n 's/.*"leaving":\({[^}]*"lastPass":{[^}]*}}\|{[^}]*}\|null\).*/\1/p') || true
      [ -z "$out" ] || [ "$out" = null ] && [ -s "$WORK/leaving-$RELEASE-$i" ] || echo "$out" >"$WORK/leaving-$RELEASE-$i"
    done
    if [ "$following" = 0 ] && [ -n "$(k get pods -l app.kubernetes.io/component=scale-in -o name 2>/dev/null)" ]; then
      following=1
      k logs -f -l app.kubernetes.io/component=scale-in --tail=-1 >"$WORK/scale-in.log" 2>/dev/null &
    fi
    sleep 1
  done
}

scaling_to_five_updates_the_topology_on_every_pod() {
  local i before=()
  for i in 0 1 2; do before+=("$(pod_uid "$RELEASE-$i")/$(pod_restarts "$RELEASE-$i")"); done
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set replicaCount=5 \
    --wait --timeout 5m >/dev/null
  ok "helm upgrade --set replicaCount=5: 5 pods ready"
  expect_topology 5
  for i in 0 1 2; do
    [ "$(pod_uid "$RELEASE-$i")/$(pod_restarts "$RELEASE-$i")" = "${before[$i]}" ] ||
      fail "$RELEASE-$i was restarted or replaced by the scaling"
  done
  ok "$RELEASE-0..2 kept running: same pods, no restarts"
  local key=five-$RUN_ID value="written through $RELEASE-4 at 3/5"
  expect_put "$RELEASE-4" "$key" "$value" 3/5
  expect_get "$RELEASE-0" "$key" 3/5 "$value"
}

network_policy_is_accepted() {
  local policy
  # The rules found by port name: the client port without a from, the management and replica ports from the release.
  policy=$(k get networkpolicy "$RELEASE" -o jsonpath='{.spec.policyTypes[*]}|{.spec.ingress[?(@.ports[0].port=="http")].from}|{.spec.ingress[?(@.ports[0].port=="management")].ports[0].port}|{.spec.ingress[?(@.ports[0].port=="management")].from[0].podSelector.matchLabels.app\.kubernetes\.io/instance}|{.spec.ingress[?(@.ports[0].port=="replica")].from[0].podSelector.matchLabels.app\.kubernetes\.io/instance}')
  [ "$policy" = "Ingress||management|$RELEASE|$RELEASE" ] || fail "NetworkPolicy $RELEASE reads '$policy'"
  ok "NetworkPolicy $RELEASE is in the API: the replica and management ports only from the release's pods (and the scale-in hook), the client port from anyone"
  # The variant that limits clients too (another release's), checked by the API server, not created.
  # A render without the cluster needs a secret it can keep: an existing Secret's name is enough here.
  "$HELM" template "$RELEASE-clients" "$CHART" --namespace "$NS" --show-only templates/networkpolicy.yaml \
    --set clusterSecret.existingSecret="$RELEASE-clients-secret" \
    --set 'networkPolicy.clientFrom[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=clients' \
    --set 'networkPolicy.clientFrom[1].podSelector.matchLabels.role=client' >"$WORK/netpol.yaml"
  k create --dry-run=server -f "$WORK/netpol.yaml" >/dev/null
  ok "the API server accepts the NetworkPolicy with networkPolicy.clientFrom set (server-side dry run)"
}

# The policy enforced, not only accepted: probe pods that are not kvlab nodes, one with the client
# label and one without, against a node's client port (8080) and replica port (7070), with the
# release's clients limited to the label, then with no policy at all. Needs a cluster that enforces
# NetworkPolicy (kind does; k8s-local with make k8s-test NETPOL_ENFORCER=kube-router).
# Policy changes take effect a moment later: every check polls, with a deadline.
network_policy_is_enforced() {
  local client=probe-client other=probe-other target=$RELEASE-1
  trap network_policy_cleanup EXIT
  start_probe "$client" kvlab-client=true
  start_probe "$other"
  wait_until 60 "$client is ready" pod_ready "$client"
  wait_until 60 "$other is ready" pod_ready "$other"
  local ip
  ip=$(k get pod "$target" -o jsonpath='{.status.podIP}')
  [ -n "$ip" ] || fail "$target has no pod IP"
  local status="http://$ip:8080/v0/status" record="http://$ip:7070/internal/v1/record?id=netpol-$RUN_ID"
  ok "probe pods $client (label kvlab-client=true) and $other (no label) are running; target $target at $ip"

  # The chart's policy as installed: clients from anywhere, the replica port from the release only.
  poll 30 answers "$other" "$status" 200 ||
    fail "$other gets no 200 from $target's client port (HTTP $PROBE_CODE, curl exit $PROBE_EXIT) although the policy lets everyone in"
  ok "the chart's policy: $other (no label) reaches $target's client port: GET /v0/status 200"
  poll 30 blocked "$other" "$record" ||
    fail "$other still reaches $target's replica port (HTTP $PROBE_CODE): NetworkPolicy is not enforced. A cluster without an enforcer needs one: make k8s-test NETPOL_ENFORCER=kube-router"
  ok "the chart's policy: $other cannot reach $target's replica port: $(blocked_how)"
  local management="http://$ip:9080/actuator/health"
  poll 30 blocked "$other" "$management" ||
    fail "$other still reaches $target's management port (HTTP $PROBE_CODE): the chart's policy admits only the release's pods, the scale-in hook and managementFrom"
  ok "the chart's policy: $other cannot reach $target's management port: $(blocked_how)"
  pod_ready "$target" || fail "$target is not ready: the kubelet's probes do not reach its management port through the policy"
  ok "$target stays ready: the kubelet's probes reach its management port through the policy"

  # Clients limited to pods with the label.
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values \
    --set-string 'networkPolicy.clientFrom[0].podSelector.matchLabels.kvlab-client=true' --wait --timeout 3m >/dev/null
  local from
  from=$(k get networkpolicy "$RELEASE" -o jsonpath='{.spec.ingress[?(@.ports[0].port=="http")].from[0].podSelector.matchLabels.kvlab-client}')
  [ "$from" = true ] || fail "NetworkPolicy $RELEASE does not limit the client port to kvlab-client=true (reads '$from')"
  ok "helm upgrade --set-string networkPolicy.clientFrom[0].podSelector.matchLabels.kvlab-client=true"
  # (a) the labelled pod is a client
  poll 30 answers "$client" "$status" 200 ||
    fail "$client (labelled) gets no 200 from $target's client port (HTTP $PROBE_CODE, curl exit $PROBE_EXIT)"
  ok "(a) $client (labelled) reaches $target's client port: GET /v0/status 200"
  # (b) the other is not, and neither is a kvlab node: no replica port for either
  poll 30 blocked "$other" "$status" ||
    fail "$other (no label) still reaches $target's client port 30s after the policy changed (HTTP $PROBE_CODE)"
  ok "(b) $other (no label) cannot reach $target's client port: $(blocked_how)"
  answers "$client" "$status" 200 || fail "$client lost the client port while $other was shut out (HTTP $PROBE_CODE)"
  blocked "$other" "$status" || fail "$other reaches the client port again (HTTP $PROBE_CODE)"
  ok "(b) at the same moment, $client still gets 200 and $other still nothing"
  local pod
  for pod in "$client" "$other"; do
    poll 30 blocked "$pod" "$record" || fail "$pod reaches $target's replica port (HTTP $PROBE_CODE)"
    ok "(b) $pod cannot reach $target's replica port: $(blocked_how)"
  done
  # (c) the nodes still replicate: every replica of a key at 3/3, and the replica port between pods
  local key=netpol-$RUN_ID value="written at 3/3 while clients were limited"
  expect_put "$RELEASE-0" "$key" "$value" 3/3
  expect_get "$RELEASE-2" "$key" 3/3 "$value"
  # With five pods, $target may or may not be one of the key's three replicas: 200 or 404, not 401.
  local out code
  out=$(replica_call "$RELEASE-0" GET "http://$ip:7070/internal/v1/record?id=$key" "$(pod_url "$target" 7070)")
  code=${out##*$'\n'}
  [ "$code" = 200 ] || [ "$code" = 404 ] ||
    fail "$RELEASE-0's signed call to $target's replica port answered '${out//$'\n'/ | }', expected 200 or 404"
  ok "(c) $RELEASE-0 reaches $target's replica port directly: its signed call answered $code"

  # (d) without any policy, the port is open to anyone: it was the policy that shut it
  k delete networkpolicy "$RELEASE" >/dev/null
  ok "kubectl delete networkpolicy $RELEASE"
  poll 30 answers "$other" "$record" ||
    fail "$other still cannot reach $target's replica port 30s after the policy was deleted ($(blocked_how))"
  [ "$PROBE_CODE" = 401 ] || fail "$other's unsigned call to $target's replica port answered $PROBE_CODE, expected 401"
  ok "(d) $other (no label) reaches $target's replica port, where its unsigned call gets 401"
  poll 30 answers "$other" "$status" 200 ||
    fail "$other gets no 200 from $target's client port without a policy (HTTP $PROBE_CODE, curl exit $PROBE_EXIT)"
  ok "(d) $other (no label) reaches $target's client port: GET /v0/status 200"

  # The chart's policy back, enforced again, for the scenarios after this one.
  network_policy_restore || fail "helm upgrade back to the chart's NetworkPolicy failed"
  # The rules found by port name: the client port's without a from, the replica port's from the release.
  local policy
  policy=$(k get networkpolicy "$RELEASE" -o jsonpath='{.spec.ingress[?(@.ports[0].port=="http")].ports[0].port}|{.spec.ingress[?(@.ports[0].port=="http")].from}|{.spec.ingress[?(@.ports[0].port=="replica")].from[0].podSelector.matchLabels.app\.kubernetes\.io/instance}')
  [ "$policy" = "http||$RELEASE" ] || fail "NetworkPolicy $RELEASE after the restore reads '$policy', expected 'http||$RELEASE'"
  ok "helm upgrade --set-json networkPolicy.clientFrom=[]: the chart's NetworkPolicy is back, clients from anywhere"
  poll 30 blocked "$other" "$record" || fail "$other still reaches $target's replica port after the restore (HTTP $PROBE_CODE)"
  poll 30 answers "$other" "$status" 200 || fail "$other gets no 200 from $target's client port after the restore (HTTP $PROBE_CODE)"
  ok "the chart's policy enforced again: $other reaches the client port, not the replica port"
  k delete pod "$client" "$other" --wait=true --timeout=60s >/dev/null
  ok "probe pods deleted"
}
# The chart's policy back (helm re-creates a deleted one), once.
network_policy_restored=0
network_policy_restore() {
  [ "$network_policy_restored" = 0 ] || return 0
  network_policy_restored=1
  "$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --reuse-values --set-json 'networkPolicy.clientFrom=[]' \
    --wait --timeout 3m >/dev/null
}
# Also when the scenario fails: the chart's policy back and the probe pods gone, so that the next
# scenarios see the release as installed.
network_policy_cleanup() {
  network_policy_restore || log "could not restore the chart's NetworkPolicy"
  k delete pod probe-client probe-other --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

uninstall_leaves_only_the_volumes() {
  "$HELM" uninstall "$RELEASE" --namespace "$NS" --wait --timeout 3m >/dev/null
  ok "helm uninstall --wait returned"
  # Everything listable in the namespace, but events and what every namespace has.
  local kinds
  kinds=$("$KUBECTL" api-resources --verbs=list --namespaced -o name | grep -v -E '^(events(\.events\.k8s\.io)?)$' | paste -sd, -)
  poll 60 only_claims_left "$kinds" || fail "60s after the uninstall, $NS still holds: $(leftovers "$kinds" | paste -sd' ' -)"
  local claims
  claims=$(k get pvc -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase} {end}')
  [ "$claims" = "data-$RELEASE-0=Bound data-$RELEASE-1=Bound data-$RELEASE-2=Bound data-$RELEASE-3=Bound data-$RELEASE-4=Bound " ] ||
    fail "the claims left are '$claims', expected the 5 data claims, bound"
  ok "nothing is left in $NS but the 5 data claims: $claims"
}
leftovers() {
  k get "$1" -o name 2>/dev/null | grep -v -E '^(persistentvolumeclaim/|configmap/kube-root-ca\.crt$|serviceaccount/default$)' || true
}
only_claims_left() { [ -z "$(leftovers "$1")" ]; }

# Mutual TLS between the pods (tls.enabled) and HTTPS for clients (tls.client.enabled), in a release
# of its own with the CA the chart makes, the NetworkPolicy enforced. The pods replicate over TLS;
# a pod that gets past the NetworkPolicy (it wears the release's labels, which anyone who may create
# pods in the namespace can) gets no TLS session on the replica port without a certificate of the
# release's CA, nor with one of another CA, while a node with its certificate gets an HTTP answer.
TLS_RELEASE=kvlab-tls
mutual_tls_between_pods() {
  local RELEASE=$TLS_RELEASE CLIENT_TLS=1
  trap tls_cleanup EXIT
  "$HELM" install "$RELEASE" "$CHART" --namespace "$NS" "${IMAGE_VALUES[@]}" --set replicaCount=3 \
    --set tls.enabled=true --set tls.client.enabled=true --set scaleIn.enabled=false --set podDisruptionBudget.enabled=false \
    --wait --timeout 5m >/dev/null
  ok "helm install $RELEASE --set tls.enabled=true --set tls.client.enabled=true: 3 pods ready"
  k get secret "$RELEASE-tls-ca" "$RELEASE-tls" >/dev/null || fail "the chart made no CA or certificate Secret"
  ok "the chart made its CA ($RELEASE-tls-ca) and the nodes' certificate ($RELEASE-tls)"
  local key=tls-$RUN_ID value="written over TLS through $RELEASE-0 at 2/3"
  expect_put "$RELEASE-0" "$key" "$value" 2/3
  expect_get "$RELEASE-2" "$key" 2/3 "$value"
  expect_get "$RELEASE-1" "$key" 2/3 "$value"
  local all=tls3-$RUN_ID
  expect_put "$RELEASE-1" "$all" "on all three" 3/3
  expect_get "$RELEASE-2" "$all" 3/3 "on all three"
  helm_test_passes

  local target=$RELEASE-1
  local url="https://$target.$RELEASE-headless.$NS.svc.cluster.local:7070/internal/v1/record?id=$key" code
  code=$(in_pod "$RELEASE-0" curl -s -o /dev/null -m 10 -w '%{http_code}' --cacert /etc/kvlab-tls/ca.crt \
    --cert /etc/kvlab-tls/tls.crt --key /etc/kvlab-tls/tls.key "$url") || true
  [ -n "$code" ] && [ "$code" != 000 ] || fail "$RELEASE-0, with the release's certificate, got no HTTP answer from $target's replica port"
  ok "$RELEASE-0 with the release's certificate gets a TLS session on $target's replica port: HTTP $code (unsigned)"

  # The intruder: the release's selector labels let it past the NetworkPolicy.
  start_probe tls-intruder app.kubernetes.io/name=kvlab "app.kubernetes.io/instance=$RELEASE"
  wait_until 60 "tls-intruder is ready" pod_ready tls-intruder
  # A certificate and key of another CA, for the intruder.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=intruder" \
    -addext "subjectAltName=DNS:intruder" -keyout "$WORK/intruder.key" -out "$WORK/intruder.crt" 2>/dev/null
  cat "$WORK/intruder.crt" | k exec -i tls-intruder -- sh -c 'cat > /dev/shm/intruder.crt'
  cat "$WORK/intruder.key" | k exec -i tls-intruder -- sh -c 'cat > /dev/shm/intruder.key'
  local how
  for how in "no certificate" "a certificate of another CA"; do
    local args=(-k)
    [ "$how" = "no certificate" ] || args+=(--cert /dev/shm/intruder.crt --key /dev/shm/intruder.key)
    local out
    # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
    out=$(k exec tls-intruder -- sh -c 'url=$1; shift; curl -s -o /dev/null -m 5 -w "%{http_code}" "$@" "$url"; echo " $?"' sh "$url" "${args[@]}") ||
      fail "kubectl exec in tls-intruder failed"
    # 7 or 28 would be the network refusing it: the NetworkPolicy, not TLS.
    [ "${out% *}" = 000 ] && [ "${out##* }" != 0 ] && [ "${out##* }" != 7 ] && [ "${out##* }" != 28 ] ||
      fail "tls-intruder with $how: HTTP ${out% *}, curl exit ${out##* }; expected the TLS handshake refused"
    ok "tls-intruder (past the NetworkPolicy) with $how: no TLS session, no HTTP answer (curl exit ${out##* })"
  done
  out=$(k exec tls-intruder -- sh -c 'curl -s -o /dev/null -m 5 -w "%{http_code}" "$1"; echo " $?"' sh "${url/https:/http:}") || true
  [ "${out% *}" = 000 ] || fail "tls-intruder in clear got HTTP ${out% *} from the replica port"
  ok "tls-intruder in clear (http) gets no HTTP answer from the replica port either"
}
tls_cleanup() {
  k delete pod tls-intruder --ignore-not-found --wait=false >/dev/null 2>&1 || true
  "$HELM" uninstall "$TLS_RELEASE" --namespace "$NS" --wait --timeout 3m >/dev/null 2>&1 || log "helm uninstall $TLS_RELEASE failed"
  k delete pvc -l "app.kubernetes.io/instance=$TLS_RELEASE" --wait=false >/dev/null 2>&1 || true
}

# Backup and restore, in releases of their own: a release with backups on (the directory target, on
# the claim the chart makes), keys written at 1/1, 2/3 and 3/3 and one deleted; the backup CronJob
# run now; the release uninstalled and its data claims deleted (the backups' claim stays); a new
# release of another size restores the backup from that claim, and every key written before the
# backup reads back, the deleted one stays deleted, and one written after the backup is not there.
BACKUP_RELEASE=kvlab-bk
RESTORE_RELEASE=kvlab-rs
RESTORE_REPLICAS=${E2E_RESTORE_REPLICAS:-2}
backup_by_the_cronjob_restores_into_a_new_release() {
  local RELEASE=$BACKUP_RELEASE
  trap backup_cleanup EXIT
  # One node: ReadWriteOnce lets every pod mount the backups' claim. No PDB or scale-in hook: not
  # what this scenario is about, and fewer objects to wait for.
  "$HELM" install "$RELEASE" "$CHART" --namespace "$NS" "${IMAGE_VALUES[@]}" --set replicaCount=3 \
    --set backup.enabled=true --set backup.persistence.size=1Gi --set 'backup.persistence.accessModes={ReadWriteOnce}' \
    --set scaleIn.enabled=false --set podDisruptionBudget.enabled=false --wait --timeout 5m >/dev/null
  ok "helm install $RELEASE --set backup.enabled=true: 3 pods ready, the backups' claim $RELEASE-backups mounted at /backups"
  k get cronjob "$RELEASE-backup" >/dev/null || fail "no CronJob $RELEASE-backup"

  # The keys, through the client Service: 30 at each of 1/1, 2/3 and 3/3 (the value is the key), and
  # one written and deleted again.
  local prefix=bk-$RUN_ID
  # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
  in_pod "$RELEASE-0" sh -c '
    for r in 1/1 2/3 3/3; do
      for i in $(seq 1 30); do
        key="$2-${r%/*}of${r#*/}-$i"
        curl -s -o /dev/null -m 5 -w "%{http_code} $r $key\n" -X PUT --data-binary "$key" "$1/v0/entity?id=$key&replicas=$r"
      done
    done' sh "http://$RELEASE:8080" "$prefix" >"$WORK/backup-writes.out"
  local written
  written=$(awk '$1 == 201' "$WORK/backup-writes.out" | wc -l)
  [ "$written" = 90 ] || fail "only $written of 90 PUTs answered 201: $(awk '$1 != 201' "$WORK/backup-writes.out" | head -n 3 | paste -sd' ' -)"
  ok "90 keys written through the client Service, 30 each at 1/1, 2/3 and 3/3"
  expect_put "$RELEASE-1" "$prefix-deleted" "deleted before the backup" 3/3
  request "$RELEASE-1" DELETE "/v0/entity?id=$prefix-deleted&replicas=3/3"
  [ "$STATUS" = 202 ] || fail "DELETE $prefix-deleted at 3/3 answered $STATUS, expected 202 ($BODY)"
  ok "DELETE $prefix-deleted at 3/3: $STATUS"

  # The CronJob's Job, now.
  local job=$RELEASE-backup-e2e started=$SECONDS
  k create job --from="cronjob/$RELEASE-backup" "$job" >/dev/null
  wait_until 300 "the backup Job $job completes or fails" job_finished "$job"
  k logs "job/$job" >"$WORK/backup-job.log" 2>&1 || true
  sed 's/^/  job: /' "$WORK/backup-job.log" | cut -c1-400 >&2
  [ "$(k get job "$job" -o jsonpath='{.status.succeeded}')" = 1 ] || fail "the backup Job $job failed"
  local name
  name=$(sed -n 's/^\[backup +[0-9]*s\] backup \([^ ]*\) in .*/\1/p' "$WORK/backup-job.log" | tail -n 1)
  [ -n "$name" ] || fail "the backup Job's log names no backup"
  grep -q "^{\"backup\":\"$name\"" "$WORK/backup-job.log" || fail "the backup Job's log holds no answer {\"backup\":\"$name\", ...}"
  ok "kubectl create job --from=cronjob/$RELEASE-backup: backup $name complete after $((SECONDS - started))s"
  local listed
  listed=$(in_pod "$RELEASE-2" curl -s -m 10 localhost:9080/actuator/kvlab/backups)
  grep -q "\"$name\"" <<<"$listed" || fail "GET /actuator/kvlab/backups on $RELEASE-2 does not list $name: $listed"
  ok "$RELEASE-2 lists $name among the complete backups in the target"
  expect_put "$RELEASE-0" "$prefix-after" "written after the backup" 3/3

  # The release gone, and its data with it; the backups' claim stays.
  "$HELM" uninstall "$RELEASE" --namespace "$NS" --wait --timeout 3m >/dev/null
  wait_until 120 "the pods of $RELEASE are gone" pods_gone "$RELEASE-0" "$RELEASE-1" "$RELEASE-2"
  k delete pvc "data-$RELEASE-0" "data-$RELEASE-1" "data-$RELEASE-2" --wait=true --timeout=120s >/dev/null
  ok "helm uninstall $RELEASE; its data claims deleted"
  [ "$(k get pvc "$RELEASE-backups" -o jsonpath='{.status.phase}')" = Bound ] ||
    fail "the backups' claim $RELEASE-backups did not outlive the release"
  ok "the backups' claim $RELEASE-backups outlived the release (helm.sh/resource-policy: keep)"

  # A new release, of another size, restores the backup from the kept claim.
  RELEASE=$RESTORE_RELEASE
  started=$SECONDS
  "$HELM" install "$RELEASE" "$CHART" --namespace "$NS" "${IMAGE_VALUES[@]}" --set replicaCount="$RESTORE_REPLICAS" \
    --set backup.enabled=true --set backup.schedule= --set backup.persistence.existingClaim="$BACKUP_RELEASE-backups" \
    --set restore.backup="$name" --set scaleIn.enabled=false --set podDisruptionBudget.enabled=false \
    >/dev/null || fail "helm install $RELEASE --set restore.backup=$name failed"
  # Until every pod is ready; a restore that fails (its init container exits non-zero) stops the wait.
  local i
  for ((i = 0; i < RESTORE_REPLICAS; i++)); do
    poll 300 restored_or_failed "$RELEASE-$i" || fail "$RELEASE-$i is not ready within 300s"
    if ! pod_ready "$RELEASE-$i"; then
      k logs "$RELEASE-$i" -c restore 2>&1 | tail -n 20 | cut -c1-400 | sed "s/^/  $RELEASE-$i restore: /" >&2
      fail "the restore of $RELEASE-$i failed: exit status $(restore_exit "$RELEASE-$i")"
    fi
  done
  ok "helm install $RELEASE --set replicaCount=$RESTORE_REPLICAS --set restore.backup=$name: ready after $((SECONDS - started))s"
  for ((i = 0; i < RESTORE_REPLICAS; i++)); do
    k logs "$RELEASE-$i" -c restore 2>&1 | tail -n 4 | cut -c1-300 | sed "s/^/  $RELEASE-$i restore: /" >&2
    [ "$(k exec "$RELEASE-$i" -c kvlab -- cat /data/.kvlab-restored 2>/dev/null)" = "$name" ] ||
      fail "$RELEASE-$i's volume has no marker naming $name"
  done
  ok "every pod's init container restored its share of $name (its marker names it)"
  expect_topology "$RESTORE_REPLICAS"

  # Every key written before the backup, read back at every replica of the new release: its value is its key.
  local all=$RESTORE_REPLICAS/$RESTORE_REPLICAS
  poll 120 all_read_back "$RELEASE-0" "$all" || true
  all_read_back "$RELEASE-0" "$all" || {
    head -n 10 "$WORK/restore-missing.out" | sed 's/^/  not read back: /' >&2
    fail "$(wc -l <"$WORK/restore-missing.out") of 90 keys written before the backup were not read back at $all"
  }
  ok "all 90 keys written before the backup read back at $all with their values, in a release of $RESTORE_REPLICAS nodes"
  request "$RELEASE-1" GET "/v0/entity?id=$prefix-deleted&replicas=$all"
  [ "$STATUS" = 404 ] || fail "the key deleted before the backup answered $STATUS ($BODY), expected 404"
  ok "the key deleted before the backup stays deleted: 404"
  request "$RELEASE-1" GET "/v0/entity?id=$prefix-after&replicas=$all"
  [ "$STATUS" = 404 ] || fail "the key written after the backup answered $STATUS ($BODY), expected 404: not from the backup"
  ok "the key written after the backup is not there: 404"

  # A pod that restarts on its restored volume does not restore again.
  local uid
  uid=$(pod_uid "$RELEASE-1")
  k delete pod "$RELEASE-1" --wait=false >/dev/null
  wait_until 60 "a new $RELEASE-1 is created" new_pod "$RELEASE-1" "$uid"
  wait_until 180 "the new $RELEASE-1 is ready" pod_ready "$RELEASE-1"
  k logs "$RELEASE-1" -c restore 2>&1 | tail -n 2 | cut -c1-300 | sed "s/^/  $RELEASE-1 restore: /" >&2
  all_read_back "$RELEASE-1" "$all" || fail "after $RELEASE-1 restarted, $(wc -l <"$WORK/restore-missing.out") keys are not read back"
  ok "$RELEASE-1 restarted on its restored volume and started; every key still reads back"
}
# The exit status of the pod's restore init container when it last ended; empty while it has not.
restore_exit() {
  k get pod "$1" -o jsonpath='{.status.initContainerStatuses[?(@.name=="restore")].state.terminated.exitCode}{.status.initContainerStatuses[?(@.name=="restore")].lastState.terminated.exitCode}' 2>/dev/null
}
restored_or_failed() {
  local code
  pod_ready "$1" && return 0
  code=$(restore_exit "$1")
  [ -n "$code" ] && [ "${code:0:1}" != 0 ]
}
job_finished() { [ -n "$(k get job "$1" -o jsonpath='{.status.succeeded}{.status.failed}')" ]; }
# all_read_back POD REPLICAS: every key of $WORK/backup-writes.out reads back through POD at REPLICAS
# with its value; what does not goes to $WORK/restore-missing.out.
all_read_back() {
  # shellcheck disable=SC2016 # the script runs in the pod, with its arguments
  awk '$1 == 201 { print $3 }' "$WORK/backup-writes.out" | k exec -i "$1" -c kvlab -- sh -c '
    while read -r key; do
      got=$(curl -s -m 5 -w " %{http_code}" "http://localhost:8080/v0/entity?id=$key&replicas=$1" | tr -d "\n")
      [ "$got" = "$key 200" ] || echo "$key: $got"
    done' sh "$2" >"$WORK/restore-missing.out"
  [ ! -s "$WORK/restore-missing.out" ]
}
backup_cleanup() {
  local release
  for release in "$RESTORE_RELEASE" "$BACKUP_RELEASE"; do
    "$HELM" uninstall "$release" --namespace "$NS" --wait --timeout 3m >/dev/null 2>&1 || true
    k delete pvc -l "app.kubernetes.io/instance=$release" --wait=false >/dev/null 2>&1 || true
  done
}

# ---------------------------------------------------------------------------------------------

log "kvlab end-to-end tests: namespace $NS, images $KVLAB_IMAGE and $PROFILER_IMAGE"
"$KUBECTL" version 2>/dev/null | sed 's/^/  /' >&2
"$KUBECTL" create namespace "$NS" >/dev/null || { echo "FAIL: cannot create namespace $NS" >&2; exit 1; }
"$KUBECTL" label namespace "$NS" app.kubernetes.io/part-of=kvlab-e2e >/dev/null

# E2E_ONLY=backup: the backup and restore scenario alone (it needs no other).
if [ "${E2E_ONLY:-}" = backup ]; then
  scenario "a backup by the CronJob restores into a new release of another size" backup_by_the_cronjob_restores_into_a_new_release
elif [ "${E2E_ONLY:-}" = scaling ]; then
  scenario "install 3 replicas and wait" install_three_replicas &&
    scenario "helm upgrade 3 -> 5 -> 3 under write load keeps every acknowledged key" scaling_out_and_in_under_load_keeps_every_acknowledged_write
elif scenario "install 3 replicas and wait" install_three_replicas; then
  scenario "every pod sees 3 nodes" every_pod_sees_three_nodes
  scenario "a write through one pod at 2/3 is read through another" write_through_one_pod_read_through_another
  scenario "helm test passes" helm_test_passes
  scenario "a pod deleted by force comes back with its data" pod_deleted_by_force_comes_back_with_its_data
  scenario "a request at 2/3 keeps succeeding while one pod is down" request_at_two_of_three_keeps_succeeding_while_one_pod_is_down
  scenario "the profiler sidecar takes a flame graph of a pod under load" profiler_sidecar_takes_a_flame_graph_under_load
  scenario "helm upgrade 3 -> 5 -> 3 under write load keeps every acknowledged key" scaling_out_and_in_under_load_keeps_every_acknowledged_write
  scenario "scaling to 5 updates the topology on every pod" scaling_to_five_updates_the_topology_on_every_pod
  scenario "the NetworkPolicy is accepted by the API server" network_policy_is_accepted
  scenario "the NetworkPolicy is enforced: client port from labelled pods only, replica port from kvlab pods only" network_policy_is_enforced
  scenario "uninstall leaves nothing behind but the volumes' claims" uninstall_leaves_only_the_volumes
  scenario "mutual TLS with the NetworkPolicy enforced: the pods replicate, a pod without a valid certificate is refused" mutual_tls_between_pods
  scenario "a backup by the CronJob restores into a new release of another size" backup_by_the_cronjob_restores_into_a_new_release
else
  for title in "every pod sees 3 nodes" "a write through one pod at 2/3 is read through another" "helm test passes" \
    "a pod deleted by force comes back with its data" "a request at 2/3 keeps succeeding while one pod is down" \
    "the profiler sidecar takes a flame graph of a pod under load" \
    "helm upgrade 3 -> 5 -> 3 under write load keeps every acknowledged key" "scaling to 5 updates the topology on every pod" \
    "the NetworkPolicy is accepted by the API server" \
    "the NetworkPolicy is enforced: client port from labelled pods only, replica port from kvlab pods only" \
    "uninstall leaves nothing behind but the volumes' claims" \
    "mutual TLS with the NetworkPolicy enforced: the pods replicate, a pod without a valid certificate is refused" \
    "a backup by the CronJob restores into a new release of another size"; do
    not_run "$title" "the install failed"
  done
fi

summary
