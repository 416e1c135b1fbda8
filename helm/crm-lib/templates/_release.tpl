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

{{- define "crm.adminContainer" -}}
{{- $ctx := .ctx -}}
- name: {{ .name }}
  image: {{ include "crm.image" $ctx | quote }}
  imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
  args: {{ toJson .args }}
  env:
    {{- include "crm.env" $ctx | nindent 4 }}
    {{- with .extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  resources:
    {{- toYaml $ctx.Values.global.adminJobs.resources | nindent 4 }}
  securityContext:
    {{- include "crm.containerSecurityContext" $ctx | nindent 4 }}
  volumeMounts:
    - name: tmp
      mountPath: /tmp
{{- end -}}

{{- define "crm.release" -}}
{{- if include "crm.ownsReleaseObjects" . -}}
{{- $g := .Values.global -}}
{{- $admin := merge (dict "Values" (merge (dict "component" "admin") (omit .Values "component"))) (omit . "Values") -}}
{{- $secretName := include "crm.secretName" . -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName -}}
{{- $token := $g.adminToken.value -}}
{{- if and (not $token) $existing $existing.data }}
{{- $token = index $existing.data "admin-token" | default "" | b64dec -}}
{{- end }}
{{- if not $token }}{{ $token = randAlphaNum 40 }}{{ end -}}
{{- $migrateSecret := printf "%s-crm-migrate" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- $migrate := merge (dict "Values" (merge (dict "connectionSecret" $migrateSecret) $admin.Values)) $admin -}}
{{- range $name, $hook := dict $secretName false $migrateSecret true }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $name }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
  {{- if $hook }}
  annotations:
    # The migration Job's copy: it runs before the release's own objects
    # exist, and goes once the hooks have succeeded.
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-10"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
  {{- end }}
type: Opaque
stringData:
  database-url: {{ $g.postgres.url | quote }}
  redis-url: {{ $g.redis.url | quote }}
  # Generated once when none is given, then read back on every upgrade.
  admin-token: {{ $token | quote }}
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
        {{- include "crm.labels" $admin | nindent 8 }}
    spec:
      restartPolicy: Never
      {{- include "crm.podBasics" . | nindent 6 }}
      containers:
        {{- include "crm.adminContainer" (dict "ctx" $migrate "name" "migrate" "args" (list "admin" "migrate" "--database")) | nindent 8 }}
      volumes:
        {{- include "crm.tmpVolume" . | nindent 8 }}
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
      activeDeadlineSeconds: 3600
      template:
        metadata:
          labels:
            {{- include "crm.labels" $admin | nindent 12 }}
        spec:
          restartPolicy: Never
          {{- include "crm.podBasics" . | nindent 10 }}
          containers:
            {{- $days := list }}
            {{- with $g.retention.days }}{{ $days = list (dict "name" "RETENTION_DAYS" "value" (toString .)) }}{{ end }}
            {{- include "crm.adminContainer" (dict "ctx" $admin "name" "retention" "args" (list "admin" "retention" "run") "extraEnv" $days) | nindent 12 }}
          volumes:
            {{- include "crm.tmpVolume" . | nindent 12 }}
{{- end }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ printf "%s-test-healthz" .Release.Name | trunc 63 | trimSuffix "-" }}
  labels:
    {{- include "crm.labels" $admin | nindent 4 }}
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  restartPolicy: Never
  {{- include "crm.podBasics" . | nindent 2 }}
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
