#!/bin/sh
# The chart's scale-in hook (templates/scale-in-job.yaml), run before `helm upgrade` or `helm
# rollback` applies a smaller replicaCount: every pod that goes away (ordinal >= the new size) hands
# its records to their owners among the pods that stay, and the StatefulSet shrinks only once each
# has done so.
#
# For each such pod, through its management port:
#   POST /actuator/kvlab/leave {"size": N}   it hands every record to its owners among pods 0..N-1,
#                                            pass after pass until it stops (it keeps serving)
#   GET /actuator/kvlab                      until handoff.leaving.passes >= 1 and
#                                            handoff.leaving.lastPass.failed == 0
# and fails when that takes longer than the timeout (the upgrade then stops before any pod goes).
#
# The current size needs no Kubernetes API: it is the largest topology the pods that stay report
# (each counts up to the highest ordinal in the headless Service's DNS), and any pod above it whose
# DNS name resolves. A pod whose name does not resolve for 20 s is not running: nothing can be
# handed over from it.
#
# Environment: KVLAB_SET (pods are $KVLAB_SET-<i>), KVLAB_SERVICE (the headless Service's name,
# fully qualified), KVLAB_MANAGEMENT_PORT, KVLAB_REPLICAS (the new size), KVLAB_TIMEOUT_SECONDS,
# KVLAB_MANAGEMENT_TOKEN_FILE (the admin token or the cluster secret: a leave changes state, so the
# pods take it only with that credential, sent as Authorization: Bearer).
# Needs sh, curl, getent, grep, sed, tr: the kvlab image has them.
set -eu

set_name=$KVLAB_SET
service=$KVLAB_SERVICE
port=$KVLAB_MANAGEMENT_PORT
keep=$KVLAB_REPLICAS
timeout=$KVLAB_TIMEOUT_SECONDS
absent_after=20
token=$(cat "$KVLAB_MANAGEMENT_TOKEN_FILE") || { echo "[scale-in] cannot read the management credential $KVLAB_MANAGEMENT_TOKEN_FILE" >&2; exit 1; }
nl='
'

now() { date +%s; }
started=$(now)
deadline=$((started + timeout))
log() { printf '[scale-in +%ss] %s\n' "$(($(now) - started))" "$*"; }
pod() { echo "$set_name-$1"; }
host() { echo "$set_name-$1.$service"; }
url() { echo "http://$(host "$1"):$port/actuator/kvlab$2"; }
resolves() { getent hosts "$(host "$1")" >/dev/null 2>&1; }

# status ORDINAL: the pod's /actuator/kvlab, without blanks. Fails when the pod does not answer
# (status 1, curl's error) and when it has no such endpoint (status 2: an image that cannot leave).
status() {
  out=$(curl -sS -m 5 -w '\n%{http_code}' "$(url "$1" "")" 2>&1) || { printf '%s' "$out"; return 1; }
  code=${out##*"$nl"}
  case $code in
    200) printf '%s' "${out%"$nl"*}" | tr -d ' \t\r\n' ;;
    404) echo "GET /actuator/kvlab answered 404"; return 2 ;;
    *) echo "GET /actuator/kvlab answered $code"; return 1 ;;
  esac
}
cannot_leave() {
  log "FAILED: $(pod "$1") cannot hand its records over: $2. Its image is older than the leave operation: upgrade the image first (with the same replicaCount), or shrink with scaleIn.enabled=false and lose what only it holds."
  log "The StatefulSet keeps its $size pods. The pods asked to leave keep handing over until they restart."
  exit 1
}
# first NAME TEXT: the first "NAME":<number> in TEXT.
first() { printf '%s' "$2" | grep -o "\"$1\":[0-9]*" | head -n 1 | cut -d: -f2; }
# count_list TEXT: the number of items of the JSON list TEXT starts with ("[a,b]..." gives 2).
count_list() {
  items=${1#\[}
  items=${items%%\]*}
  if [ -z "$items" ]; then echo 0; else printf '%s' "$items" | tr ',' '\n' | grep -c .; fi
}

# The size now.
size=$keep
i=0
while [ "$i" -lt "$keep" ]; do
  if json=$(status "$i" 2>/dev/null) && [ -n "$json" ]; then
    case $json in
      *'"nodes":['*)
        seen=$(count_list "${json#*\"nodes\":}")
        [ "$seen" -le "$size" ] || size=$seen ;;
    esac
  fi
  i=$((i + 1))
