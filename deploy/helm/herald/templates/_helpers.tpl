{{/* The release's base name: "herald" for a release named herald. */}}
{{- define "herald.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "herald.secretName" -}}
{{- .Values.secret.existingSecret | default (include "herald.fullname" .) -}}
{{- end -}}

{{- define "herald.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "herald.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "herald.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end -}}

{{- define "herald.envFrom" -}}
- configMapRef:
    name: {{ include "herald.fullname" . }}
- secretRef:
    name: {{ include "herald.secretName" . }}
{{- end -}}

{{- define "herald.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "herald.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The init container that holds a Pod until `herald db upgrade` has run. */}}
{{- define "herald.waitForSchema" -}}
- name: wait-for-schema
  image: {{ include "herald.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["db", "wait", "--timeout", "{{ .Values.waitForSchema.timeoutSeconds }}"]
  envFrom:
    {{- include "herald.envFrom" . | nindent 4 }}
  resources:
    {{- toYaml .Values.waitForSchema.resources | nindent 4 }}
  securityContext:
    {{- include "herald.containerSecurityContext" . | nindent 4 }}
{{- end -}}
