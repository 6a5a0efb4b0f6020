{{/* The release's full name: the release name, prefixed unless it already holds the chart name. */}}
{{- define "moat-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "moat-operator.serviceAccountName" -}}
{{- default (include "moat-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "moat-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "moat-operator.labels" -}}
{{ include "moat-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "moat-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "moat-operator.proxyImage" -}}
{{- printf "%s:%s" .Values.proxyImage.repository (default .Chart.AppVersion .Values.proxyImage.tag) -}}
{{- end -}}

{{/*
Everything `moat operator` does in a watched namespace; exactly the verbs the code uses. The
ClusterRole (all namespaces) and each namespaced Role (watchNamespaces) carry these same rules.
*/}}
{{- define "moat-operator.rules" -}}
# The custom resources: read through informers (list, watch), finalizers by merge patch (patch),
# a fresh read before a finalizer change (get), status by server-side apply (patch on /status).
- apiGroups: [moat.dev]
  resources:
    - mcpremoteproxies
    - mcpoidcconfigs
    - mcpauthzconfigs
    - mcpexternalauthconfigs
    - mcptelemetryconfigs
    - mcptoolconfigs
    - mcpgroups
  verbs: [get, list, watch, patch]
- apiGroups: [moat.dev]
  resources:
    - mcpremoteproxies/status
    - mcpoidcconfigs/status
    - mcpauthzconfigs/status
    - mcpexternalauthconfigs/status
    - mcptelemetryconfigs/status
    - mcptoolconfigs/status
    - mcpgroups/status
  verbs: [patch]
# Owner references with blockOwnerDeletion need this where OwnerReferencesPermissionEnforcement runs.
- apiGroups: [moat.dev]
  resources: [mcpremoteproxies/finalizers]
  verbs: [update]
# What a proxy owns: server-side apply (a patch; the first one creates, so create is needed too),
# watched for drift, deleted at cleanup.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [list, watch, create, patch, delete]
- apiGroups: ['']
  resources: [services, configmaps, serviceaccounts]
  verbs: [list, watch, create, patch, delete]
# Secrets are watched to check that named keys exist and to roll pods on rotation; values are never
# logged or copied (only key names and the resourceVersion are read).
- apiGroups: ['']
  resources: [secrets]
  verbs: [list, watch]
# Events are written, and a repeat bumps the count of the one already written.
- apiGroups: ['']
  resources: [events]
  verbs: [create, patch]
{{- end -}}
