#!/bin/sh
# The chart's restore init container (templates/statefulset.yaml, restore.backup set): before the
# node starts, the kvlab image's restore command fetches this pod's share of the backup from the
# backup target (KVLAB_BACKUP_* in the environment), checks every file's size and SHA-256 against
# the backup's manifest, and puts it in place in the node's storage directory:
#
#   java -jar kvlab-service.jar restore --backup=NAME|latest --data=DIR --nodes=N --index=I [--force]
#
# Pod <fullname>-<i> is index i of N = replicaCount: it gets the backup's nodes j with j mod N == i
# (none when i is past the backup's size: it starts empty). The command itself does nothing on a
# volume whose marker (DIR/.kvlab-restored) names the same backup, and refuses a volume that holds
# data unless forced; a failure leaves the volume as it was and keeps the node from starting.
#
# "latest" is resolved here once per volume: a volume restored from a backup is not restored again
# when a newer backup has appeared since (the backup CronJob makes them), which would replace what
# the node wrote after the restore, or, without force, keep the pod from starting.
#
# Environment: KVLAB_RESTORE_BACKUP, KVLAB_RESTORE_NODES, KVLAB_RESTORE_FORCE (true|false),
# KVLAB_STORAGE_DIR, JAVA_OPTS, HOSTNAME (the pod's name), and the KVLAB_BACKUP_* of the target.
set -eu

data=$KVLAB_STORAGE_DIR
backup=$KVLAB_RESTORE_BACKUP
index=${HOSTNAME##*-}
marker=$data/.kvlab-restored

case $index in
  '' | *[!0-9]*)
    echo "[restore] cannot tell this pod's ordinal from its name $HOSTNAME" >&2
    exit 2 ;;
esac

if [ "$backup" = latest ] && [ -f "$marker" ]; then
  echo "[restore] $data was restored from $(cat "$marker") already: restore.backup=latest does not restore a volume twice"
  exit 0
fi

echo "[restore] $HOSTNAME: node $index of $KVLAB_RESTORE_NODES, backup $backup from ${KVLAB_BACKUP_TARGET:-?} into $data"
set -- restore --backup="$backup" --data="$data" --nodes="$KVLAB_RESTORE_NODES" --index="$index"
[ "$KVLAB_RESTORE_FORCE" != true ] || set -- "$@" --force
# shellcheck disable=SC2086 # JAVA_OPTS holds several options
exec java ${JAVA_OPTS:-} -jar /app/kvlab-service.jar "$@"
