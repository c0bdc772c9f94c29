{{- /* The DeviceClasses of whole GPUs and MIG devices, selecting the driver's devices by their type attribute. */ -}}
{{- if .Values.resources.gpus.enabled }}
{{- range $type := list "gpu" "mig" }}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {{ $type }}.nvidia.com
spec:
  selectors:
    - cel:
        expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{{ $type }}'"
{{- end }}
{{- end }}
