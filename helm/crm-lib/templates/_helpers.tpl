{{/*
Names and labels. Every object carries the app.kubernetes.io labels, with
the service as its component; all components of one release share a
part-of label so the NetworkPolicies can name the gateway and the Job.
*/}}
{{- define "crm.fullname" -}}
{{- printf "%s-%s" .Release.Name .Values.component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "crm.selectorLabels" -}}
app.kubernetes.io/name: crm
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.component }}
{{- end -}}

{{- define "crm.labels" -}}
{{ include "crm.selectorLabels" . }}
app.kubernetes.io/part-of: crm
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of another component of the same release (e.g. the gateway). */}}
{{- define "crm.componentSelector" -}}
app.kubernetes.io/name: crm
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "crm.image" -}}
{{- $image := .Values.global.image | default dict -}}
{{- $repository := $image.repository | default .Values.image.repository -}}
{{- $tag := $image.tag | default .Values.image.tag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* The Secret holding the connection settings this release creates. */}}
{{- define "crm.secretName" -}}
{{- .Values.connectionSecret | default (printf "%s-crm-connection" .Release.Name) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* env entry NAME from the setting's existingSecret, or the release's Secret. */}}
{{- define "crm.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      {{- if .setting.existingSecret }}
      name: {{ .setting.existingSecret }}
      key: {{ .setting.existingSecretKey }}
      {{- else }}
      name: {{ include "crm.secretName" .root }}
      key: {{ .key }}
      {{- end }}
{{- end -}}

{{/*
The settings every container of the release gets: where the others are,
connections, telemetry. A service reads only what it needs.
*/}}
{{- define "crm.env" -}}
{{- $g := .Values.global -}}
- name: AUTH_URL
  value: {{ printf "http://%s-auth:%v" .Release.Name $g.ports.grpc | quote }}
- name: CONTENT_URL
  value: {{ printf "http://%s-content:%v" .Release.Name $g.ports.grpc | quote }}
- name: INGEST_URL
  value: {{ printf "http://%s-ingest:%v" .Release.Name $g.ports.grpc | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | default $g.logLevel | quote }}
{{ include "crm.secretEnv" (dict "root" . "name" "DATABASE_URL" "key" "database-url" "setting" $g.postgres) }}
{{ include "crm.secretEnv" (dict "root" . "name" "REDIS_URL" "key" "redis-url" "setting" $g.redis) }}
{{ include "crm.secretEnv" (dict "root" . "name" "ADMIN_TOKEN" "key" "admin-token" "setting" $g.adminToken) }}
{{- with $g.redis.keyPrefix }}
- name: REDIS_KEY_PREFIX
  value: {{ . | quote }}
{{- end }}
{{- if $g.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $g.otel.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $g.otel.protocol | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "crm-%s" .Values.component | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $g.otel.sampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $g.otel.samplerArg | quote }}
- name: OTEL_BSP_SCHEDULE_DELAY
  value: {{ $g.otel.batch.scheduleDelayMs | quote }}
- name: OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  value: {{ $g.otel.batch.maxExportBatchSize | quote }}
- name: OTEL_BSP_MAX_QUEUE_SIZE
  value: {{ $g.otel.batch.maxQueueSize | quote }}
- name: OTEL_BLRP_SCHEDULE_DELAY
  value: {{ $g.otel.batch.scheduleDelayMs | quote }}
- name: OTEL_METRIC_EXPORT_INTERVAL
  value: {{ $g.otel.metricExportIntervalMs | quote }}
{{ include "crm.otelResource" . }}
{{- end }}
{{- range $name, $value := $g.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/*
The pod's identity on its telemetry: the pod UID as service.instance.id (so
replicas of one service write series and traces of their own), the image
tag as service.version, and the k8s.* resource attributes, read through the
downward API and expanded by the kubelet in OTEL_RESOURCE_ATTRIBUTES.
*/}}
{{- define "crm.otelResource" -}}
{{- $g := .Values.global -}}
{{- $image := $g.image | default dict -}}
{{- $version := $image.tag | default .Values.image.tag | default .Chart.AppVersion -}}
{{- $attributes := list
  "service.instance.id=$(K8S_POD_UID)"
  (printf "service.version=%s" $version)
  "k8s.namespace.name=$(K8S_NAMESPACE_NAME)"
  "k8s.pod.name=$(K8S_POD_NAME)"
  "k8s.pod.uid=$(K8S_POD_UID)"
  "k8s.node.name=$(K8S_NODE_NAME)"
  (printf "k8s.container.name=%s" .Values.component)
-}}
{{- if ne .Values.component "admin" }}
{{- $attributes = append $attributes (printf "k8s.deployment.name=%s" (include "crm.fullname" .)) -}}
{{- end }}
{{- with $g.otel.resourceAttributes }}
{{- $attributes = append $attributes . -}}
{{- end -}}
- name: K8S_POD_UID
  valueFrom: { fieldRef: { fieldPath: metadata.uid } }
- name: K8S_POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: K8S_NAMESPACE_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.namespace } }
- name: K8S_NODE_NAME
  valueFrom: { fieldRef: { fieldPath: spec.nodeName } }
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attributes | quote }}
{{- end -}}

{{- define "crm.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "crm.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The pod spec parts a Deployment, the Job and the CronJob share. */}}
{{- define "crm.podBasics" -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- include "crm.podSecurityContext" . | nindent 2 }}
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "crm.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}
