#!/bin/sh
# The chart's restore init container (templates/statefulset.yaml, restore.backup set): before the
# node starts, the kvlab image's restore command fetches this pod's share of the backup from the
# backup target (KVLAB_BACKUP_* in the environment), checks every file's size and SHA-256 against
# the backup's manifest, and puts it in place in the node's storage directory:
#
#   java -jar kvlab-service.jar restore --backup=NAME|latest --data=DIR --nodes=N --index=I [--force]
#
# Pod <fullname>-<i> is index i of N = replicaCount: it gets the backup's nodes j with j mod N == i
# (none when i is past the backup's size: it starts empty). The command does nothing on a volume
# whose marker (DIR/.kvlab-restored) names the same backup, or any backup when asked for "latest"
# (a newer backup made since must not replace what the node wrote after its restore), and refuses
# a volume that holds data unless forced; a failure leaves the volume as it was and keeps the node
# from starting (exit 2 no such backup, 3 data without force, 4 checksums do not match, 1 other).
#
# Environment: KVLAB_RESTORE_BACKUP, KVLAB_RESTORE_NODES, KVLAB_RESTORE_FORCE (true|false),
# KVLAB_STORAGE_DIR, JAVA_OPTS, HOSTNAME (the pod's name), and the KVLAB_BACKUP_* of the target.
set -eu

data=$KVLAB_STORAGE_DIR
backup=$KVLAB_RESTORE_BACKUP
index=${HOSTNAME##*-}

case $index in
  '' | *[!0-9]*)
    echo "[restore] cannot tell this pod's ordinal from its name $HOSTNAME" >&2
    exit 2 ;;
esac

set -- restore --backup="$backup" --data="$data" --nodes="$KVLAB_RESTORE_NODES" --index="$index"
[ "$KVLAB_RESTORE_FORCE" != true ] || set -- "$@" --force
# shellcheck disable=SC2086 # JAVA_OPTS holds several options
exec java ${JAVA_OPTS:-} -jar /app/kvlab-service.jar "$@"
