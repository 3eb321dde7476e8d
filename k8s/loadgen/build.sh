#!/usr/bin/env bash
# Builds the load generator images of the in-cluster lab (make lab-k8s-images), offline:
#   k8s/loadgen/build.sh K6_IMAGE WRK_IMAGE WRK2_IMAGE [VERSION]
# - K6_IMAGE: k6 built on the host from its Go module, the version pinned in
#   loadtests/tools/versions.env, for linux and the Docker engine's architecture (CGO off), copied
#   into an image FROM the base docker/base-image.sh provides (k6.Dockerfile). The binary is cached
#   under $KVLAB_CACHE_DIR (default ~/.cache/kvlab), Go's caches are the ones loadtests/tools/install.sh uses.
# - WRK_IMAGE: Debian's wrk (wrk.Dockerfile, target wrk).
# - WRK2_IMAGE: wrk2 from source (target wrk2), which needs GitHub: WRK2=auto (default) tries when
#   https://github.com/giltene/wrk2 answers, WRK2=1 must build it, WRK2=0 never tries. A failed or
#   skipped wrk2 build is not an error: the lab then uses WRK_IMAGE and its report says so.
# Images that exist are rebuilt (Docker's cache makes that quick). Environment: BASE_IMAGE, GO,
# WRK2, WRK2_REF (a commit or tag of wrk2), KVLAB_CACHE_DIR. Progress goes to stderr.
set -euo pipefail

K6_IMAGE=${1:?usage: k8s/loadgen/build.sh K6_IMAGE WRK_IMAGE WRK2_IMAGE [VERSION]}
WRK_IMAGE=${2:?usage: k8s/loadgen/build.sh K6_IMAGE WRK_IMAGE WRK2_IMAGE [VERSION]}
WRK2_IMAGE=${3:?usage: k8s/loadgen/build.sh K6_IMAGE WRK_IMAGE WRK2_IMAGE [VERSION]}
VERSION=${4:-0.1.0}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE_DIR=${KVLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}
WRK2=${WRK2:-auto}
K6_VERSION=$(sed -n 's/^K6_VERSION=//p' "$ROOT/loadtests/tools/versions.env")

say() { printf '[loadgen-images] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ -n "$K6_VERSION" ] || die "no K6_VERSION in loadtests/tools/versions.env"
docker info >/dev/null 2>&1 || die "no Docker engine answers: run make docker-engine first"
base=$("$ROOT/docker/base-image.sh")
arch=$(docker version --format '{{.Server.Arch}}')

# k6 for linux/$arch, built once per version and architecture.
k6_bin=$CACHE_DIR/k6-image/$K6_VERSION-linux-$arch/k6
KVLAB_CACHE=$CACHE_DIR "$ROOT/k8s/go-binary.sh" "go.k6.io/k6@$K6_VERSION" "$arch" "$k6_bin"

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$HERE/k6.Dockerfile" "$HERE/wrk.Dockerfile" "$context/"
cp "$k6_bin" "$context/k6"

say "docker build $K6_IMAGE FROM $base (k6 $K6_VERSION)"
docker build --quiet --file "$context/k6.Dockerfile" --build-arg BASE_IMAGE="$base" \
  --build-arg K6_VERSION="$K6_VERSION" --build-arg VERSION="$VERSION" --tag "$K6_IMAGE" "$context" >/dev/null
rm "$context/k6"

say "docker build $WRK_IMAGE FROM $base (Debian's wrk)"
docker build --quiet --file "$context/wrk.Dockerfile" --target wrk --build-arg BASE_IMAGE="$base" \
  --build-arg VERSION="$VERSION" --tag "$WRK_IMAGE" "$context" >/dev/null

github_answers() {
  command -v git >/dev/null && timeout 15 git ls-remote --exit-code https://github.com/giltene/wrk2 HEAD >/dev/null 2>&1
}
try_wrk2=0
case $WRK2 in
  1) try_wrk2=1 ;;
  0) say "WRK2=0: not building wrk2" ;;
  auto)
    if github_answers; then try_wrk2=1; else say "GitHub does not answer: no wrk2 image (the lab uses Debian's wrk; WRK2=1 forces a try)"; fi ;;
  *) die "WRK2 must be auto, 1 or 0, not '$WRK2'" ;;
esac
if [ "$try_wrk2" = 1 ]; then
  say "docker build $WRK2_IMAGE FROM $base (wrk2 from source${WRK2_REF:+ at $WRK2_REF})"
  if docker build --file "$context/wrk.Dockerfile" --target wrk2 --build-arg BASE_IMAGE="$base" \
      --build-arg VERSION="$VERSION" --build-arg WRK2_REF="${WRK2_REF:-}" --tag "$WRK2_IMAGE" "$context" >&2; then
    say "built $WRK2_IMAGE"
  elif [ "$WRK2" = 1 ]; then
    die "building $WRK2_IMAGE failed"
  else
    say "building $WRK2_IMAGE failed: the lab uses Debian's wrk ($WRK_IMAGE)"
  fi
fi
docker image ls --format '{{.Repository}}:{{.Tag}}: {{.Size}}' |
  grep -E "^($K6_IMAGE|$WRK_IMAGE|$WRK2_IMAGE):" >&2 || true
