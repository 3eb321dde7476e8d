#!/usr/bin/env bash
# Static checks of the chart, no cluster needed (make k8s-lint):
#   k8s/lint.sh [CHART]          (default helm/kvlab)
# - `helm lint --strict` with the defaults and with every optional part on;
# - renders the variants and checks what each must (and must not) contain;
# - the schema rejects bad values, and the template rejects a grace period shorter than the drain;
# - the scale-in hook's script parses as sh (and passes shellcheck where it is installed);
# - the dashboard is valid JSON, its panels in place and its metrics documented (k8s/dashboard-check.py);
# - every value documented in values.yaml (`# --`) has its row in the chart's README, with its
#   default when that is a single value.
set -euo pipefail

CHART=${1:-helm/kvlab}
HELM=${HELM:-helm}
failures=0

pass() { printf 'ok: %s\n' "$*"; }
flunk() { printf 'FAIL: %s\n' "$*" >&2; failures=$((failures + 1)); }
# A render without a cluster (helm template) needs the secret given: the chart refuses to make up
# one that would change on every render. The checks render with this one unless they say otherwise.
LINT_SECRET=lint-0123456789-abcdefghijklmnopqrstuvwxyz
bare_render() { "$HELM" template kvlab "$CHART" --namespace lint "$@"; }
render() { bare_render --set clusterSecret.value="$LINT_SECRET" "$@"; }
# contains WHAT PATTERN RENDERED-ARGS...: the rendering has a line matching PATTERN.
contains() {
  local what=$1 pattern=$2 out
  shift 2
  out=$(render "$@") || { flunk "$what (does not render)"; return; }
  if grep -qE -- "$pattern" <<<"$out"; then pass "$what"; else flunk "$what"; fi
}
lacks() {
  local what=$1 pattern=$2 out
  shift 2
  out=$(render "$@") || { flunk "$what (does not render)"; return; }
  if grep -qE -- "$pattern" <<<"$out"; then flunk "$what"; else pass "$what"; fi
}
rejects() {
  local what=$1
  shift
  if render "$@" >/dev/null 2>&1; then flunk "$what"; else pass "$what"; fi
}

ALL_ON=(--set profiler.enabled=true --set metrics.serviceMonitor.enabled=true --set metrics.dashboard.enabled=true
  --set podAntiAffinity=hard --set 'networkPolicy.clientFrom[0].podSelector.matchLabels.role=client')

# lints WHAT HELM-LINT-ARGS...: helm lint --strict passes; its output only when it does not.
lints() {
  local what=$1 out
  shift
  if out=$("$HELM" lint --strict "$CHART" --set clusterSecret.value="$LINT_SECRET" "$@" 2>&1); then pass "$what"; else printf '%s\n' "$out" >&2; flunk "$what"; fi
}
lints "helm lint --strict (defaults)"
lints "helm lint --strict (every optional part on)" "${ALL_ON[@]}"
lints "helm lint --strict (backups to a volume, a restore)" --set backup.enabled=true --set restore.backup=latest
lints "helm lint --strict (backups to S3)" --set backup.enabled=true --set backup.target=s3://kvlab-backups/prod --set backup.s3.existingSecret=s3-creds

contains "a StatefulSet with Parallel pod management" '^  podManagementPolicy: Parallel$'
contains "the headless Service publishes not-ready addresses" '^  publishNotReadyAddresses: true$'
contains "pods find the topology in the headless Service's DNS" 'value: kvlab-headless\.lint\.svc\.cluster\.local$'
contains "a read-only root filesystem" 'readOnlyRootFilesystem: true'
contains "a preferred pod anti-affinity by default" 'preferredDuringSchedulingIgnoredDuringExecution'
contains "a PodDisruptionBudget" '^kind: PodDisruptionBudget$'
contains "a NetworkPolicy" '^kind: NetworkPolicy$'
contains "a helm test hook" 'helm.sh/hook: test'
contains "a Secret with the cluster's secret given" "^  cluster-secret: $(printf '%s' "$LINT_SECRET" | base64 -w0)\$" \
  --show-only templates/secret.yaml
