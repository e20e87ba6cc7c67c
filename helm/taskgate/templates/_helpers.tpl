{{/* The chart name, at most 63 characters. */}}
{{- define "taskgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name, the stem of every object name. */}}
{{- define "taskgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every object (selector labels plus version and manager). */}}
{{- define "taskgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "taskgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of the release (a component label is added per workload). */}}
{{- define "taskgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "taskgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The image of gateways, workers and the test pod. */}}
{{- define "taskgate.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding REDIS_URL, TASKGATE_CURSOR_SECRET and the optional TASKGATE_TOKENS. */}}
{{- define "taskgate.secretName" -}}
{{- default (include "taskgate.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "taskgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "taskgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The environment variable of a setting value: settings.<camelCase> -> TASKGATE_<SNAKE_CASE>, except the
settings whose variables have no prefix (HOST, PORT, LOG_LEVEL).
*/}}
{{- define "taskgate.envName" -}}
{{- $plain := dict "host" "HOST" "port" "PORT" "logLevel" "LOG_LEVEL" }}
{{- if hasKey $plain . }}{{ get $plain . }}{{ else }}{{ printf "TASKGATE_%s" (snakecase . | upper) }}{{ end }}
{{- end }}

{{/* ConfigMap data lines of a settings map (null values are left out: taskgate's own default applies). */}}
{{- define "taskgate.settingsData" -}}
{{- range $key, $value := . }}
{{- if not (kindIs "invalid" $value) }}
{{ include "taskgate.envName" $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The OpenTelemetry variables of `otel`, as ConfigMap data (only OTEL_* names). */}}
{{- define "taskgate.otelData" -}}
{{- range $key, $value := . }}
{{- if not (regexMatch "^OTEL_[A-Z0-9_]+$" $key) }}
{{- fail (printf "otel.%s: only OpenTelemetry variables (OTEL_*) belong here" $key) }}
{{- end }}
{{ $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* The gateway's Service name. */}}
{{- define "taskgate.gatewayService" -}}
{{- printf "%s-gateway" (include "taskgate.fullname" .) }}
{{- end }}

{{/* The gateway's port (the PORT setting). */}}
{{- define "taskgate.gatewayPort" -}}
{{- .Values.gateway.settings.port | default 3000 }}
{{- end }}

{{/* The worker's ops port (the TASKGATE_METRICS_PORT setting). */}}
{{- define "taskgate.workerPort" -}}
{{- .Values.worker.settings.metricsPort | default 9464 }}
{{- end }}

{{/*
Host headers the gateway accepts when gateway.settings.allowedHosts is null: the Service's DNS names, the
Ingress and HTTPRoute host names, and loopback (the kubelet's probes send Host: localhost).
*/}}
{{- define "taskgate.allowedHosts" -}}
{{- $svc := include "taskgate.gatewayService" . }}
{{- $hosts := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.%s" $svc .Release.Namespace .Values.clusterDomain) "localhost" "127.0.0.1" "[::1]" }}
{{- if .Values.gateway.ingress.enabled }}
{{- range .Values.gateway.ingress.hosts }}{{ $hosts = append $hosts .host }}{{ end }}
{{- end }}
{{- if .Values.gateway.httpRoute.enabled }}
{{- range .Values.gateway.httpRoute.hostnames }}{{ $hosts = append $hosts . }}{{ end }}
{{- end }}
{{- join "," (uniq $hosts) }}
{{- end }}

{{/* The Redis URL: the value, or the try-out StatefulSet's Service. */}}
{{- define "taskgate.redisUrl" -}}
{{- if .Values.redis.url }}
{{- .Values.redis.url }}
{{- else if .Values.redis.deploy.enabled }}
{{- printf "redis://%s-redis:6379" (include "taskgate.fullname" .) }}
{{- end }}
{{- end }}

{{/* Seconds a pod may take to stop: the preStop pause, the drain timeout, the abort grace, and a margin. */}}
{{- define "taskgate.gracePeriod" -}}
{{- $drainMs := .root.Values.settings.drainTimeoutMs | default 25000 | int }}
{{- $extraMs := .extraMs | default 0 | int }}
{{- add .preStop (div (add $drainMs $extraMs 999) 1000) 5 }}
{{- end }}

{{/* The restricted-Pod-Security container securityContext. */}}
{{- define "taskgate.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: {{ .Values.podSecurityContext.runAsUser }}
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Environment from the Secret (every container of gateways and workers reads REDIS_URL and the optional password). */}}
{{- define "taskgate.redisEnv" -}}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "taskgate.secretName" . }}
      key: REDIS_URL
- name: TASKGATE_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "taskgate.secretName" . }}
      key: TASKGATE_REDIS_PASSWORD
      optional: true
{{- end }}

{{/* Rolls the pods when their configuration changes. */}}
{{- define "taskgate.checksum" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
