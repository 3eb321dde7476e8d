{{/*
The chart's name, or nameOverride.
*/}}
{{- define "kvlab.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name: the StatefulSet's, hence the pods' <fullname>-<i>. The release name alone when it
already contains the chart's name (release "kvlab" gives pods kvlab-0, kvlab-1, ...). Kept short
enough that "<fullname>-headless" and the pods' hostnames stay within 63 characters.
*/}}
{{- define "kvlab.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The headless Service: its DNS is the cluster's topology.
*/}}
{{- define "kvlab.headlessName" -}}
{{- printf "%s-headless" (include "kvlab.fullname" .) }}
{{- end }}

{{/*
The headless Service's fully qualified name, as the pods look it up.
*/}}
{{- define "kvlab.headlessFqdn" -}}
{{- printf "%s.%s.svc.%s" (include "kvlab.headlessName" .) .Release.Namespace .Values.cluster.domain }}
{{- end }}

{{/*
The Secret that holds the cluster's secret: the user's, or the one the chart makes.
*/}}
{{- define "kvlab.clusterSecretName" -}}
{{- .Values.clusterSecret.existingSecret | default (printf "%s-cluster-secret" (include "kvlab.fullname" .)) }}
{{- end }}

{{/*
The cluster's secret of the Secret the chart makes (no clusterSecret.existingSecret): the value
given (clusterSecret.value), else the one an earlier install made (a new one would split a running
cluster in two), else, on a first install that sees the cluster, a random one. A render that cannot
see the cluster (helm template, --dry-run, a GitOps tool) and has neither is refused: a random
secret made there would differ on every render, and the next pod to restart would be refused by
its peers. Computed once per render, so the Secret and the pods' checksum agree.
*/}}
{{- define "kvlab.clusterSecretValue" -}}
{{- if not (hasKey .Values.clusterSecret "rendered") }}
{{- $value := .Values.clusterSecret.value }}
{{- if not $value }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "kvlab.clusterSecretName" .) }}
{{- if and $existing $existing.data (index $existing.data .Values.clusterSecret.key) }}
{{- $value = index $existing.data .Values.clusterSecret.key | b64dec }}
{{- else if hasKey (lookup "v1" "Secret" .Release.Namespace "") "items" }}
{{- $value = randAlphaNum 48 }}
{{- else }}
{{- fail "clusterSecret: this render cannot see the cluster (helm template, --dry-run, a GitOps tool), so it cannot keep the secret an earlier install made, and a random one would change on every render. Set clusterSecret.existingSecret to a Secret you manage (recommended), or clusterSecret.value; a plain helm install or upgrade against the cluster needs neither." }}
{{- end }}
{{- end }}
{{- $_ := set .Values.clusterSecret "rendered" $value }}
{{- end }}
{{- index .Values.clusterSecret "rendered" }}
{{- end }}

{{/*
What the pods carry as checksum/cluster-secret, so that a changed secret rolls them: a digest of
the chart's own secret, or clusterSecret.checksum for an existing Secret (whose content the chart
does not read); empty when there is neither.
*/}}
{{- define "kvlab.clusterSecretChecksum" -}}
{{- if .Values.clusterSecret.existingSecret }}
{{- .Values.clusterSecret.checksum }}
{{- else }}
{{- printf "%s\n%s" (include "kvlab.clusterSecretName" .) (include "kvlab.clusterSecretValue" .) | sha256sum }}
{{- end }}
{{- end }}

{{/*
The credential the scale-in hook sends to the management port: the admin token's Secret when
there is one, else the cluster secret's.
*/}}
{{- define "kvlab.managementCredentialSecret" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.existingSecret }}
{{- else }}
{{- include "kvlab.clusterSecretName" . }}
{{- end }}
{{- end }}

{{- define "kvlab.managementCredentialKey" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.key }}
{{- else }}
{{- .Values.clusterSecret.key }}
{{- end }}
{{- end }}