contains "the pods read the cluster's secret from a file" 'secretName: kvlab-cluster-secret$'
contains "an existing Secret's name when given" 'secretName: my-peers$' --set clusterSecret.existingSecret=my-peers
lacks "no Secret of the chart's own with an existing one" '^kind: Secret$' --set clusterSecret.existingSecret=my-peers

# The secret stays put: a render that cannot see the cluster refuses to make one up, and two
# renders give the same release; a changed secret rolls the pods (their checksum annotation).
if out=$(bare_render 2>&1); then
  flunk "a render without the cluster and without a secret is refused (it rendered)"
elif grep -q 'clusterSecret.existingSecret' <<<"$out"; then
  pass "a render without the cluster and without a secret is refused, saying what to set"
else
  flunk "the refusal of a render without a secret names clusterSecret.existingSecret: $out"
fi
same_twice() {
  local what=$1 first second
  shift
  first=$(render "$@" 2>&1) && second=$(render "$@" 2>&1) || { flunk "$what (does not render)"; return; }
  if [ "$first" = "$second" ]; then pass "$what"; else flunk "$what"; diff <(echo "$first") <(echo "$second") >&2 || true; fi
}
same_twice "two renders with clusterSecret.value are the same"
same_twice "two renders with an existing Secret are the same" --set clusterSecret.existingSecret=my-peers
contains "the pods carry a checksum of the secret" '^        checksum/cluster-secret: "[0-9a-f]{64}"$' --show-only templates/statefulset.yaml
checksum() { render --show-only templates/statefulset.yaml "$@" | grep 'checksum/cluster-secret:'; }
if [ "$(checksum)" != "$(checksum --set clusterSecret.value="$LINT_SECRET-rotated")" ]; then
  pass "another secret gives the pods another checksum: they roll"
else
  flunk "another secret gives the pods the same checksum"
fi
lacks "no checksum of an existing Secret the chart cannot read" 'checksum/cluster-secret' \
  --show-only templates/statefulset.yaml --set clusterSecret.existingSecret=my-peers
contains "an existing Secret's checksum when given" '^        checksum/cluster-secret: "v2"$' \
  --show-only templates/statefulset.yaml --set clusterSecret.existingSecret=my-peers --set clusterSecret.checksum=v2
rejects "the schema rejects a clusterSecret.value under 16 characters" --set clusterSecret.value=short
contains "the pods read an admin token when given" 'value: /etc/kvlab-admin/admin-token$' --set adminToken.existingSecret=ops-token
lacks "the test pod is no node: it has not the selector labels" "^    app.kubernetes.io/name: kvlab$" --show-only templates/tests/test-write-read.yaml
contains "a scale-in hook before upgrades and rollbacks" '^    helm.sh/hook: pre-upgrade,pre-rollback$' --show-only templates/scale-in-job.yaml
contains "the hook is told the new size" '^              value: "2"$' --show-only templates/scale-in-job.yaml --set replicaCount=2
lacks "the hook pod is no node: it has not the selector labels" "^        app.kubernetes.io/name: kvlab$" --show-only templates/scale-in-job.yaml
lacks "no scale-in hook when off" 'helm.sh/hook: pre-upgrade' --set scaleIn.enabled=false
contains "the hook mounts the cluster secret as its management credential" '^            secretName: kvlab-cluster-secret$' \
  --show-only templates/scale-in-job.yaml
contains "the hook is told where its credential is" '^              value: /etc/kvlab/management-token$' --show-only templates/scale-in-job.yaml
contains "the hook mounts the admin token instead when there is one" '^            secretName: ops-token$' \
  --show-only templates/scale-in-job.yaml --set adminToken.existingSecret=ops-token
if grep -q "Authorization: Bearer %s" "$CHART/files/scale-in.sh" && grep -q -- '-H @-' "$CHART/files/scale-in.sh"; then
  pass "the hook sends its credential with the leave (Authorization: Bearer, on curl's stdin)"
else
  flunk "the hook sends no credential with the leave"
fi

