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
{{- $digest := $image.digest | default .Values.image.digest -}}
{{- if $digest -}}
{{- printf "%s@%s" $repository $digest -}}
{{- else -}}
{{- $tag := $image.tag | default .Values.image.tag | default .Chart.AppVersion -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the secret settings this release keeps itself. */}}
{{- define "crm.secretName" -}}
{{- .Values.connectionSecret | default (printf "%s-crm-connection" .Release.Name) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Where a pod finds its secret settings, one file each (NAME_FILE). */}}
{{- define "crm.secretsDir" -}}/var/run/secrets/crm{{- end -}}

{{/*
The secret settings a role reads, as JSON {"items": [...]}: each with its
setting NAME, its file, where it comes from (an existing Secret or the
release's own) and its value when the release keeps it. Least secret: the
gateway reads only Redis; the services their storage and the admin tokens
they accept; the migration Job only Postgres; the retention CronJob, a
client, only ADMIN_TOKEN; ingest alone the read replica and SMTP.
Parameters: root (the chart's context), role (gateway, auth, content,
ingest, migrate, retention), secret (the release Secret's name).
*/}}
{{- define "crm.secretSettings" -}}
{{- $g := .root.Values.global -}}
{{- $token := $g.adminToken -}}
{{- $next := $token.next | default dict -}}
{{- $read := $g.postgres.read | default dict -}}
{{- $smtp := $g.smtp | default dict -}}
{{- $services := list "auth" "content" "ingest" -}}
{{- $all := list
  (dict "name" "DATABASE_URL" "key" "database-url" "setting" $g.postgres "value" $g.postgres.url
    "roles" (list "auth" "content" "ingest" "migrate") "wanted" true)
  (dict "name" "DATABASE_READ_URL" "key" "database-read-url" "setting" $read "value" $read.url
    "roles" (list "ingest") "wanted" (or $read.url $read.existingSecret))
  (dict "name" "REDIS_URL" "key" "redis-url" "setting" $g.redis "value" $g.redis.url
    "roles" (list "gateway" "auth" "content" "ingest") "wanted" true)
  (dict "name" "ADMIN_TOKEN" "key" "admin-token" "setting" $token "value" $token.value
    "roles" (list "auth" "content" "ingest" "retention") "wanted" true "generated" (not $token.value))
  (dict "name" "ADMIN_TOKEN_NEXT" "key" "admin-token-next" "setting" $next "value" $next.value
    "roles" $services "wanted" (or $next.value $next.existingSecret))
  (dict "name" "SMTP_URL" "key" "smtp-url" "setting" $smtp "value" $smtp.url
    "roles" (list "ingest") "wanted" (or $smtp.url $smtp.existingSecret))
-}}
{{- $items := list -}}
{{- range $all -}}
{{- if and .wanted (has $.role .roles) -}}
{{- $item := dict "name" .name "file" .key -}}
{{- if .setting.existingSecret -}}
{{- $_ := set $item "secret" .setting.existingSecret -}}
{{- $_ := set $item "secretKey" .setting.existingSecretKey -}}
{{- $_ := set $item "existing" true -}}
{{- else -}}
{{- $_ := set $item "secret" $.secret -}}
{{- $_ := set $item "secretKey" .key -}}
{{- $_ := set $item "value" (.value | default "") -}}
{{- $_ := set $item "generated" (.generated | default false) -}}
{{- end -}}
{{- $items = append $items $item -}}
{{- end -}}
{{- end -}}
{{- dict "items" $items | toJson -}}
{{- end -}}

{{/* The env entries NAME_FILE of a role's secret settings. Parameters as crm.secretSettings. */}}
{{- define "crm.secretEnv" -}}
{{- range (include "crm.secretSettings" . | fromJson).items }}
- name: {{ printf "%s_FILE" .name }}
  value: {{ printf "%s/%s" (include "crm.secretsDir" $.root) .file | quote }}
{{- end }}
{{- end -}}

{{/*
The volume of a role's secret settings: one projected file each, from the
existing Secret named for it or from the release's own Secret, readable by
the pod's group only.
*/}}
{{- define "crm.secretVolume" -}}
{{- $items := (include "crm.secretSettings" . | fromJson).items -}}
{{- if $items }}
- name: secrets
  projected:
    # 0440: the owner and the pod's group (fsGroup) may read.
    defaultMode: 288
    sources:
      {{- range $items }}
      - secret:
          name: {{ .secret }}
          items:
            - { key: {{ .secretKey | quote }}, path: {{ .file | quote }} }
      {{- end }}
{{- end }}
{{- end -}}

