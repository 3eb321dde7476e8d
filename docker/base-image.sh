#!/usr/bin/env bash
# Prints the BASE_IMAGE that docker/service.Dockerfile should be built FROM, making sure it exists.
#
#   BASE_IMAGE set               -> that image, as given (the caller knows best)
#   debian:trixie-slim is local  -> debian:trixie-slim
#   a registry answers           -> debian:trixie-slim (docker build pulls it)
#   otherwise (our machines)     -> kvlab/base:trixie-jre25, built offline: mmdebstrap makes a Debian
#                                   trixie rootfs with the JRE from Debian's apt mirror, and
#                                   `docker import` turns it into an image.
#
# The rootfs tar is cached under $KVLAB_CACHE_DIR (default ~/.cache/kvlab): a rerun imports it
# again if the image is gone, and does nothing when the image is there. The cache and the image
# carry a hash of the recipe below, so changing the recipe rebuilds them.
#
# Environment:
#   BASE_IMAGE          use this image, skip detection
#   KVLAB_OFFLINE_BASE  1: build the offline base even when a registry answers
#   KVLAB_BASE_REFRESH  1: rebuild the offline base from the mirror (security updates)
#   KVLAB_DEBIAN_MIRROR Debian mirror for mmdebstrap (default http://deb.debian.org)
#
# Only the image name goes to stdout; progress goes to stderr.
set -euo pipefail

REGISTRY_BASE=debian:trixie-slim
OFFLINE_TAG=kvlab/base:trixie-jre25
SUITE=trixie
# What the Dockerfile needs from its base: the JRE, TLS roots, curl for the HEALTHCHECK, and passwd
# (useradd), which the apt variant leaves out but debian:trixie-slim has.
PACKAGES=openjdk-25-jre-headless,ca-certificates,curl,passwd
MIRROR=${KVLAB_DEBIAN_MIRROR:-http://deb.debian.org}
SOURCES=(
  "deb $MIRROR/debian $SUITE main"
  "deb $MIRROR/debian $SUITE-updates main"
  "deb $MIRROR/debian-security $SUITE-security main"
)
# As lean as debian:*-slim: no manuals, no translations, no docs but the copyrights.
DPKG_OPTS=(
  'path-exclude=/usr/share/man/*'
  'path-exclude=/usr/share/locale/*'
  'path-include=/usr/share/locale/locale.alias'
  'path-exclude=/usr/share/doc/*'
  'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/info/*'
)
# The JRE's postinst links its manual page with update-alternatives, which fails when the
# directory was never created (manuals are excluded): create it before the packages go in.
# The host's resolv.conf and hostname do not belong in an image: Docker provides both.
HOOKS=(
  '--essential-hook=mkdir -p "$1/usr/share/man/man1"'
  '--customize-hook=rm -f "$1/etc/resolv.conf" "$1/etc/hostname"'
)
CACHE_DIR=${KVLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}

say() { printf '[base-image] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# shellcheck source=as-root.sh
. "$(dirname "${BASH_SOURCE[0]}")/as-root.sh"

if [ -n "${BASE_IMAGE:-}" ]; then
  echo "$BASE_IMAGE"
  exit 0
fi

docker info >/dev/null 2>&1 || die "no Docker engine answers: run docker/docker-engine.sh (or make docker-engine) first"

# Whether a registry that could serve debian:trixie-slim answers: Docker Hub or a mirror the engine
# is configured with. Any HTTP answer on /v2/ counts (Docker Hub answers 401); nothing is pulled.
registry_answers() {
  command -v curl >/dev/null 2>&1 || return 1
  local mirrors url code
  mirrors=$(docker info --format '{{range .RegistryConfig.Mirrors}}{{.}} {{end}}' 2>/dev/null || true)
  for url in $mirrors https://registry-1.docker.io; do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "${url%/}/v2/" 2>/dev/null || true)
    if [ -n "$code" ] && [ "$code" != 000 ]; then
      return 0
    fi
  done
  return 1
}

if [ "${KVLAB_OFFLINE_BASE:-0}" != 1 ]; then
  if docker image inspect "$REGISTRY_BASE" >/dev/null 2>&1; then
    echo "$REGISTRY_BASE"
    exit 0
  fi
  if registry_answers; then
    echo "$REGISTRY_BASE"
    exit 0
  fi
fi

recipe=$(printf '%s\n' "$SUITE" "$PACKAGES" "${SOURCES[@]}" "${DPKG_OPTS[@]}" "${HOOKS[@]}" | sha256sum | cut -c1-12)
tarball="$CACHE_DIR/rootfs-$SUITE-jre25-$recipe.tar"

if [ "${KVLAB_BASE_REFRESH:-0}" != 1 ] &&
   [ "$(docker image inspect --format '{{index .Config.Labels "dev.kvlab.base.recipe"}}' "$OFFLINE_TAG" 2>/dev/null || true)" = "$recipe" ]; then
  echo "$OFFLINE_TAG"
  exit 0
fi

if [ "${KVLAB_BASE_REFRESH:-0}" = 1 ] || [ ! -s "$tarball" ]; then
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    say "installing mmdebstrap with apt"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
  fi
  mkdir -p "$CACHE_DIR"
  say "no registry answers: building $OFFLINE_TAG offline from $MIRROR ($SUITE, $PACKAGES)"
  dpkg_args=()
  for opt in "${DPKG_OPTS[@]}"; do dpkg_args+=("--dpkgopt=$opt"); done
  partial="$tarball.partial"
  rm -f "$partial"
  as_root mmdebstrap --quiet --format=tar --variant=apt --include="$PACKAGES" "${dpkg_args[@]}" "${HOOKS[@]}" \
    "$SUITE" "$partial" "${SOURCES[@]}"
  as_root chown "$(id -u):$(id -g)" "$partial"
  mv "$partial" "$tarball"
  # Older recipes' tarballs are of no further use.
  find "$CACHE_DIR" -maxdepth 1 -name "rootfs-$SUITE-jre25-*.tar" ! -name "$(basename "$tarball")" -delete
fi

say "importing $tarball as $OFFLINE_TAG"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' \
  --change "LABEL dev.kvlab.base.recipe=$recipe" \
  --change "LABEL org.opencontainers.image.description=\"Debian $SUITE with $PACKAGES, built offline by kvlab's docker/base-image.sh\"" \
  --message "mmdebstrap --variant=apt --include=$PACKAGES $SUITE" \
  "$tarball" "$OFFLINE_TAG" >/dev/null
echo "$OFFLINE_TAG"
