#!/usr/bin/env bash
# Installs an enforcing NetworkPolicy controller into the cluster KUBECONFIG points at, offline:
# kube-router's network policy controller alone (make k8s-netpol NETPOL_ENFORCER=kube-router).
#   k8s/netpol/install.sh
# For clusters whose CNI does not enforce NetworkPolicy, such as k8s-local's bridge. kind (v0.24 and
# later) enforces NetworkPolicy by itself and needs none of this.
#
# 1. kube-router $KUBE_ROUTER_VERSION built on the host from its Go module, for linux and the Docker
#    engine's architecture (CGO off); the binary is cached under $KVLAB_CACHE (default
#    ~/.cache/kvlab), Go's caches are the ones loadtests/tools/install.sh uses for k6;
# 2. the image $NETPOL_IMAGE FROM the base docker/base-image.sh provides (Dockerfile), with
#    Debian's iptables and ipset;
# 3. the image loaded into the cluster with $IMAGE_LOADER (the image name is its last argument);
# 4. kube-router.yaml applied (DaemonSet in kube-system on the node's network, its RBAC), with the
#    cluster's Service range (from its ServiceCIDR object; NETPOL_SERVICE_CIDR overrides);
# 5. waited for until every pod is ready: its readiness probe passes only once kube-router has
#    synced its rules (kube-router-netpol synced).
# Reruns are quick: the binary and Docker's layers are cached, an unchanged image rolls no pod.
#
# Environment: IMAGE_LOADER (default: kind load docker-image --name kvlab), KUBECTL, NETPOL_IMAGE,
# NETPOL_SERVICE_CIDR, NETPOL_TIMEOUT (seconds, default 180), KVLAB_CACHE, GO, BASE_IMAGE.
# Progress goes to stderr. k8s/netpol/uninstall.sh removes it again.
set -euo pipefail

KUBE_ROUTER_VERSION=v2.1.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${KVLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}
KUBECTL=${KUBECTL:-kubectl}
IMAGE_LOADER=${IMAGE_LOADER:-kind load docker-image --name kvlab}
NETPOL_IMAGE=${NETPOL_IMAGE:-kvlab/kube-router:${KUBE_ROUTER_VERSION#v}}
NETPOL_TIMEOUT=${NETPOL_TIMEOUT:-180}
MODULE=github.com/cloudnativelabs/kube-router/v2

say() { printf '[netpol %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "$*"; exit 1; }
t_start=$SECONDS

docker info >/dev/null 2>&1 || die "no Docker engine answers: run make docker-engine first"
"$KUBECTL" version >/dev/null 2>&1 || die "no Kubernetes answers at ${KUBECONFIG:-~/.kube/config}"
arch=$(docker version --format '{{.Server.Arch}}')

# 1. kube-router for linux/$arch, built once per version and architecture.
bin=$CACHE/kube-router/$KUBE_ROUTER_VERSION-linux-$arch/kube-router
"$ROOT/k8s/go-binary.sh" "$MODULE/cmd/kube-router@$KUBE_ROUTER_VERSION" "$arch" "$bin" \
  -trimpath -ldflags "-s -w -X $MODULE/pkg/version.Version=$KUBE_ROUTER_VERSION"

# 2. The image, from exactly the files it holds.
base=$("$ROOT/docker/base-image.sh")
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$HERE/Dockerfile" "$HERE/kube-router-netpol" "$bin" "$context/"
say "docker build $NETPOL_IMAGE FROM $base (kube-router $KUBE_ROUTER_VERSION)"
docker build --quiet --file "$context/Dockerfile" --build-arg BASE_IMAGE="$base" \
  --build-arg KUBE_ROUTER_VERSION="$KUBE_ROUTER_VERSION" --tag "$NETPOL_IMAGE" "$context" >/dev/null
image_id=$(docker image inspect --format '{{.Id}}' "$NETPOL_IMAGE")
# The image this build replaced, untagged now, unless a container still uses it.
docker image prune --force --filter label=dev.kvlab.netpol.version >/dev/null

# 3. Into the cluster.
read -r -a loader <<<"$IMAGE_LOADER"
say "$IMAGE_LOADER $NETPOL_IMAGE"
"${loader[@]}" "$NETPOL_IMAGE" >&2

# 4. The Service range kube-router lets through to the node; Kubernetes 1.33+ publishes it.
cidr=${NETPOL_SERVICE_CIDR:-}
if [ -z "$cidr" ]; then
  cidr=$("$KUBECTL" get servicecidrs.networking.k8s.io kubernetes -o jsonpath='{.spec.cidrs[*]}' 2>/dev/null |
    tr ' ' '\n' | grep -m 1 '\.' || true)
fi
if [ -z "$cidr" ]; then
  cidr=10.96.0.0/12
  say "the cluster publishes no ServiceCIDR: assuming $cidr (kube-router's default; set NETPOL_SERVICE_CIDR)"
fi
say "applying k8s/netpol/kube-router.yaml (kube-system/kube-router, Service range $cidr)"
sed -e "s|@IMAGE@|$NETPOL_IMAGE|g" -e "s|@IMAGE_ID@|$image_id|g" -e "s|@SERVICE_CIDR@|$cidr|g" \
  "$HERE/kube-router.yaml" | "$KUBECTL" apply -f - >&2

# 5. Ready means synced (the readiness probe).
say "waiting up to ${NETPOL_TIMEOUT}s for kube-router to run and sync on every node"
if ! "$KUBECTL" -n kube-system rollout status daemonset/kube-router --timeout="${NETPOL_TIMEOUT}s" >&2; then
  "$KUBECTL" -n kube-system get pods -l app.kubernetes.io/name=kube-router -o wide >&2 || true
  "$KUBECTL" -n kube-system logs -l app.kubernetes.io/name=kube-router --tail=30 >&2 || true
  die "kube-router is not ready on every node after ${NETPOL_TIMEOUT}s"
fi
for pod in $("$KUBECTL" -n kube-system get pods -l app.kubernetes.io/name=kube-router -o name); do
  "$KUBECTL" -n kube-system exec "$pod" -- kube-router-netpol synced || die "$pod is ready but has not synced"
  chains=$("$KUBECTL" -n kube-system exec "$pod" -- iptables -t filter -S | grep -c '^-N KUBE-POD-FW-' || true)
  say "$pod on $("$KUBECTL" -n kube-system get "$pod" -o jsonpath='{.spec.nodeName}'): synced, $chains pod firewall chains"
done
say "kube-router $KUBE_ROUTER_VERSION enforces NetworkPolicy (install took $((SECONDS - t_start)) s)"