done
while resolves "$size"; do size=$((size + 1)); done

if [ "$size" -le "$keep" ]; then
  log "$set_name has $size pods, the new size is $keep: no pod goes away, nothing to hand over"
  exit 0
fi
last=$((size - 1))
log "$set_name shrinks from $size pods to $keep: $(pod "$keep")..$(pod "$last") hand their records to $(pod 0)..$(pod $((keep - 1))) first (timeout ${timeout}s)"

pending=$(seq "$keep" "$last" | tr '\n' ' ')
while :; do
  still=""
  for i in $pending; do
    since="" note=""
    if ! resolves "$i"; then
      eval "since=\${absent_$i:-}"
      if [ -z "$since" ]; then
        eval "absent_$i=$(now)"
        log "$(pod "$i"): no DNS record; waiting ${absent_after}s before taking it as not running"
      elif [ $(($(now) - since)) -ge "$absent_after" ]; then
        log "$(pod "$i"): no DNS record for ${absent_after}s: not running, so nothing to hand over from it (its volume keeps what it held)"
        continue
      fi
      still="$still $i"
      continue
    fi
    eval "absent_$i="
    answered=0
    json=$(status "$i") || answered=$?
    [ "$answered" != 2 ] || cannot_leave "$i" "$json"
    if [ "$answered" != 0 ] || [ -z "$json" ]; then
      eval "note=\${note_$i:-}"
      if [ "$note" != "does not answer on port $port" ]; then
        log "$(pod "$i"): does not answer on port $port yet: ${json:-no answer}"
        eval "note_$i=\"does not answer on port \$port\""
      fi
      still="$still $i"
      continue
    fi
    leaving=${json#*\"leaving\":}
    [ "$leaving" != "$json" ] || cannot_leave "$i" "its /actuator/kvlab has no handoff.leaving"
    case $leaving in
      null*) size_left=0 ;;
      *) size_left=$(count_list "${leaving#*\"remaining\":}") ;;
    esac
    if [ "$size_left" != "$keep" ]; then
      # The credential goes to curl on its stdin, not on a command line.
      answer=$(printf 'Authorization: Bearer %s\n' "$token" | curl -sS -m 10 -o /dev/null -w '%{http_code}' -X POST -H @- \
        -H 'Content-Type: application/json' --data "{\"size\": $keep}" "$(url "$i" /leave)" 2>&1) || true
      case $answer in
        200) log "$(pod "$i"): leaving: hands every record to its owners among $(pod 0)..$(pod $((keep - 1)))" ;;
        404) cannot_leave "$i" "POST /actuator/kvlab/leave answered 404" ;;
        401 | 403)
          log "FAILED: $(pod "$i") refused the leave ($answer): the hook's credential ($KVLAB_MANAGEMENT_TOKEN_FILE) is neither its cluster secret nor its admin token. The StatefulSet keeps its $size pods."
          exit 1 ;;
        *) log "$(pod "$i"): POST /actuator/kvlab/leave answered ${answer:-nothing}; trying again" ;;
      esac
      still="$still $i"
      continue
    fi
    passes=$(first passes "$leaving")
    last_pass=${leaving#*\"lastPass\":}
    failed=$(first failed "$last_pass")
    progress="passes ${passes:-0}, last pass: $(first scanned "$last_pass") records read, $(first sent "$last_pass") sent, ${failed:-?} not sent"
    if [ "${passes:-0}" -ge 1 ] && [ "$failed" = 0 ]; then
      log "$(pod "$i"): handed over ($progress)"
      continue
    fi
    eval "note=\${note_$i:-}"
    if [ "$note" != "$progress" ]; then
      log "$(pod "$i"): handing over ($progress)"
      eval "note_$i=\$progress"
    fi
    still="$still $i"
  done
  pending=$still
  [ -n "$pending" ] || break
  if [ "$(now)" -ge "$deadline" ]; then
    for i in $pending; do
      eval "note=\${note_$i:-not started}"
      log "FAILED: $(pod "$i") has not handed its records over within ${timeout}s ($note)"
    done
    log "The StatefulSet keeps its $size pods. A pod that stays and is down makes every pass fail some records; a large volume may need more time: raise scaleIn.timeoutSeconds (and helm's --timeout). The pods asked to leave keep handing over until they restart."
    exit 1
  fi
  sleep 2
done
log "done in $(($(now) - started))s: the StatefulSet may shrink to $keep"
