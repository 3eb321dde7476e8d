#!/usr/bin/env bash
# Builds the profiler sidecar image (k8s/profiler/Dockerfile), offline as everywhere else:
#   k8s/profiler/build.sh IMAGE [VERSION]
# - the base is whatever docker/base-image.sh provides (BASE_IMAGE=... overrides it);
# - the async-profiler jar (version and SHA-256 pinned in the Dockerfile) comes from Maven Central
#   through the host, cached under $KVLAB_CACHE_DIR (default ~/.cache/kvlab); MAVEN_REPO overrides
#   the repository (a mirror); the Dockerfile checks the checksum again;
# - the build context holds exactly the Dockerfile, the jar, kvlab-profile and the load lab's
#   loadtests/profiler/profile.sh (not a copy in this folder: the one file, sent as it is).
set -euo pipefail

IMAGE=${1:?usage: k8s/profiler/build.sh IMAGE [VERSION]}
VERSION=${2:-0.1.0}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DOCKERFILE=$ROOT/k8s/profiler/Dockerfile
MAVEN_REPO=${MAVEN_REPO:-https://repo1.maven.org/maven2}
CACHE_DIR=${KVLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}

say() { printf '[profiler-image] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

version=$(sed -n 's/^ARG ASYNC_PROFILER_VERSION=//p' "$DOCKERFILE" | head -n 1)
sha256=$(sed -n 's/^ARG ASYNC_PROFILER_SHA256=//p' "$DOCKERFILE" | head -n 1)
{ [ -n "$version" ] && [ -n "$sha256" ]; } || die "no ASYNC_PROFILER_VERSION/ASYNC_PROFILER_SHA256 in $DOCKERFILE"
jar_name=async-profiler-$version.jar
jar=$CACHE_DIR/$jar_name

if ! echo "$sha256  $jar" | sha256sum -c --status - 2>/dev/null; then
  url=$MAVEN_REPO/tools/profiler/async-profiler/$version/$jar_name
  say "fetching $url"
  mkdir -p "$CACHE_DIR"
  curl -fsSL --retry 3 -o "$jar.part" "$url" || die "cannot fetch $url"
  echo "$sha256  $jar.part" | sha256sum -c --status - || die "$url does not match the SHA-256 pinned in $DOCKERFILE"
  mv "$jar.part" "$jar"
fi

base=$("$ROOT/docker/base-image.sh")

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/k8s/profiler" "$context/loadtests/profiler"
cp "$DOCKERFILE" "$ROOT/k8s/profiler/kvlab-profile" "$context/k8s/profiler/"
cp "$ROOT/loadtests/profiler/profile.sh" "$context/loadtests/profiler/"
cp "$jar" "$context/"

say "docker build $IMAGE FROM $base (async-profiler $version)"
docker build --file "$context/k8s/profiler/Dockerfile" --build-arg BASE_IMAGE="$base" --build-arg VERSION="$VERSION" \
  --tag "$IMAGE" "$context" >&2
docker image ls "$IMAGE" --format "$IMAGE: {{.Size}}" >&2
