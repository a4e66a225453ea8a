{{- define "mcpproxy.name" -}}
{{ .Values.nameOverride | default .Chart.Name }}
{{- end }}

{{- define "mcpproxy.fullname" -}}
{{ .Values.fullnameOverride | default .Release.Name }}
{{- end }}

{{- define "mcpproxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcpproxy.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcpproxy.labels" -}}
{{ include "mcpproxy.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "mcpproxy.secretName" -}}
{{ .Values.secret.existingSecret | default (include "mcpproxy.fullname" .) }}
{{- end }}
