#!/usr/bin/env bash
# One call of the replica protocol by hand, signed with the cluster's secret as the nodes sign
# theirs (docs/api.md): for looking at one replica's own records, or trying what a peer may do.
#   scripts/replica-call.sh [--node NAME] [--body FILE] METHOD URL [VERSION] [-- CURL-OPTION ...]
#   scripts/replica-call.sh GET 'http://127.0.0.1:8081/internal/v1/record?id=k' -- -i
#   scripts/replica-call.sh --body value.bin PUT 'http://127.0.0.1:8081/internal/v1/record?id=k' 1700000000000.1
#   scripts/replica-call.sh --header [--node NAME] METHOD URL [VERSION]    only print the Authorization header
# VERSION is the X-Kvlab-Version header of a PUT or DELETE; --body FILE the request's body, sent
# and signed by its SHA-256. A call is signed for one node, named as the cluster names it (its
# base URL, kvlab.cluster.self): by default the URL's scheme and authority; --node NAME when the
# URL reaches the node another way (a pod's IP). Each call is signed once, with a new nonce: sent
# twice, the second is refused. The secret comes from SECRET_FILE (default data/cluster-secret,
# where `make up` keeps it) or SECRET. Needs curl and openssl.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
header_only=0 node="" body=""
while [ $# -gt 0 ]; do
  case $1 in
    --header) header_only=1; shift ;;
    --node) [ $# -ge 2 ] || usage; node=$2; shift 2 ;;
    --body) [ $# -ge 2 ] || usage; body=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
method=$1 url=$2
shift 2
version=""
if [ $# -gt 0 ] && [ "$1" != -- ]; then version=$1; shift; fi
[ $# -eq 0 ] || shift # the --
[ -z "$body" ] || [ -r "$body" ] || { echo "cannot read the body file $body" >&2; exit 2; }

secret=${SECRET:-}
if [ -z "$secret" ]; then
  file=${SECRET_FILE:-data/cluster-secret}
  [ -r "$file" ] || { echo "no secret: set SECRET_FILE or SECRET (make up keeps it in data/cluster-secret)" >&2; exit 2; }
  secret=$(tr -d ' \n\r\t' <"$file")
fi

# The request target as the server sees it: the URL without its scheme and authority; the node,
# unless named: the URL's scheme and authority.
rest=${url#*://}
target=/${rest#*/}
[ -n "$node" ] || node=${url%%://*}://${rest%%/*}
time=$(($(date +%s%N) / 1000000))
# A session of its own for every call (16 hex digits), numbered 1: a node takes it once.
nonce=$(openssl rand -hex 8).1
if [ -n "$body" ]; then
  digest=$(openssl dgst -sha256 -binary "$body" | openssl base64 -A)
else
  digest=$(printf '' | openssl dgst -sha256 -binary | openssl base64 -A)
fi
signature=$(printf 'kvlab-hmac-sha256\n%s\n%s\n%s\n%s\n%s\n%s\n%s' "$method" "$target" "$node" "$time" "$nonce" "$version" "$digest" |
  openssl dgst -sha256 -hmac "$secret" -binary | openssl base64 -A)
authorization="Authorization: kvlab-hmac-sha256 t=$time,n=$nonce,b=$digest,s=$signature"
if [ "$header_only" = 1 ]; then echo "$authorization"; exit 0; fi
headers=(-H "$authorization")
[ -z "$version" ] || headers+=(-H "X-Kvlab-Version: $version")
[ -z "$body" ] || headers+=(--data-binary "@$body" -H "Content-Type: application/octet-stream")
exec curl -sS -X "$method" "${headers[@]}" "$@" "$url"
