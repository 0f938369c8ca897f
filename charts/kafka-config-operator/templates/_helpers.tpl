{{/* Chart name, overridable. */}}
{{- define "kco.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: release-chart, or the release name when it already contains the chart name. */}}
{{- define "kco.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kco.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kco.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kco.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kafka-config-operator
{{- end -}}

{{- define "kco.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kco.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /* The Secret holding the content-hash key, created by the operator (never templated: a
random value here would change on every `helm template`, i.e. on every Argo CD sync). */ -}}
{{- define "kco.hashKeySecret" -}}
{{- printf "%s-hash-key" (include "kco.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kco.leaseName" -}}
{{- default (include "kco.fullname" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{- define "kco.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
Rules the operator needs on namespaced resources (see e2e/rbac/cluster.yaml for why each verb):
granted cluster-wide in cluster mode, per watched namespace in namespaced mode.
*/}}
{{- define "kco.namespacedRules" -}}
- apiGroups: [kafkaconfig.dev]
  resources: [kafkatoolconfigs]
  verbs: [list, watch]
- apiGroups: [kafkaconfig.dev]
  resources: [kafkatoolconfigs/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [apps]
  resources: [deployments, statefulsets, daemonsets]
  verbs: [get, list, watch, patch]
- apiGroups: [apps]
  resources: [replicasets]
  verbs: [list]
- apiGroups: [argoproj.io]
  resources: [rollouts]
  verbs: [get, list, watch, patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create]
{{- end -}}

{{/* Rules that stay cluster-wide in both modes (cluster-scoped resources). */}}
{{- define "kco.clusterRules" -}}
- apiGroups: [kafkaconfig.dev]
  resources: [globalclientdefaults]
  verbs: [list, watch]
- apiGroups: [kafkaconfig.dev]
  resources: [globalclientdefaults/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end -}}
