{{- /* The chart's name, and the selector label of one component: "<name>-component: <component>". */ -}}
{{- define "standin.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "standin.image" -}}
{{- .Values.image.repository -}}:{{- .Values.image.tag | default (printf "v%s" .Chart.AppVersion) -}}
{{- end -}}