# The management port's ingress rule: its peers, one a line (podSelector/namespaceSelector and labels).
management_from() {
  render --show-only templates/networkpolicy.yaml "$@" |
    awk '/- port: management$/ { on = 1; next } on && /^    - ports:/ { on = 0 } on' | grep -vE '^\s*#'
}
peers=$(management_from)
if grep -q '^      from:$' <<<"$peers" && grep -q 'app.kubernetes.io/name: kvlab$' <<<"$peers" &&
  grep -q 'app.kubernetes.io/name: kvlab-scale-in$' <<<"$peers" && [ "$(grep -c 'podSelector:' <<<"$peers")" = 2 ] &&
  ! grep -q namespaceSelector <<<"$peers"; then
  pass "by default the management port admits only the release's pods and the scale-in hook"
else
  flunk "by default the management port admits only the release's pods and the scale-in hook:"$'\n'"$peers"
fi
peers=$(management_from --set 'networkPolicy.managementFrom[0].namespaceSelector.matchLabels.name=monitoring')
if grep -q 'name: monitoring$' <<<"$peers" && grep -q 'app.kubernetes.io/name: kvlab$' <<<"$peers"; then
  pass "managementFrom adds monitoring's namespace to the release's own pods"
else
  flunk "managementFrom adds monitoring's namespace to the release's own pods:"$'\n'"$peers"
fi
peers=$(management_from --set scaleIn.enabled=false)
if grep -q '^      from:$' <<<"$peers" && ! grep -q 'kvlab-scale-in' <<<"$peers"; then
  pass "without the hook the management port admits the release's pods alone"
else
  flunk "without the hook the management port admits the release's pods alone:"$'\n'"$peers"
fi
peers=$(management_from --set backup.enabled=true)
if grep -q 'app.kubernetes.io/name: kvlab-backup$' <<<"$peers" && [ "$(grep -c 'podSelector:' <<<"$peers")" = 3 ]; then
  pass "with backups on, the management port also admits the backup CronJob's pods"
else
  flunk "with backups on, the management port also admits the backup CronJob's pods:"$'\n'"$peers"
fi

