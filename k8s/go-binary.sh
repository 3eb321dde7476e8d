#!/usr/bin/env bash
# Builds a Go command from its module for linux/ARCH into DEST, once: a DEST that exists is kept.
#   k8s/go-binary.sh MODULE/PATH@VERSION ARCH DEST [GO-INSTALL-FLAG ...]
# For the images the cluster runs (k6, kube-router): CGO off, and Go's caches under
# ${KVLAB_CACHE:-~/.cache/kvlab} (go-build, go-mod), shared with loadtests/tools/install.sh so every
# clone on the machine reuses them. Environment: GO (the go binary), KVLAB_CACHE. Progress goes to stderr.
set -euo pipefail

package=${1:?usage: k8s/go-binary.sh MODULE/PATH@VERSION ARCH DEST [GO-INSTALL-FLAG ...]}
arch=${2:?usage: k8s/go-binary.sh MODULE/PATH@VERSION ARCH DEST [GO-INSTALL-FLAG ...]}
dest=${3:?usage: k8s/go-binary.sh MODULE/PATH@VERSION ARCH DEST [GO-INSTALL-FLAG ...]}
shift 3
CACHE=${KVLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}
name=$(basename "${package%@*}")

say() { printf '[go-binary] %s\n' "$*" >&2; }

[ -x "$dest" ] && exit 0
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$go" ] || { say "$name is built from its Go module and needs Go (1.24 or newer); none found (set GO=...)"; exit 1; }
gopath=$(mktemp -d)
trap 'chmod -R u+w "$gopath" && rm -rf "$gopath"' EXIT
say "building $name for linux/$arch (go install $package, CGO off; minutes the first time)"
t0=$SECONDS
env GOOS=linux GOARCH="$arch" CGO_ENABLED=0 GOPATH="$gopath" GOCACHE="$CACHE/go-build" \
  GOMODCACHE="$CACHE/go-mod" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
  "$go" install "$@" "$package" >&2
# go install puts a cross-compiled command in bin/linux_<arch>/, a native one in bin/.
built=$gopath/bin/$name
[ -x "$built" ] || built=$gopath/bin/linux_$arch/$name
[ -x "$built" ] || { say "go install left no $name in $gopath/bin"; exit 1; }
mkdir -p "$(dirname "$dest")"
mv "$built" "$dest.part" && mv "$dest.part" "$dest"
say "built $name in $((SECONDS - t0)) s"
