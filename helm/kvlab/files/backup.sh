#!/bin/sh
# The chart's backup CronJob (templates/backup-cronjob.yaml): asks one pod of the release for a
# backup of the whole cluster and waits for it to complete:
#
#   POST /actuator/kvlab/backup   on the pod's management port, Authorization: Bearer <credential>
#
# The pod coordinates: every node snapshots at one cut and uploads its files to the target; the
# answer comes when the backup is complete (200, its summary) or has failed (5xx, or 409 when a
# backup is running already, each with {"error": "why"}). The answer is printed; any answer but 200
# fails the Job, so that the failure shows in the CronJob's history and in kube-state-metrics.
#
# The pods are tried in order <set>-0, <set>-1, ... by their DNS names; the first that is ready gets
# the request. A pod that takes the request and then fails is not asked again by another pod: the
# next scheduled run tries again.
#
# Environment: KVLAB_SET (pods are $KVLAB_SET-<i>), KVLAB_SERVICE (the headless Service's name,
# fully qualified), KVLAB_MANAGEMENT_PORT, KVLAB_REPLICAS, KVLAB_TIMEOUT_SECONDS (how long to wait
# for the answer), KVLAB_MANAGEMENT_TOKEN_FILE (the admin token or the cluster secret: a backup
# changes what the target holds, so the pods take it only with that credential).
# Needs sh, curl, grep, sed, head: the kvlab image has them.
set -eu

set_name=$KVLAB_SET
service=$KVLAB_SERVICE
port=$KVLAB_MANAGEMENT_PORT
replicas=$KVLAB_REPLICAS
timeout=$KVLAB_TIMEOUT_SECONDS
token=$(cat "$KVLAB_MANAGEMENT_TOKEN_FILE") || { echo "[backup] cannot read the management credential $KVLAB_MANAGEMENT_TOKEN_FILE" >&2; exit 1; }
nl='
'

now() { date +%s; }
started=$(now)
log() { printf '[backup +%ss] %s\n' "$(($(now) - started))" "$*"; }
url() { echo "http://$set_name-$1.$service:$port/actuator$2"; }
# string NAME TEXT: the first "NAME":"<value>" in TEXT.
string() { printf '%s' "$2" | grep -o "\"$1\" *: *\"[^\"]*\"" | head -n 1 | sed 's/^[^:]*: *"//; s/"$//'; }

# The first ready pod; the pods may be starting, so for up to a minute.
pod=""
deadline=$((started + 60))
while [ -z "$pod" ]; do
  i=0
  while [ "$i" -lt "$replicas" ]; do
    if curl -fsS -o /dev/null -m 5 "$(url "$i" /health/readiness)" 2>/dev/null; then
      pod=$i
      break
    fi
    i=$((i + 1))
  done
  [ -n "$pod" ] && break
  if [ "$(now)" -ge "$deadline" ]; then
    log "FAILED: none of $set_name-0..$set_name-$((replicas - 1)) answers ready on its management port $port within 60s (none running or ready, or a NetworkPolicy keeps this Job out): no backup"
    exit 1
  fi
  sleep 3
done

log "asking $set_name-$pod for a backup of the cluster (waiting up to ${timeout}s)"
# The credential goes to curl on its stdin, not on a command line.
out=$(printf 'Authorization: Bearer %s\n' "$token" | curl -sS -m "$timeout" -X POST -H @- \
  -H 'Content-Type: application/json' --data '{}' -w '\n%{http_code}' "$(url "$pod" /kvlab/backup)" 2>&1) || {
  log "FAILED: no answer from $set_name-$pod: $out"
  exit 1
}
code=${out##*"$nl"}
body=${out%"$nl"*}
printf '%s\n' "$body"
case $code in
  200)
    log "backup $(string backup "$body") in $(string target "$body")" ;;
  401 | 403)
    log "FAILED: $set_name-$pod refused the backup ($code): the Job's credential ($KVLAB_MANAGEMENT_TOKEN_FILE) is neither its cluster secret nor its admin token"
    exit 1 ;;
  404)
    log "FAILED: $set_name-$pod has no POST /actuator/kvlab/backup (404): its image is older than backups"
    exit 1 ;;
  *)
    log "FAILED: $set_name-$pod answered $code: $(string error "$body")"
    exit 1 ;;
esac