# Backups and restores.
BACKUP_S3=(--set backup.enabled=true --set backup.target=s3://kvlab-backups/prod --set backup.s3.existingSecret=s3-creds)
lacks "no backup CronJob, volume or target by default" 'kind: CronJob|kvlab-backups|KVLAB_BACKUP_|initContainers'
contains "a backup CronJob with backups on" '^kind: CronJob$' --set backup.enabled=true
contains "the CronJob runs on backup.schedule" '^  schedule: "0 \*/6 \* \* \*"$' --set backup.enabled=true --set 'backup.schedule=0 */6 * * *'
contains "one backup at a time" '^  concurrencyPolicy: Forbid$' --show-only templates/backup-cronjob.yaml --set backup.enabled=true
lacks "no CronJob with an empty schedule" '^kind: CronJob$' --set backup.enabled=true --set backup.schedule=
lacks "the backup pod is no node: it has not the selector labels" '^            app.kubernetes.io/name: kvlab$' \
  --show-only templates/backup-cronjob.yaml --set backup.enabled=true
contains "the backup Job mounts the cluster secret as its management credential" '^                secretName: kvlab-cluster-secret$' \
  --show-only templates/backup-cronjob.yaml --set backup.enabled=true
contains "the backup Job mounts the admin token instead when there is one" '^                secretName: ops-token$' \
  --show-only templates/backup-cronjob.yaml --set backup.enabled=true --set adminToken.existingSecret=ops-token
contains "the pods back up into /backups on the directory target" '^              value: "/backups"$' --show-only templates/statefulset.yaml --set backup.enabled=true
contains "a backup claim of the chart's own on the directory target" '^  name: kvlab-backups$' --show-only templates/backup-pvc.yaml --set backup.enabled=true
contains "helm uninstall keeps the backup claim" '^    helm.sh/resource-policy: keep$' --show-only templates/backup-pvc.yaml --set backup.enabled=true
contains "the pods mount an existing backup claim" '^            claimName: my-backups$' --show-only templates/statefulset.yaml \
  --set backup.enabled=true --set backup.persistence.existingClaim=my-backups
lacks "no claim of the chart's own with an existing one" '^  name: kvlab-backups$' \
  --set backup.enabled=true --set backup.persistence.existingClaim=my-backups
lacks "no backup claim with an S3 target" '^  name: kvlab-backups$|claimName' "${BACKUP_S3[@]}"
contains "the pods back up to the S3 target" '^              value: "s3://kvlab-backups/prod"$' --show-only templates/statefulset.yaml "${BACKUP_S3[@]}"
contains "the pods read the S3 credentials from files of the Secret" '^              value: /etc/kvlab-backup-s3/secret-key$' \
  --show-only templates/statefulset.yaml "${BACKUP_S3[@]}"
contains "the pods mount the S3 Secret" '^            secretName: s3-creds$' --show-only templates/statefulset.yaml "${BACKUP_S3[@]}"
lacks "the S3 credentials are never values of the pods' environment" 'name: KVLAB_BACKUP_S3_(ACCESS|SECRET)KEY$' \
  --show-only templates/statefulset.yaml "${BACKUP_S3[@]}"
rejects "an S3 target without its Secret is refused" --set backup.enabled=true --set backup.target=s3://kvlab-backups
rejects "the schema rejects a target that is neither empty nor s3://" --set backup.enabled=true --set backup.target=/mnt/backups
rejects "the schema rejects a bad backup.maxAge" --set backup.enabled=true --set backup.maxAge=forever
rejects "restore.backup without backup.enabled is refused" --set restore.backup=latest
contains "a restore init container with restore.backup" '^        - name: restore$' --set backup.enabled=true --set restore.backup=kvlab-20260101-000000
contains "the restore is told the release's size" '^              value: "5"$' --show-only templates/statefulset.yaml \
  --set backup.enabled=true --set restore.backup=latest --set replicaCount=5
contains "the restore init container mounts the backup volume" '^            - name: backups$' --show-only templates/statefulset.yaml \
  --set backup.enabled=true --set restore.backup=latest --set backup.schedule=
lacks "no restore init container without restore.backup" 'initContainers' --set backup.enabled=true
rejects "the schema rejects a backup name with a slash" --set backup.enabled=true --set restore.backup=../x

lacks "no TLS by default" 'kvlab-tls|SSL_BUNDLE|KVLAB_TLS'
contains "mutual TLS on the replica port with tls.enabled" '^              value: https$' --set tls.enabled=true --set tls.existingSecret=my-tls
contains "the pods mount the TLS Secret" '^            secretName: my-tls$' --set tls.enabled=true --set tls.existingSecret=my-tls
contains "HTTPS on the client port with tls.client.enabled" '^            - name: SERVER_SSL_BUNDLE$' --set tls.client.enabled=true --set tls.existingSecret=my-tls
contains "helm test speaks HTTPS with tls.client.enabled" 'value: "https://kvlab:8080"' --show-only templates/tests/test-write-read.yaml \
  --set tls.client.enabled=true --set tls.existingSecret=my-tls
contains "a cert-manager Certificate with an issuer" '^kind: Certificate$' --set tls.enabled=true --set tls.certManager.issuerRef.name=ca
contains "the certificate names every pod of the headless Service" '^    - "\*\.kvlab-headless\.lint\.svc\.cluster\.local"$' \
  --show-only templates/tls-certificate.yaml --set tls.enabled=true --set tls.certManager.issuerRef.name=ca
lacks "no CA of the chart's own with cert-manager" 'kvlab-tls-ca' --set tls.enabled=true --set tls.certManager.issuerRef.name=ca
rejects "TLS refuses a render that cannot keep the chart's CA (no existingSecret, no issuer)" --set tls.enabled=true
lacks "no ServiceMonitor by default (its CRD may be absent)" '^kind: ServiceMonitor$'
lacks "no profiler sidecar by default" 'shareProcessNamespace|name: profiler$'
contains "the ServiceMonitor when enabled" '^kind: ServiceMonitor$' --set metrics.serviceMonitor.enabled=true
contains "the profiler sidecar when enabled" '^        - name: profiler$' --set profiler.enabled=true
contains "a shared process namespace with the sidecar" '^      shareProcessNamespace: true$' --set profiler.enabled=true
contains "the dashboard ConfigMap when enabled" '^  kvlab.json: \|-$' --set metrics.dashboard.enabled=true
contains "a required anti-affinity when asked" 'requiredDuringSchedulingIgnoredDuringExecution' --set podAntiAffinity=hard
lacks "no anti-affinity when asked" 'podAntiAffinity' --set podAntiAffinity=none
lacks "no PodDisruptionBudget or NetworkPolicy when off" '^kind: (PodDisruptionBudget|NetworkPolicy)$' \
  --set podDisruptionBudget.enabled=false --set networkPolicy.enabled=false

rejects "the schema rejects an unknown value (a typo)" --set replicaCout=3
rejects "the schema rejects replicaCount 0" --set replicaCount=0
rejects "the schema rejects a bad duration" --set cluster.refreshInterval=soon
rejects "the schema rejects an unknown anti-affinity" --set podAntiAffinity=sometimes
rejects "the schema rejects a scale-in timeout under 10 s" --set scaleIn.timeoutSeconds=5
rejects "a grace period shorter than preStop + drain is refused" --set terminationGracePeriodSeconds=20
rejects "the replica port must differ from the client port" --set replication.port=8080
rejects "the management port must differ from the client port" --set service.managementPort=8080

# The scripts of the hook, the backup Job and the restore init container run under the image's
# /bin/sh (dash): POSIX sh, checked by shellcheck where it is installed.
for script in scale-in.sh backup.sh restore.sh; do
  if sh -n "$CHART/files/$script"; then pass "files/$script parses as sh"; else flunk "files/$script does not parse as sh"; fi
  if command -v shellcheck >/dev/null; then
    if shellcheck -s sh "$CHART/files/$script"; then pass "shellcheck files/$script"; else flunk "shellcheck files/$script"; fi
  fi
done

if out=$(python3 "$(dirname "$0")/dashboard-check.py" "$CHART/dashboards/kvlab.json" "$(dirname "$0")/../docs/operations.md"); then
  pass "dashboards/kvlab.json: JSON, panels in place, every query on \$datasource, \$namespace and \$pod, every kvlab_ metric documented"
else
  printf '%s\n' "$out" >&2
  flunk "dashboards/kvlab.json (k8s/dashboard-check.py)"
fi

# Values marked with `# --` in values.yaml, as dotted paths, with their default when it is on the
# key's own line.
documented_values() {
  awk '
    /^[[:space:]]*# --/ { described = 1; next }
    /^[[:space:]]*#/ { next }
    /^[[:space:]]*[A-Za-z][A-Za-z0-9]*:/ {
      match($0, /^ */); depth = RLENGTH / 2
      key = $0; sub(/^ */, "", key); value = key; sub(/:.*/, "", key); sub(/^[^:]*:[[:space:]]*/, "", value)
      path[depth] = key
      if (described) {
        p = path[0]; for (i = 1; i <= depth; i++) p = p "." path[i]
        print p "\t" value
      }
      described = 0
      next
    }
    { described = 0 }
  ' "$CHART/values.yaml"
}
readme=$CHART/README.md
before=$failures
while IFS=$'\t' read -r key value; do
  row=$(grep -F "| \`$key\` |" "$readme" || true)
  if [ -z "$row" ]; then
    flunk "README.md has no row for $key"
  elif [ -n "$value" ] && ! grep -qF -- "$value" <<<"$row"; then
    flunk "README.md's row for $key does not show its default $value"
  fi
done < <(documented_values)
[ "$failures" -gt "$before" ] || pass "README.md documents the $(documented_values | wc -l) values described in values.yaml"

if [ "$failures" -gt 0 ]; then
  echo "k8s-lint: $failures check(s) failed" >&2
  exit 1
fi
echo "k8s-lint: all checks passed"
