#!/usr/bin/env bash
# A flame graph of a kvlab pod, through its profiler sidecar (the chart's profiler.enabled=true):
#   k8s/profile-pod.sh POD [EVENT] [SECONDS] [DIR]      (make profile POD=kvlab-1 EVENT=cpu SECONDS=30)
#     POD      a kvlab pod, e.g. kvlab-1
#     EVENT    cpu (default) | alloc | lock | wall
#     SECONDS  how long to profile (default 30)
#     DIR      local folder for the HTML (default ./profiles)
# Environment: K8S_NAMESPACE (default: the kubeconfig context's), KUBECTL (default kubectl).
# Prints the local path of the flame graph on stdout; progress goes to stderr.
set -euo pipefail

POD=${1:?usage: k8s/profile-pod.sh POD [EVENT] [SECONDS] [DIR]}
EVENT=${2:-cpu}
SECONDS_=${3:-30}
DIR=${4:-profiles}
KUBECTL=${KUBECTL:-kubectl}
ns_args=()
[ -z "${K8S_NAMESPACE:-}" ] || ns_args=(--namespace "$K8S_NAMESPACE")

say() { printf '[profile %s] %s\n' "$POD" "$*" >&2; }
die() { say "$*"; exit 1; }

[[ $EVENT =~ ^[a-zA-Z0-9_.:-]+$ ]] || die "bad event: $EVENT"
[[ $SECONDS_ =~ ^[0-9]+([.][0-9]+)?$ ]] || die "SECONDS must be a number: $SECONDS_"

containers=$("$KUBECTL" "${ns_args[@]}" get pod "$POD" -o jsonpath='{.spec.containers[*].name}') ||
  die "no pod $POD${K8S_NAMESPACE:+ in namespace $K8S_NAMESPACE}"
[[ " $containers " == *" profiler "* ]] ||
  die "pod $POD has no profiler sidecar (containers: $containers): install the chart with --set profiler.enabled=true"

name="$POD-$EVENT-$(date +%Y%m%d-%H%M%S).html"
remote=/tmp/profiles/$name
say "profiling $EVENT for ${SECONDS_}s"
"$KUBECTL" "${ns_args[@]}" exec "$POD" -c profiler -- kvlab-profile "$EVENT" "$SECONDS_" "$remote"

mkdir -p "$DIR"
# (kubectl cp runs tar in the sidecar, which says that it drops the leading "/" of the path.)
"$KUBECTL" "${ns_args[@]}" cp --container profiler "$POD:$remote" "$DIR/$name" 2>&1 >&2 | grep -v "Removing leading" >&2 || true
"$KUBECTL" "${ns_args[@]}" exec "$POD" -c profiler -- rm -f "$remote"
[ -s "$DIR/$name" ] || die "copied nothing from $POD:$remote"
say "wrote $DIR/$name ($(wc -c <"$DIR/$name") bytes)"
echo "$DIR/$name"
