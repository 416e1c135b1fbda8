{{/*
One service: Deployment, Service, and as values a PodDisruptionBudget, a
HorizontalPodAutoscaler, topology spread and its NetworkPolicy.
*/}}
{{- define "crm.service" -}}
{{- $g := .Values.global -}}
{{- $gateway := eq .Values.component "gateway" -}}
{{- $port := ternary $g.ports.http $g.ports.grpc $gateway -}}
{{- $secrets := dict "root" . "role" .Values.component "secret" (include "crm.secretName" .) -}}
{{- $blocklist := include "crm.referrerBlocklist" . | fromJson -}}
{{- $account := .Values.serviceAccount -}}
{{- $accountName := $account.name | default (ternary (include "crm.fullname" .) "" $account.create) -}}
{{- if $account.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $accountName }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
  {{- with $account.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: {{ $account.automount }}
---
{{- end }}
{{- if and $blocklist.path (not .Values.referrerBlocklist.existingConfigMap) }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $blocklist.configMap }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
data:
  {{ $blocklist.key }}: {{ $blocklist.text | quote }}
---
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "crm.fullname" . }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      # A new pod serves before an old one goes.
      maxUnavailable: 0
      maxSurge: 1
  selector:
    matchLabels:
      {{- include "crm.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "crm.podLabels" . | nindent 8 }}
      annotations:
        # A changed secret setting or block list this pod reads rolls it (they are read at start).
        checksum/secrets: {{ include "crm.secretChecksum" $secrets | quote }}
        {{- if $blocklist.path }}
        checksum/referrer-blocklist: {{ $blocklist.checksum | quote }}
        {{- end }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "crm.podBasics" (dict "root" . "serviceAccountName" $accountName "automount" $account.automount "priorityClassName" .Values.priorityClassName) | nindent 6 }}
      terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
      {{- if .Values.topologySpread.enabled }}
      topologySpreadConstraints:
        - maxSkew: {{ .Values.topologySpread.maxSkew }}
          topologyKey: {{ .Values.topologySpread.topologyKey }}
          whenUnsatisfiable: {{ .Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- include "crm.selectorLabels" . | nindent 14 }}
      {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if .Values.affinity }}
      affinity:
        {{- toYaml .Values.affinity | nindent 8 }}
      {{- else if .Values.podAntiAffinityPreset }}
      # Replicas on different nodes: preferred (soft) or required (hard).
      affinity:
        podAntiAffinity:
          {{- if eq .Values.podAntiAffinityPreset "hard" }}
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  {{- include "crm.selectorLabels" . | nindent 18 }}
          {{- else }}
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "crm.selectorLabels" . | nindent 20 }}
          {{- end }}
      {{- end }}
      containers:
        - name: {{ .Values.component }}
          image: {{ include "crm.image" . | quote }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args: ["service", {{ .Values.component | quote }}]
          env:
            - name: HOST
              value: "0.0.0.0"
            - name: {{ ternary "PORT" "GRPC_PORT" $gateway }}
              value: {{ $port | quote }}
            {{- include "crm.env" . | nindent 12 }}
            {{- include "crm.serviceEnv" . | nindent 12 }}
            {{- include "crm.secretEnv" $secrets | nindent 12 }}
            {{- if $blocklist.path }}
            - name: REFERRER_BLOCKLIST
              value: {{ $blocklist.path | quote }}
            {{- end }}
            {{- include "crm.extraEnv" . | nindent 12 }}
          ports:
            - name: {{ ternary "http" "grpc" $gateway }}
              containerPort: {{ $port }}
              protocol: TCP
          # Every probe answers from memory on the process's event loop, so 2 s
          # is ample even on a busy node and a stuck loop fails the liveness
          # probe; none is subject to the gateway's load bound. Liveness asks
          # only whether the loop runs: a backend outage (Postgres down) makes
          # a service not ready, never restarted (docs/kubernetes.md, "Probes").
          {{- $live := .Values.livenessProbe }}
          {{- if $gateway }}
          startupProbe:
            httpGet: { path: /livez, port: http }
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 60
          livenessProbe:
            httpGet: { path: /livez, port: http }
            periodSeconds: {{ $live.periodSeconds }}
            timeoutSeconds: {{ $live.timeoutSeconds }}
            failureThreshold: {{ $live.failureThreshold }}
            terminationGracePeriodSeconds: {{ $live.terminationGracePeriodSeconds }}
          # 503 only before every backend has served once, and while stopping:
          # a backend's outage leaves the gateway ready (docs/operations.md, "Readiness").
          readinessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 5
            timeoutSeconds: 2
            failureThreshold: 2
          {{- else }}
          # Started once the gRPC server answers on its loop (a service waiting
          # for Postgres is started, not ready), live while it goes on answering.
          startupProbe:
            grpc: { port: {{ $port }}, service: "liveness" }
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 90
          livenessProbe:
            grpc: { port: {{ $port }}, service: "liveness" }
            periodSeconds: {{ $live.periodSeconds }}
            timeoutSeconds: {{ $live.timeoutSeconds }}
            failureThreshold: {{ $live.failureThreshold }}
            terminationGracePeriodSeconds: {{ $live.terminationGracePeriodSeconds }}
          # Ready while the service's own gRPC health status is SERVING (its schema current, Postgres answering).
          readinessProbe:
            grpc: { port: {{ $port }}, service: {{ .Values.grpcService | quote }} }
            periodSeconds: 5
            timeoutSeconds: 2
            failureThreshold: 2
          {{- end }}
          lifecycle:
            preStop:
              # Endpoints drop the pod before it stops accepting.
              sleep: { seconds: {{ .Values.preStopSleepSeconds }} }
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
          securityContext:
            {{- include "crm.containerSecurityContext" . | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- include "crm.secretMount" $secrets | nindent 12 }}
            {{- if $blocklist.path }}
            - name: referrer-blocklist
              mountPath: {{ $blocklist.dir }}
              readOnly: true
            {{- end }}
            {{- include "crm.extraVolumeMounts" . | nindent 12 }}
      volumes:
        {{- include "crm.tmpVolume" . | nindent 8 }}
        {{- include "crm.secretVolume" $secrets | nindent 8 }}
        {{- if $blocklist.path }}
        - name: referrer-blocklist
          configMap:
            name: {{ $blocklist.configMap }}
            items:
              - { key: {{ $blocklist.key | quote }}, path: {{ $blocklist.key | quote }} }
        {{- end }}
        {{- include "crm.extraVolumes" . | nindent 8 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "crm.fullname" . }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "crm.selectorLabels" . | nindent 4 }}
  ports:
    - name: {{ ternary "http" "grpc" $gateway }}
      port: {{ $port }}
      targetPort: {{ ternary "http" "grpc" $gateway }}
      protocol: TCP
      {{- if not $gateway }}
      appProtocol: kubernetes.io/h2c
      {{- end }}
{{- if .Values.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "crm.fullname" . }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
spec:
  minAvailable: {{ .Values.pdb.minAvailable }}
  selector:
    matchLabels:
      {{- include "crm.selectorLabels" . | nindent 6 }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "crm.fullname" . }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "crm.fullname" . }}
  minReplicas: {{ .Values.autoscaling.minReplicas }}
  maxReplicas: {{ .Values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ .Values.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
{{- if $g.networkPolicy.enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "crm.fullname" . }}
  labels:
    {{- include "crm.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "crm.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    {{- if $gateway }}
    # Anyone, or only the configured ingress controller.
    - ports:
        - { port: {{ $port }}, protocol: TCP }
      {{- with $g.networkPolicy.gatewayFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- else }}
    # The gateway and the admin Job and CronJob, nobody else.
    - ports:
        - { port: {{ $port }}, protocol: TCP }
      from:
        - podSelector:
            matchLabels:
              {{- include "crm.componentSelector" (dict "root" . "component" "gateway") | nindent 14 }}
        - podSelector:
            matchLabels:
              {{- include "crm.componentSelector" (dict "root" . "component" "admin") | nindent 14 }}
    {{- end }}
    {{- with $g.networkPolicy.probesFrom }}
    # The kubelet's probes, where the network plugin does not exempt them.
    - from:
        {{- toYaml . | nindent 8 }}
    {{- end }}
  egress:
    {{- include "crm.commonEgress" . | nindent 4 }}
    {{- if has .Values.component (list "content" "ingest") }}
    {{- $hooks := .Values.global.networkPolicy.webhooks }}
    # Webhook deliveries; the services also refuse private addresses themselves.
    - ports:
        {{- range $hooks.ports }}
        - { port: {{ . }}, protocol: TCP }
        {{- end }}
      to:
        {{- if $hooks.to }}
        {{- toYaml $hooks.to | nindent 8 }}
        {{- else }}
        - ipBlock:
            cidr: 0.0.0.0/0
            except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16, 100.64.0.0/10, 127.0.0.0/8]
        - ipBlock:
            cidr: "::/0"
            except: ["fc00::/7", "fe80::/10", "::1/128"]
        {{- end }}
    {{- end }}
    {{- if $gateway }}
    - ports:
        - { port: {{ $g.ports.grpc }}, protocol: TCP }
      to:
        {{- range list "auth" "content" "ingest" }}
        - podSelector:
            matchLabels:
              {{- include "crm.componentSelector" (dict "root" $ "component" .) | nindent 14 }}
        {{- end }}
    {{- end }}
{{- end }}
{{- end -}}

{{/*
Egress every component needs: DNS, Redis, the telemetry collector; and
Postgres for all but the gateway, which holds no database setting.
*/}}
{{- define "crm.commonEgress" -}}
{{- $np := .Values.global.networkPolicy -}}
- ports:
    - { port: 53, protocol: UDP }
    - { port: 53, protocol: TCP }
  {{- with $np.dnsTo }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- if ne .Values.component "gateway" }}
- ports:
    - { port: {{ $np.postgres.port }}, protocol: TCP }
  {{- with $np.postgres.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
- ports:
    - { port: {{ $np.redis.port }}, protocol: TCP }
  {{- with $np.redis.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- if .Values.global.otel.endpoint }}
- ports:
    - { port: {{ $np.collector.port }}, protocol: TCP }
  {{- with $np.collector.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}


{{/*
Each service's own settings, besides the shared ones and its secrets: the
gateway's proxies and trace trust; the public URL for the gateway, auth
(share links) and ingest (mails); the services' pool size; the report
timeout for ingest and the gateway that waits for it; ingest's report pool
and mail sender.
*/}}
{{- define "crm.serviceEnv" -}}
{{- $g := .Values.global -}}
{{- $component := .Values.component -}}
{{- if eq $component "gateway" }}
- name: TRUST_PROXY
  value: {{ .Values.trustProxy | quote }}
- name: TRACE_TRUST_PARENT
  value: {{ ternary "1" "0" .Values.traceTrustParent | quote }}
{{- end }}
{{- if and $g.publicUrl (has $component (list "gateway" "auth" "ingest")) }}
- name: PUBLIC_URL
  value: {{ $g.publicUrl | quote }}
{{- end }}
{{- if has $component (list "auth" "content" "ingest") }}
- name: DATABASE_POOL_SIZE
  value: {{ $g.postgres.poolSize | quote }}
{{- end }}
{{- if has $component (list "gateway" "ingest") }}
- name: REPORT_TIMEOUT_MS
  value: {{ $g.reports.timeoutMs | quote }}
{{- end }}
{{- if eq $component "ingest" }}
- name: REPORT_POOL_SIZE
  value: {{ $g.reports.poolSize | quote }}
{{- with ($g.smtp | default dict).from }}
- name: MAIL_FROM
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Ingest's referrer block list (REFERRER_BLOCKLIST), a file from a ConfigMap:
the release's own made from referrerBlocklist.hosts, or an existing one. As
JSON: path, dir, configMap, key, text, checksum; {} when there is none.
*/}}
{{- define "crm.referrerBlocklist" -}}
{{- $list := .Values.referrerBlocklist | default dict -}}
{{- if and (eq .Values.component "ingest") (or $list.hosts $list.existingConfigMap) -}}
{{- $dir := "/etc/crm/referrer-blocklist" -}}
{{- if $list.existingConfigMap -}}
{{- $key := $list.existingConfigMapKey -}}
{{- $found := lookup "v1" "ConfigMap" .Release.Namespace $list.existingConfigMap -}}
{{- $content := "" -}}
{{- if and $found $found.data -}}{{- $content = index $found.data $key | default "" -}}{{- end -}}
{{- dict "path" (printf "%s/%s" $dir $key) "dir" $dir "configMap" $list.existingConfigMap "key" $key "checksum" (printf "%s/%s:%s" $list.existingConfigMap $key ($content | sha256sum) | sha256sum) | toJson -}}
{{- else -}}
{{- $text := printf "%s\n" (join "\n" $list.hosts) -}}
{{- $name := printf "%s-referrer-blocklist" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- dict "path" (printf "%s/referrers.txt" $dir) "dir" $dir "configMap" $name "key" "referrers.txt" "text" $text "checksum" ($text | sha256sum) | toJson -}}
{{- end -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}
