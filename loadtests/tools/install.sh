#!/usr/bin/env bash
# Installs the load lab's tools, pinned, into the project-local folder .tools/ (git-ignored).
#   loadtests/tools/install.sh [k6|wrk|jattach|async-profiler|venv|nft|chromium ...]
#   (default: all but nft and chromium)
# Idempotent and silent when everything is there; otherwise one line per tool it installs.
#
#   k6              .tools/bin/k6, built from its Go module (go install go.k6.io/k6@$K6_VERSION);
#                   Go's build and module caches go to $KVLAB_CACHE (default ~/.cache/kvlab) so
#                   every clone on the machine reuses them.
#   wrk             wrk2 (wrk with -R) when one is on PATH, else Debian's wrk through apt.
#   jattach         Debian's jattach through apt.
#   async-profiler  tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION from Maven Central (through
#                   the Maven Wrapper), its libasyncProfiler.so unpacked to
#                   .tools/async-profiler/$ASYNC_PROFILER_VERSION/lib/.
#   venv            .tools/venv with loadtests/lab/requirements.txt (matplotlib, Jinja2), for the
#                   runner and the report generator.
#   nft             Debian's nftables through apt, for the fault scenario's cut-off (only when asked
#                   for by name: the default set leaves it out).
#   chromium        Debian's chromium through apt, for the self-tests that open reports in a headless
#                   browser (lab.firstscreen; only when asked for by name, as make lab-selftest does).
# Environment: KVLAB_TOOLS (default <repo>/.tools), KVLAB_CACHE, GO (the go binary), PYTHON (3.11+),
# JAVA_HOME (a JDK for the Maven Wrapper; default the Temurin 25 of our machines).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=versions.env
. "$HERE/versions.env"

TOOLS=${KVLAB_TOOLS:-$ROOT/.tools}
CACHE=${KVLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}

say() { printf '[tools] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# run_timed "what" command...: runs the command quietly, prints how long it took; its output on failure.
run_timed() {
  local what=$1; shift
  local log; log=$(mktemp)
  local t0=$SECONDS
  say "installing $what ..."
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"
    die "installing $what failed"
  fi
  rm -f "$log"
  say "installed $what ($((SECONDS - t0)) s)"
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo -n "$@"
  else die "need root (or sudo) for: $*"
  fi
}

apt_install() {
  # An old or missing package list makes install fail at once; refresh it then and try again.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; }
}

# wrk2 is wrk with a -R/--rate option; Debian packages only the original wrk.
has_wrk2() {
  command -v wrk2 >/dev/null && return 0
  command -v wrk >/dev/null && wrk 2>&1 | grep -q -- '--rate'
}

install_k6() {
  local k6=$TOOLS/bin/k6
  if [ -x "$k6" ] && "$k6" version 2>/dev/null | grep -q "^k6 $K6_VERSION "; then return; fi
  local go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
  [ -x "$go" ] || die "k6 is built from its Go module and needs Go (1.24 or newer); none found (set GO=...)"
  mkdir -p "$TOOLS/bin" "$CACHE"
  run_timed "k6 $K6_VERSION (go install go.k6.io/k6@$K6_VERSION)" \
    env GOBIN="$TOOLS/bin" GOCACHE="$CACHE/go-build" GOMODCACHE="$CACHE/go-mod" GOFLAGS=-buildvcs=false \
    GOTOOLCHAIN=local CGO_ENABLED=0 "$go" install "go.k6.io/k6@$K6_VERSION"
}

install_wrk() {
  has_wrk2 && return
  command -v wrk >/dev/null && return
  run_timed "wrk (apt-get install wrk; Debian has no wrk2, the lab falls back to wrk)" apt_install wrk
}

install_jattach() {
  command -v jattach >/dev/null && return
  run_timed "jattach (apt-get install jattach)" apt_install jattach
}

install_async_profiler() {
  local dir=$TOOLS/async-profiler/$ASYNC_PROFILER_VERSION
  local platform
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x64 ;;
    Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
    *) die "async-profiler: no library for $(uname -s)-$(uname -m) in the Maven artifact" ;;
  esac
  [ -f "$dir/lib/libasyncProfiler.so" ] && return
  local java_home=${JAVA_HOME:-}
  [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ] && java_home=/usr/lib/jvm/temurin-25-jdk-amd64
  [ -n "$java_home" ] || die "async-profiler is fetched with the Maven Wrapper, which needs JAVA_HOME"
  mkdir -p "$dir/lib"
  run_timed "async-profiler $ASYNC_PROFILER_VERSION (Maven Central tools.profiler:async-profiler)" \
    env JAVA_HOME="$java_home" "$ROOT/mvnw" -B -q -ntp -f "$ROOT/pom.xml" -N \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    -Dartifact="tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION" -DoutputDirectory="$dir"
  "$java_home/bin/jar" --file="$dir/async-profiler-$ASYNC_PROFILER_VERSION.jar" --extract \
    --dir="$dir/unpacked" "$platform/libasyncProfiler.so"
  mv "$dir/unpacked/$platform/libasyncProfiler.so" "$dir/lib/libasyncProfiler.so.part"
  chmod 0755 "$dir/lib/libasyncProfiler.so.part"
  mv "$dir/lib/libasyncProfiler.so.part" "$dir/lib/libasyncProfiler.so"
  rm -rf "$dir/unpacked"
}

install_nft() {
  command -v nft >/dev/null && return
  run_timed "nft (apt-get install nftables, to cut a node off in the fault scenario)" apt_install nftables
}

install_chromium() {
  command -v chromium >/dev/null && return
  run_timed "chromium (apt-get install chromium, to open reports in a headless browser)" apt_install chromium
}

install_venv() {
  local venv=$TOOLS/venv req=$ROOT/loadtests/lab/requirements.txt
  local want; want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then return; fi
  local python=${PYTHON:-}
  if [ -z "$python" ]; then
    for p in python3.13 python3.12 python3.11 python3; do
      if command -v "$p" >/dev/null && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        python=$p; break
      fi
    done
  fi
  [ -n "$python" ] || die "the report generator needs Python 3.11 or newer (set PYTHON=...)"
  "$python" -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
  rm -rf "$venv"
  run_timed "Python venv for the report ($(basename "$python"), $(grep -cv '^#' "$req") pinned packages)" \
    sh -c "'$python' -m venv '$venv' && '$venv/bin/pip' install -q --disable-pip-version-check -r '$req'"
  echo "$want" >"$venv/.requirements.sha256"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(k6 wrk jattach async-profiler venv)
for tool in "${wanted[@]}"; do
  case "$tool" in
    k6) install_k6 ;;
    wrk) install_wrk ;;
    jattach) install_jattach ;;
    async-profiler) install_async_profiler ;;
    venv) install_venv ;;
    nft) install_nft ;;
    chromium) install_chromium ;;
    *) die "unknown tool '$tool' (k6, wrk, jattach, async-profiler, venv, nft, chromium)" ;;
  esac
done
