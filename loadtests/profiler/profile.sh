#!/usr/bin/env bash
# Profiles a running JVM with async-profiler for a while and writes a flame graph.
#   profile.sh PID EVENT SECONDS OUTPUT
#     EVENT    cpu | alloc | lock | wall (or any async-profiler event: itimer, ctimer, cache-misses, ...)
#     SECONDS  how long to profile (fractions allowed)
#     OUTPUT   where to write: *.html is an HTML flame graph, *.jfr a JFR recording, *.collapsed
#              collapsed stacks
# Environment:
#   ASYNC_PROFILER_LIB  libasyncProfiler.so (default: the one loadtests/tools/install.sh unpacked)
#   JATTACH             the jattach binary (default: jattach on PATH)
#   PROFILER_OPTS       extra async-profiler options, comma-separated (for example interval=1ms,threads)
#
# This is the one code path for local processes and for the Kubernetes sidecar (jattach and the
# library in a container that shares the pod's process namespace): the library is loaded by the
# target JVM from the target's own file system, so when the target sees another root than we do
# (/proc/PID/root), the library is copied into the target's /tmp first; the target JVM writes the
# flame graph into its /tmp, and we move it out through /proc/PID/root.
set -euo pipefail

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -eq 4 ] || usage
PID=$1 EVENT=$2 SECONDS_=$3 OUTPUT=$4

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${ASYNC_PROFILER_LIB:-}" ] && [ -f "$HERE/../tools/versions.env" ]; then
  # shellcheck source=../tools/versions.env
  . "$HERE/../tools/versions.env"
  ASYNC_PROFILER_LIB=$(cd "$HERE/../.." && pwd)/.tools/async-profiler/$ASYNC_PROFILER_VERSION/lib/libasyncProfiler.so
fi
LIB=${ASYNC_PROFILER_LIB:?set ASYNC_PROFILER_LIB to libasyncProfiler.so}
JATTACH=${JATTACH:-jattach}

say() { printf '[profile %s %s] %s\n' "$PID" "$EVENT" "$*" >&2; }
die() { say "$*"; exit 1; }

[[ $PID =~ ^[0-9]+$ ]] || die "PID must be a number: $PID"
[[ $SECONDS_ =~ ^[0-9]+([.][0-9]+)?$ ]] || die "SECONDS must be a number: $SECONDS_"
[[ $EVENT =~ ^[a-zA-Z0-9_.:-]+$ ]] || die "bad event: $EVENT"
[ -d "/proc/$PID" ] || die "no process $PID"
[ -f "$LIB" ] || die "no async-profiler library at $LIB (run loadtests/tools/install.sh)"
command -v "$JATTACH" >/dev/null || die "no jattach (apt-get install jattach, or set JATTACH)"

ROOTFS=/proc/$PID/root
if [ "$ROOTFS/" -ef / ]; then
  TARGET_LIB=$LIB
else
  # The target sees another file system: put the library where it can load it. Never overwrite
  # a copy in place (the JVM may have it mapped): write a new file and rename it over.
  TARGET_LIB=/tmp/kvlab-async-profiler/$(sha256sum "$LIB" | cut -c1-16)/libasyncProfiler.so
  if ! cmp -s "$LIB" "$ROOTFS$TARGET_LIB"; then
    mkdir -p "$(dirname "$ROOTFS$TARGET_LIB")"
    cp "$LIB" "$ROOTFS$TARGET_LIB.$$"
    chmod 0755 "$(dirname "$ROOTFS$TARGET_LIB")" "$ROOTFS$TARGET_LIB.$$"
    mv -f "$ROOTFS$TARGET_LIB.$$" "$ROOTFS$TARGET_LIB"
  fi
fi

case "$OUTPUT" in
  *.html) SUFFIX=html ;;
  *.jfr) SUFFIX=jfr ;;
  *) SUFFIX=collapsed ;;
esac
# Written by the target JVM, in its /tmp (world-writable, whichever user the JVM runs as).
TARGET_OUT=/tmp/kvlab-profile-$$-$EVENT.$SUFFIX

agent() {
  local out
  if ! out=$("$JATTACH" "$PID" load "$TARGET_LIB" true "$1" 2>&1); then
    say "jattach $PID load $TARGET_LIB true $1 failed:"
    printf '%s\n' "$out" >&2
    return 1
  fi
}

started=0
stop_on_exit() { if [ "$started" = 1 ]; then agent stop >/dev/null 2>&1 || true; fi; }
trap stop_on_exit EXIT
trap 'exit 130' INT TERM

agent "start,event=$EVENT${PROFILER_OPTS:+,$PROFILER_OPTS}" || die "could not start profiling"
started=1
sleep "$SECONDS_"
agent "stop,file=$TARGET_OUT,title=kvlab $EVENT pid $PID" || die "could not stop profiling"
started=0

[ -s "$ROOTFS$TARGET_OUT" ] || die "the JVM wrote no $TARGET_OUT"
mkdir -p "$(dirname "$OUTPUT")"
mv -f "$ROOTFS$TARGET_OUT" "$OUTPUT"
say "wrote $OUTPUT"