{{- define "crm.secretMount" -}}
{{- if (include "crm.secretSettings" . | fromJson).items }}
- name: secrets
  mountPath: {{ include "crm.secretsDir" .root }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
A fingerprint of what a role's secret settings hold, for the pod's
checksum/secrets annotation: a pod rolls when one of its own settings
changes, and only then. A value the release keeps counts by its value; an
existing Secret by its name and key, and by its content when the cluster
can be read (helm install and upgrade; not helm template, where the
fingerprint stays the same render after render); a generated admin token,
which never changes, by a fixed word.
*/}}
{{- define "crm.secretChecksum" -}}
{{- $parts := list -}}
{{- range (include "crm.secretSettings" . | fromJson).items -}}
{{- if .existing -}}
{{- $found := lookup "v1" "Secret" $.root.Release.Namespace .secret -}}
{{- $content := "" -}}
{{- if and $found $found.data -}}{{- $content = index $found.data .secretKey | default "" -}}{{- end -}}
{{- $parts = append $parts (printf "%s=secret:%s/%s:%s" .name .secret .secretKey ($content | sha256sum)) -}}
{{- else if .generated -}}
{{- $parts = append $parts (printf "%s=generated" .name) -}}
{{- else -}}
{{- $parts = append $parts (printf "%s=%s" .name (.value | sha256sum)) -}}
{{- end -}}
{{- end -}}
{{- join "\n" $parts | sha256sum -}}
{{- end -}}

{{/*
The settings every service container gets: where the others are, the log
level, telemetry. Secrets come as files (crm.secretEnv); each service's own
settings are added by crm.serviceEnv.
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
{{- end -}}

{{/* global.env, then the chart's own env: the operator's settings, given last so they win. */}}
{{- define "crm.extraEnv" -}}
{{- range $name, $value := .Values.global.env }}
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
tag as service.version, the release as service.namespace (with
k8s.namespace.name, what tells releases apart in the alert rules), and the
k8s.* resource attributes, read through the downward API and expanded by the
kubelet in OTEL_RESOURCE_ATTRIBUTES.
*/}}
{{- define "crm.otelResource" -}}
{{- $g := .Values.global -}}
{{- $image := $g.image | default dict -}}
{{- $version := $image.tag | default .Values.image.tag | default .Chart.AppVersion -}}
{{- $attributes := list
  "service.instance.id=$(K8S_POD_UID)"
  (printf "service.version=%s" $version)
  (printf "service.namespace=%s" .Release.Name)
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

{{/*
The pod spec parts a Deployment, the Job and the CronJob share. Parameters:
root, and serviceAccount (the pod's account: name and automount).
*/}}
{{- define "crm.podBasics" -}}
{{- $g := .root.Values.global -}}
{{- with .serviceAccountName }}
serviceAccountName: {{ . }}
{{- /* The deprecated alias, which the API server fills in from the name when
absent: given too, so that an upgrade or a rollback to a chart that names no
account (v0.3.0's) removes both; the alias left behind would set the name
again, and the pods would wait for an account the rollback deleted. */}}
serviceAccount: {{ . }}
{{- end }}
automountServiceAccountToken: {{ .automount | default false }}
enableServiceLinks: false
{{- with .priorityClassName | default $g.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- include "crm.podSecurityContext" .root | nindent 2 }}
{{- with $g.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The pod's labels: the operator's (global.podLabels, then podLabels), and the chart's over them. */}}
{{- define "crm.podLabels" -}}
{{- $labels := merge (dict) (include "crm.labels" . | fromYaml) (.Values.podLabels | default dict) (.Values.global.podLabels | default dict) -}}
{{- toYaml $labels -}}
{{- end -}}

{{- define "crm.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}


{{/* Volumes every pod of the release gets (global.extraVolumes), then the chart's own. */}}
{{- define "crm.extraVolumes" -}}
{{- with .Values.global.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "crm.extraVolumeMounts" -}}
{{- with .Values.global.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}
