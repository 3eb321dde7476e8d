#!/usr/bin/env bash
# A throwaway CA and one certificate for the nodes of a local cluster (local-cluster.sh with TLS=1):
#   local-tls.sh DIR     writes DIR/ca.crt, DIR/tls.crt and DIR/tls.key unless they are there
# The certificate names 127.0.0.1 and localhost, for server and client use: every node presents it
# on its replica port and to its peers, and trusts ca.crt alone. The CA's key is not kept.
set -euo pipefail

dir=${1:?usage: local-tls.sh DIR}
[ -s "$dir/tls.crt" ] && [ -s "$dir/tls.key" ] && [ -s "$dir/ca.crt" ] && exit 0
command -v openssl >/dev/null || { echo "TLS=1 needs openssl (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  umask 077
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=kvlab local CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=kvlab local node" \
    -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" >"$work/ext"
  openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 30 \
    -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null
  cp "$work/tls.key" "$work/tls.crt" "$work/ca.crt" "$dir/"
)
echo "made a local CA and the nodes' certificate in $dir"
