{{- /* The refusals of upstream's templates/validation.yaml that the collection's values meet. */ -}}
{{- if and (eq .Release.Namespace "default") (not .Values.allowDefaultNamespace) }}
{{- fail "the driver does not run in namespace default unless allowDefaultNamespace is true" }}
{{- end }}
{{- if and .Values.resources.gpus.enabled (not .Values.gpuResourcesEnabledOverride) }}
{{- fail "resources.gpus.enabled needs gpuResourcesEnabledOverride=true: the kubelet plugin must not share a node with NVIDIA's device plugin" }}
{{- end }}
{{- if and .Values.resources.computeDomains.enabled (not .Values.webhook.enabled) }}
{{- fail "resources.computeDomains.enabled needs webhook.enabled (the ComputeDomain CRD converts through it)" }}
{{- end }}
