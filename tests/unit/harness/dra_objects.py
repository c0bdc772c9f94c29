# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Objects of NVIDIA's DRA driver chart as the harness tests create them."""

NAMESPACE = "nvidia-dra-driver-gpu"
# The chart's kubelet-plugin DaemonSet as far as the stand-in reads it: the component label, the GPU container, the
# nodeSelector the collection sets (kubeletPlugin.nodeSelector) and the chart's default node affinity in part.
KUBELET_PLUGIN = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "dra-driver-nvidia-gpu-kubelet-plugin", "namespace": NAMESPACE},
    "spec": {
        "selector": {"matchLabels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}},
        "template": {
            "metadata": {"labels": {"dra-driver-nvidia-gpu-component": "kubelet-plugin"}},
            "spec": {
                "nodeSelector": {"gpuops.cluster/gpu-allocation": "dra"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
                "containers": [
                    {"name": "gpus", "image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"}
                ],
            },
        },
    },
}
