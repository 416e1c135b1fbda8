{{/*
One service: Deployment, Service, and as values a PodDisruptionBudget, a
HorizontalPodAutoscaler, topology spread and its NetworkPolicy.
*/}}
{{- define "crm.service" -}}
{{- $g := .Values.global -}}
{{- $gateway := eq .Values.component "gateway" -}}
{{- $port := ternary $g.ports.http $g.ports.grpc $gateway -}}
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
        {{- include "crm.labels" . | nindent 8 }}
      {{- with .Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- include "crm.podBasics" . | nindent 6 }}
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
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
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
            {{- if $gateway }}
            - name: TRUST_PROXY
              value: {{ .Values.trustProxy | quote }}
            {{- end }}
            {{- include "crm.env" . | nindent 12 }}
          ports:
            - name: {{ ternary "http" "grpc" $gateway }}
              containerPort: {{ $port }}
              protocol: TCP
          # Every probe answers from memory (the gateway's /healthz reads the
          # backends' states its background poll keeps), so 2 s is ample even
          # on a busy node; neither probe is subject to the gateway's load bound.
          {{- if $gateway }}
          startupProbe:
            httpGet: { path: /livez, port: http }
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 60
          livenessProbe:
            httpGet: { path: /livez, port: http }
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          # 503 only before every backend has served once, and while stopping:
          # a backend's outage leaves the gateway ready (docs/operations.md, "Readiness").
          readinessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 5
            timeoutSeconds: 2
            failureThreshold: 2
          {{- else }}
          # Ready when the service's own gRPC health status is SERVING (its schema is current).
          startupProbe:
            grpc: { port: {{ $port }}, service: {{ .Values.grpcService | quote }} }
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 90
          livenessProbe:
            tcpSocket: { port: grpc }
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
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
      volumes:
        {{- include "crm.tmpVolume" . | nindent 8 }}
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

{{/* Egress every component needs: DNS, Postgres, Redis, the telemetry collector. */}}
{{- define "crm.commonEgress" -}}
{{- $np := .Values.global.networkPolicy -}}
- ports:
    - { port: 53, protocol: UDP }
    - { port: 53, protocol: TCP }
  {{- with $np.dnsTo }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
- ports:
    - { port: {{ $np.postgres.port }}, protocol: TCP }
  {{- with $np.postgres.to }}
  to:
    {{- toYaml . | nindent 4 }}
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
