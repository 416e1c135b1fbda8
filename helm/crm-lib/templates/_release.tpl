{{/*
Objects one per release: the connection Secret, the default-deny policy and
the admin pods' policy, the migration Job, the retention CronJob and the
helm test. The umbrella chart renders them (global.releaseObjectsBy: crm);
a service chart installed alone renders them itself.
*/}}
{{- define "crm.ownsReleaseObjects" -}}
{{- $owner := .Values.global.releaseObjectsBy | default "" -}}
{{- if or (eq $owner "") (eq $owner .Chart.Name) }}true{{ end -}}
{{- end -}}

{{/*
An admin container (the migration Job, the retention CronJob) with its
role's secret settings only. Parameters: ctx, name, args, role, secret (the
Secret the release keeps them in for this role), extraEnv.
*/}}
{{- define "crm.adminContainer" -}}
{{- $ctx := .ctx -}}
{{- $secrets := dict "root" $ctx "role" .role "secret" .secret -}}
- name: {{ .name }}
  image: {{ include "crm.image" $ctx | quote }}
  imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
  args: {{ toJson .args }}
  env:
    {{- include "crm.env" $ctx | nindent 4 }}
    {{- include "crm.secretEnv" $secrets | nindent 4 }}
    {{- with .extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- include "crm.extraEnv" $ctx | nindent 4 }}
  resources:
    {{- toYaml $ctx.Values.global.adminJobs.resources | nindent 4 }}
  securityContext:
    {{- include "crm.containerSecurityContext" $ctx | nindent 4 }}
  volumeMounts:
    - name: tmp
      mountPath: /tmp
    {{- include "crm.secretMount" $secrets | nindent 4 }}
    {{- with $ctx.Values.global.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* The volumes of an admin pod: /tmp, its role's secrets, global.extraVolumes. */}}
{{- define "crm.adminVolumes" -}}
{{ include "crm.tmpVolume" .ctx }}
{{- include "crm.secretVolume" (dict "root" .ctx "role" .role "secret" .secret) }}
{{- with .ctx.Values.global.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The pod basics of an admin pod: global.adminJobs' account, never a token. */}}
{{- define "crm.adminPodBasics" -}}
{{- include "crm.podBasics" (dict "root" . "serviceAccountName" .Values.global.adminJobs.serviceAccountName "automount" false) -}}
{{- end -}}

{{/*
The admin token: the value given, else (with no existing Secret named) the
one the release's Secret already holds, else a new random one when the
cluster can be read (helm install); under `helm template` with no cluster
none (the key is left out, and the services do not start until it is set:
GitOps users set global.adminToken.value or existingSecret), so rendering
twice gives the same objects.
*/}}
{{- define "crm.adminToken" -}}
{{- $given := .Values.global.adminToken.value -}}
{{- if $given -}}
{{- $given -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "crm.secretName" .) -}}
{{- $kept := "" -}}
{{- if and $existing $existing.data -}}{{- $kept = index $existing.data "admin-token" | default "" | b64dec -}}{{- end -}}
{{- if $kept -}}
{{- $kept -}}
{{- else if lookup "v1" "Secret" .Release.Namespace "" -}}
{{- randAlphaNum 40 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "crm.release" -}}
{{- if include "crm.ownsReleaseObjects" . -}}
{{- $g := .Values.global -}}
{{- $admin := merge (dict "Values" (merge (dict "component" "admin") (omit .Values "component"))) (omit . "Values") -}}
{{- $secretName := include "crm.secretName" . -}}
{{- $migrateSecret := printf "%s-crm-migrate" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- $next := $g.adminToken.next | default dict -}}
{{- $read := $g.postgres.read | default dict -}}
{{- $smtp := $g.smtp | default dict -}}
{{- $kept := dict -}}
{{- if not $g.postgres.existingSecret }}{{ $_ := set $kept "database-url" $g.postgres.url }}{{ end -}}
{{- if and $read.url (not $read.existingSecret) }}{{ $_ := set $kept "database-read-url" $read.url }}{{ end -}}
{{- if not $g.redis.existingSecret }}{{ $_ := set $kept "redis-url" $g.redis.url }}{{ end -}}
{{- if not $g.adminToken.existingSecret -}}
{{- with include "crm.adminToken" . }}{{ $_ := set $kept "admin-token" . }}{{ end -}}
{{- end -}}
{{- if and $next.value (not $next.existingSecret) }}{{ $_ := set $kept "admin-token-next" $next.value }}{{ end -}}
{{- if and $smtp.url (not $smtp.existingSecret) }}{{ $_ := set $kept "smtp-url" $smtp.url }}{{ end -}}
{{- if $kept }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $secretName }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
type: Opaque
# The secret settings given as values, and the admin token generated once
# when none is given (read back on every upgrade). Each pod mounts only its
# own of them (crm.secretSettings). Written as data, not stringData: the
# cluster folds stringData into data and an upgrade's patch never names
# stringData's keys again, so a setting taken out (a retired
# ADMIN_TOKEN_NEXT) would stay in the Secret.
data:
  {{- range $key, $value := $kept }}
  {{ $key }}: {{ $value | b64enc | quote }}
  {{- end }}
---
{{- end }}
{{- if not $g.postgres.existingSecret }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $migrateSecret }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
  annotations:
    # The migration Job's copy of the Postgres URL: it runs before the
    # release's own objects exist, and goes once the hooks have succeeded.
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-10"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
type: Opaque
data:
  database-url: {{ $g.postgres.url | b64enc | quote }}
---
{{- end }}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ printf "%s-migrate" .Release.Name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
  annotations:
    # Before the services of a new version start: schemas are current when they do.
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "0"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: 3
  activeDeadlineSeconds: 600
  ttlSecondsAfterFinished: 3600
  template:
    metadata:
      labels:
        {{- include "crm.podLabels" $admin | nindent 8 }}
    spec:
      restartPolicy: Never
      {{- include "crm.adminPodBasics" . | nindent 6 }}
      containers:
        {{- include "crm.adminContainer" (dict "ctx" $admin "name" "migrate" "args" (list "admin" "migrate" "--database") "role" "migrate" "secret" $migrateSecret) | nindent 8 }}
      volumes:
        {{- include "crm.adminVolumes" (dict "ctx" $admin "role" "migrate" "secret" $migrateSecret) | nindent 8 }}
{{- if $g.retention.enabled }}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {{ printf "%s-retention" .Release.Name | trunc 52 | trimSuffix "-" }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
spec:
  schedule: {{ $g.retention.schedule | quote }}
  {{- with $g.retention.timeZone }}
  timeZone: {{ . | quote }}
  {{- end }}
  concurrencyPolicy: Forbid
  successfulJobsHistoryLimit: 3
  failedJobsHistoryLimit: 3
  jobTemplate:
    spec:
      backoffLimit: 2
      # Longer than the 6 hours `admin retention run` waits for ingest-service
      # (RETENTION_TIMEOUT_MS), with room for the pod's start: a long trim ends
      # on its own, never killed mid-run.
      activeDeadlineSeconds: 22500
      template:
        metadata:
          labels:
            {{- include "crm.podLabels" $admin | nindent 12 }}
        spec:
          restartPolicy: Never
          {{- include "crm.adminPodBasics" . | nindent 10 }}
          containers:
            {{- $days := list }}
            {{- with $g.retention.days }}{{ $days = list (dict "name" "RETENTION_DAYS" "value" (toString .)) }}{{ end }}
            {{- include "crm.adminContainer" (dict "ctx" $admin "name" "retention" "args" (list "admin" "retention" "run") "role" "retention" "secret" $secretName "extraEnv" $days) | nindent 12 }}
          volumes:
            {{- include "crm.adminVolumes" (dict "ctx" $admin "role" "retention" "secret" $secretName) | nindent 12 }}
{{- end }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ printf "%s-test-healthz" .Release.Name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "crm.podLabels" $admin | nindent 4 }}
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  restartPolicy: Never
  {{- include "crm.adminPodBasics" . | nindent 2 }}
  containers:
    - name: healthz
      image: {{ include "crm.image" $admin | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      command: ["deno"]
      args:
        - eval
        - |
          const answer = await fetch("http://{{ .Release.Name }}-gateway:{{ $g.ports.http }}/healthz");
          console.log(answer.status, await answer.text());
          if (answer.status !== 200) Deno.exit(1);
      resources:
        {{- toYaml $g.adminJobs.resources | nindent 8 }}
      securityContext:
        {{- include "crm.containerSecurityContext" . | nindent 8 }}
      {{- with $g.extraVolumeMounts }}
      volumeMounts:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- with $g.extraVolumes }}
  volumes:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- if $g.networkPolicy.enabled }}
---
# Nothing in or out of the release's pods unless a policy below allows it.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ printf "%s-default-deny" .Release.Name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: crm
      app.kubernetes.io/instance: {{ .Release.Name }}
  policyTypes: [Ingress, Egress]
---
# The migration Job, the retention CronJob and the test: out to the services
# and the connections, nothing in.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ printf "%s-admin" .Release.Name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "crm.selectorLabels" $admin | nindent 6 }}
  policyTypes: [Ingress, Egress]
  egress:
    {{- include "crm.commonEgress" . | nindent 4 }}
    - ports:
        - { port: {{ $g.ports.grpc }}, protocol: TCP }
        - { port: {{ $g.ports.http }}, protocol: TCP }
      to:
        {{- range list "gateway" "auth" "content" "ingest" }}
        - podSelector:
            matchLabels:
              {{- include "crm.componentSelector" (dict "root" $ "component" .) | nindent 14 }}
        {{- end }}
{{- end }}
{{- end }}
{{- end -}}