{{/*
"true" when the pods need a certificate: mutual TLS on the replica port, HTTPS on the client port, or both.
*/}}
{{- define "kvlab.tlsOn" -}}
{{- if or .Values.tls.enabled .Values.tls.client.enabled }}true{{- end }}
{{- end }}

{{/*
The Secret with the nodes' certificate (tls.crt, tls.key) and the CA they trust (ca.crt).
*/}}
{{- define "kvlab.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "kvlab.fullname" .)) }}
{{- end }}

{{/*
The names the nodes' certificate holds, as a YAML list: every pod as its peers call it
(<pod>.<headless FQDN>) and the client Service under each of its names.
*/}}
{{- define "kvlab.tlsDnsNames" -}}
{{- $fullname := include "kvlab.fullname" . }}
{{- $ns := .Release.Namespace }}
- {{ printf "*.%s" (include "kvlab.headlessFqdn" .) | quote }}
- {{ printf "*.%s.%s.svc" (include "kvlab.headlessName" .) $ns | quote }}
- {{ $fullname | quote }}
- {{ printf "%s.%s" $fullname $ns | quote }}
- {{ printf "%s.%s.svc" $fullname $ns | quote }}
- {{ printf "%s.%s.svc.%s" $fullname $ns .Values.cluster.domain | quote }}
{{- end }}

{{- define "kvlab.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "kvlab.labels" -}}
helm.sh/chart: {{ include "kvlab.chart" . }}
{{ include "kvlab.selectorLabels" . }}
app.kubernetes.io/version: {{ include "kvlab.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvlab
{{- end }}

{{/*
Labels of the helm test pod: not the selector labels, so that no Service, PodDisruptionBudget or
NetworkPolicy of the release counts it as a node.
*/}}
{{- define "kvlab.testLabels" -}}
helm.sh/chart: {{ include "kvlab.chart" . }}
app.kubernetes.io/name: {{ include "kvlab.name" . }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvlab
app.kubernetes.io/component: test
{{- end }}

{{/*
Labels of the scale-in hook's Job and pod: not the selector labels either, so that it is no node;
the NetworkPolicy lets it on the management port by its selector labels.
*/}}
{{- define "kvlab.scaleInLabels" -}}
helm.sh/chart: {{ include "kvlab.chart" . }}
{{ include "kvlab.scaleInSelectorLabels" . }}
app.kubernetes.io/version: {{ include "kvlab.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvlab
app.kubernetes.io/component: scale-in
{{- end }}

{{- define "kvlab.scaleInSelectorLabels" -}}
app.kubernetes.io/name: {{ include "kvlab.name" . }}-scale-in
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Selector labels: the pods of this release.
*/}}
{{- define "kvlab.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kvlab.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kvlab.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "kvlab.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "kvlab.imageTag" .) }}
{{- end }}

{{- define "kvlab.profilerImage" -}}
{{- printf "%s:%s" .Values.profiler.image.repository (.Values.profiler.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "kvlab.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kvlab.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The node stops within preStop + drain; the kubelet must not kill it before.
*/}}
{{- define "kvlab.validate" -}}
{{- $needed := add .Values.preStopSleepSeconds .Values.drainSeconds }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $needed) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed preStopSleepSeconds + drainSeconds (%v), or the kubelet kills nodes while they drain" .Values.terminationGracePeriodSeconds $needed) }}
{{- end }}
{{- if eq (int .Values.replication.port) (int .Values.service.port) }}
{{- fail "replication.port must differ from service.port: the replica protocol has a port of its own" }}
{{- end }}
{{- if or (eq (int .Values.service.managementPort) (int .Values.service.port)) (eq (int .Values.service.managementPort) (int .Values.replication.port)) }}
{{- fail "service.managementPort must differ from service.port and replication.port: the actuator has a port of its own" }}
{{- end }}
{{- if and .Values.restore.backup (not .Values.backup.enabled) }}
{{- fail "restore.backup needs backup.enabled=true and the backup.target (with its volume or S3 settings) the backup is in: the restore reads it from there" }}
{{- end }}
{{- if and .Values.backup.enabled .Values.backup.target (not .Values.backup.s3.existingSecret) }}
{{- fail "backup.target is an s3:// URL: set backup.s3.existingSecret to the Secret with the access key id and secret access key (keys backup.s3.accessKeyKey and backup.s3.secretKeyKey)" }}
{{- end }}
{{- end }}

{{/*
Labels of the backup CronJob, its Jobs and pods: no node either; the NetworkPolicy lets them on the
management port by their selector labels.
*/}}
{{- define "kvlab.backupLabels" -}}
helm.sh/chart: {{ include "kvlab.chart" . }}
{{ include "kvlab.backupSelectorLabels" . }}
app.kubernetes.io/version: {{ include "kvlab.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kvlab
app.kubernetes.io/component: backup
{{- end }}

{{- define "kvlab.backupSelectorLabels" -}}
app.kubernetes.io/name: {{ include "kvlab.name" . }}-backup
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
"true" when backups go to a directory on a volume (backup.target empty) rather than to S3.
*/}}
{{- define "kvlab.backupOnVolume" -}}
{{- if and .Values.backup.enabled (not .Values.backup.target) }}true{{- end }}
{{- end }}

{{/*
The claim that holds the directory target: the user's, or the one the chart makes.
*/}}
{{- define "kvlab.backupClaimName" -}}
{{- .Values.backup.persistence.existingClaim | default (printf "%s-backups" (include "kvlab.fullname" .)) }}
{{- end }}

{{/*
The backup target's environment, for the node and the restore init container (Spring Boot's relaxed
binding of kvlab.backup.*). The S3 credentials are files from the mounted Secret.
*/}}
{{- define "kvlab.backupEnv" -}}
- name: KVLAB_BACKUP_TARGET
  value: {{ .Values.backup.target | default "/backups" | quote }}
- name: KVLAB_BACKUP_KEEPLAST
  value: {{ .Values.backup.keepLast | quote }}
- name: KVLAB_BACKUP_MAXAGE
  value: {{ .Values.backup.maxAge | quote }}
- name: KVLAB_BACKUP_TIMEOUT
  value: {{ printf "%ds" (int .Values.backup.timeoutSeconds) | quote }}
- name: KVLAB_BACKUP_MAXBYTESPERSECOND
  value: {{ .Values.backup.maxBytesPerSecond | quote }}
{{- if .Values.backup.target }}
{{- with .Values.backup.s3.endpoint }}
- name: KVLAB_BACKUP_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: KVLAB_BACKUP_S3_REGION
  value: {{ .Values.backup.s3.region | quote }}
- name: KVLAB_BACKUP_S3_PATHSTYLE
  value: {{ .Values.backup.s3.pathStyle | quote }}
- name: KVLAB_BACKUP_S3_ACCESSKEYFILE
  value: /etc/kvlab-backup-s3/access-key
- name: KVLAB_BACKUP_S3_SECRETKEYFILE
  value: /etc/kvlab-backup-s3/secret-key
{{- end }}
{{- end }}

{{/*
The backup target's volume mount: the directory's claim, or the S3 credentials.
*/}}
{{- define "kvlab.backupVolumeMount" -}}
{{- if .Values.backup.target }}
- name: backup-s3
  mountPath: /etc/kvlab-backup-s3
  readOnly: true
{{- else }}
- name: backups
  mountPath: /backups
{{- end }}
{{- end }}

{{- define "kvlab.backupVolume" -}}
{{- if .Values.backup.target }}
- name: backup-s3
  secret:
    secretName: {{ .Values.backup.s3.existingSecret }}
    items:
      - key: {{ .Values.backup.s3.accessKeyKey }}
        path: access-key
      - key: {{ .Values.backup.s3.secretKeyKey }}
        path: secret-key
    defaultMode: 0440
{{- else }}
- name: backups
  persistentVolumeClaim:
    claimName: {{ include "kvlab.backupClaimName" . }}
{{- end }}
{{- end }}
