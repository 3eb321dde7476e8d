#!/usr/bin/env bash
# An S3-compatible object store for kvlab's backups, in tests and the lab: SeaweedFS (Apache-2.0),
# built from its Go module (pinned in scripts/s3-server/go.mod, with go.sum) where no image
# registry answers, as k6 is.
#   scripts/s3-server.sh path             builds `weed` once (minutes the first time; CGO off, so the
#                                          binary also runs in any Linux container) and prints its path
#   scripts/s3-server.sh start DIR PORT   runs it with its data in DIR, S3 on 127.0.0.1:PORT, requests
#                                          signed with S3_ACCESS_KEY / S3_SECRET_KEY; creates the bucket
#                                          BUCKET (kvlab); waits until it answers; prints `export ...` lines
#   scripts/s3-server.sh stop DIR         stops the server started on DIR
# Besides PORT it listens on PORT+1 (master), PORT+2 (volume), PORT+3 (filer) and on each of the
# four + 10000 (their gRPC), all on 127.0.0.1: PORT must be at most 55000.
# Environment: KVLAB_CACHE (~/.cache/kvlab: Go's caches and the binary), GO, S3_ACCESS_KEY,
# S3_SECRET_KEY (both required by start), BUCKET, S3_REGION (us-east-1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$here/s3-server
CACHE=${KVLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvlab}
say() { printf '[s3-server] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
usage() { sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# The binary's path: the pinned version in its name, so a new pin builds anew.
binary() {
  local version
  version=$(awk '$1 == "require" && $2 == "github.com/seaweedfs/seaweedfs" {print $3}' "$module/go.mod")
  [ -n "$version" ] || die "no seaweedfs version in $module/go.mod"
  echo "$CACHE/weed-$version/weed"
}

build() {
  local dest=$1
  [ -x "$dest" ] && return 0
  local go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
  [ -x "$go" ] || die "SeaweedFS is built from its Go module and needs Go 1.26 or newer; none found (set GO=...)"
  say "building SeaweedFS's weed (go build, CGO off; minutes the first time)"
  local t0=$SECONDS
  mkdir -p "$(dirname "$dest")"
  (cd "$module" && env CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOCACHE="$CACHE/go-build" \
      GOMODCACHE="$CACHE/go-mod" "$go" build -o "$dest.part" github.com/seaweedfs/seaweedfs/weed) >&2
  mv "$dest.part" "$dest"
  say "built $dest in $((SECONDS - t0)) s"
}

# A request to the S3 port signed with the keys (curl's SigV4): prints the HTTP status.
signed() {
  local method=$1 url=$2
  curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -X "$method" \
    --aws-sigv4 "aws:amz:${S3_REGION:-us-east-1}:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" "$url" 2>/dev/null || true
}

start() {
  local dir=${1:?usage: s3-server.sh start DIR PORT} port=${2:?usage: s3-server.sh start DIR PORT}
  [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 55000 ] || die "PORT must be 1024..55000, got $port"
  : "${S3_ACCESS_KEY:?start needs S3_ACCESS_KEY (and S3_SECRET_KEY): the keys that sign requests}"
  : "${S3_SECRET_KEY:?start needs S3_SECRET_KEY}"
  [[ $S3_ACCESS_KEY$S3_SECRET_KEY =~ ^[A-Za-z0-9+/=._-]+$ ]] || die "S3_ACCESS_KEY and S3_SECRET_KEY: letters, digits and + / = . _ - only"
  local bucket=${BUCKET:-kvlab} weed
  weed=$(binary)
  build "$weed"
  mkdir -p "$dir/data"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/weed.pid" ] && kill -0 "$(cat "$dir/weed.pid")" 2>/dev/null; then
    die "a server runs on $dir already (pid $(cat "$dir/weed.pid")): scripts/s3-server.sh stop $dir"
  fi
  # Who may do what: one identity, the keys given, allowed everything on every bucket.
  umask 077
  printf '{"identities":[{"name":"kvlab","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}\n' \
    "$S3_ACCESS_KEY" "$S3_SECRET_KEY" > "$dir/s3.json"
  # As S3 does: a bucket is created, never made by an upload. The extra gateways (Iceberg, Lance)
  # stay off; no telemetry (and no internet to send it to).
  nohup "$weed" server -dir="$dir/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port=$((port + 1)) -volume.port=$((port + 2)) -filer.port=$((port + 3)) \
    -s3 -s3.port="$port" -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$dir/s3.json" \
    -s3.autoCreateBucket=false -master.telemetry=false -master.volumeSizeLimitMB=1024 -volume.max=100 \
    > "$dir/weed.log" 2>&1 < /dev/null &
  echo $! > "$dir/weed.pid"
  local url=http://127.0.0.1:$port deadline=$((SECONDS + 60))
  until [ "$(signed GET "$url/")" = 200 ]; do
    kill -0 "$(cat "$dir/weed.pid")" 2>/dev/null || die "weed stopped; its log: $dir/weed.log"
    [ $SECONDS -lt $deadline ] || { stop "$dir"; die "no answer on $url within 60 s; its log: $dir/weed.log"; }
    sleep 0.5
  done
  local status
  status=$(signed PUT "$url/$bucket")
  case $status in
    200|409) ;; # created, or there from an earlier start on DIR
    *) stop "$dir"; die "cannot create the bucket $bucket (HTTP $status); its log: $dir/weed.log" ;;
  esac
  say "S3 on $url, bucket $bucket, data in $dir/data (pid $(cat "$dir/weed.pid"))"
  echo "export S3_ENDPOINT=$url"
  echo "export S3_REGION=${S3_REGION:-us-east-1}"
  echo "export BACKUP_TARGET=s3://$bucket"
}

stop() {
  local dir=${1:?usage: s3-server.sh stop DIR} pid
  [ -f "$dir/weed.pid" ] || { say "no server started on $dir"; return 0; }
  pid=$(cat "$dir/weed.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    # weed may take long over its shutdown: 10 s, then it is killed.
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/weed.pid"
  say "stopped the server on $dir"
}

case ${1:-} in
  path) weed=$(binary); build "$weed"; echo "$weed" ;;
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) usage ;;
esac
