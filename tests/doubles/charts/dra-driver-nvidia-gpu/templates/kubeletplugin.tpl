{{- /*
The kubelet plugin's DaemonSet with what the collection sets and the GPU node stand-in reads: the component label,
the gpus container and its FEATURE_GATES, the node selector, affinity and tolerations. Its container only holds the
place: tests/doubles/gpu_node plays the plugin (dra_plugin.py, dra_kubelet_plugin.py).
*/ -}}
{{- if .Values.resources.gpus.enabled }}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ include "standin.name" . }}-kubelet-plugin
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/name: {{ include "standin.name" . }}
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  selector:
    matchLabels:
      {{ include "standin.name" . }}-component: kubelet-plugin
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ include "standin.name" . }}
        app.kubernetes.io/instance: {{ .Release.Name }}
        {{ include "standin.name" . }}-component: kubelet-plugin
    spec:
      priorityClassName: {{ .Values.kubeletPlugin.priorityClassName }}
      {{- with .Values.kubeletPlugin.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.kubeletPlugin.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.kubeletPlugin.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: gpus
          image: {{ include "standin.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          command: [/bin/sh, -c, "exec sleep infinity"]
          env:
            - name: NVIDIA_DRIVER_ROOT
              value: {{ .Values.nvidiaDriverRoot | quote }}
            - name: LOG_VERBOSITY
              value: {{ .Values.logVerbosity | quote }}
            {{- if .Values.featureGates }}
            - name: FEATURE_GATES
              value: "{{ range $key, $value := .Values.featureGates }}{{ $key }}={{ $value }},{{ end }}"
            {{- end }}
{{- end }}
