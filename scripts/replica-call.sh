#!/usr/bin/env bash
# One call of the replica protocol by hand, signed with the cluster's secret as the nodes sign
# theirs (docs/api.md): for looking at one replica's own records, or trying what a peer may do.
#   scripts/replica-call.sh METHOD URL [VERSION] [-- CURL-OPTION ...]
#   scripts/replica-call.sh GET 'http://127.0.0.1:8081/internal/v1/record?id=k' -- -i
#   scripts/replica-call.sh PUT 'http://127.0.0.1:8081/internal/v1/record?id=k' 1700000000000.1 -- --data-binary v
#   scripts/replica-call.sh --header METHOD URL [VERSION]    only print the Authorization header
# VERSION is the X-Kvlab-Version header of a PUT or DELETE. The secret comes from SECRET_FILE
# (default data/cluster-secret, where `make up` keeps it) or SECRET. Needs curl and openssl.
set -euo pipefail

header_only=0
if [ "${1:-}" = --header ]; then header_only=1; shift; fi
[ $# -ge 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
method=$1 url=$2
shift 2
version=""
if [ $# -gt 0 ] && [ "$1" != -- ]; then version=$1; shift; fi
[ $# -eq 0 ] || shift # the --

secret=${SECRET:-}
if [ -z "$secret" ]; then
  file=${SECRET_FILE:-data/cluster-secret}
  [ -r "$file" ] || { echo "no secret: set SECRET_FILE or SECRET (make up keeps it in data/cluster-secret)" >&2; exit 2; }
  secret=$(tr -d ' \n\r\t' <"$file")
fi

# The request target as the server sees it: the URL without its scheme and authority.
target=/${url#*://*/}
time=$(($(date +%s%N) / 1000000))
signature=$(printf '%s\n%s\n%s\n%s' "$method" "$target" "$time" "$version" |
  openssl dgst -sha256 -hmac "$secret" -binary | openssl base64 -A)
authorization="Authorization: kvlab-hmac-sha256 t=$time,s=$signature"
if [ "$header_only" = 1 ]; then echo "$authorization"; exit 0; fi
headers=(-H "$authorization")
[ -z "$version" ] || headers+=(-H "X-Kvlab-Version: $version")
exec curl -sS -X "$method" "${headers[@]}" "$@" "$url"
