# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node plans (capacity.json entries) made by the collection's own planner, and the pods' settings, for the
validation tests."""

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import manifests
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout, node_capacity
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.mps import normalize_mps
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import normalize_time_slicing

# The gpu_validation role's default images and commands (NVIDIA's CUDA sample image for both pods).
SETTINGS = manifests.PodSettings(
    smoke_image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
    smoke_command="nvidia-smi -L",
    cuda_image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
    cuda_command="/cuda-samples/vectorAdd",
    timeout=300,
)


def node_plan(product, count, strategy="none", mig_devices=None, time_slicing=None, mps=None, mig_config=None):
    layouts = [GpuLayout.of(bool(mig_devices), mig_devices)] * count
    planned = node_capacity(
        find_product(product),
        layouts,
        strategy,
        normalize_time_slicing(time_slicing) if time_slicing else None,
        normalize_mps(mps) if mps else None,
    )
    return {"gpu_product": product, "gpu_count": count, "mig_config": mig_config, **planned}


def whole_gpus():
    return node_plan("NVIDIA H100 80GB HBM3", 2)


def mig_single():
    return node_plan("NVIDIA A100-SXM4-80GB", 2, "single", {"1g.10gb": 7}, mig_config="all-1g.10gb")


def mig_mixed():
    return node_plan(
        "NVIDIA H100 80GB HBM3", 1, "mixed", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}, mig_config="all-balanced"
    )


def time_sliced(rename=False, replicas=4):
    return node_plan("NVIDIA L4", 4, "mixed", time_slicing={"replicas": replicas, "rename_by_default": rename})


def mps(replicas=3):
    return node_plan("NVIDIA L4", 2, "none", mps={"replicas": replicas})


# Memory-shared nodes, shaped as the memory-sharing contract of issue 13 describes capacity.json's node entries:
# the planner's whole-GPU entry, with the resources the sharing device plugin registers, its node labels in place
# of NVIDIA's device plugin's, and `memory_sharing`.
def _memory_shared(plan, resources, labels, entry):
    kept = {name: value for name, value in plan["labels"].items() if name != "nvidia.com/device-plugin.config"}
    return {
        **plan,
        "resources": resources,
        "labels": {**kept, **labels},
        "memory_sharing": entry,
        "gpu_allocation": "device_plugin",
    }


def hami(product="NVIDIA L4", count=2, split=10, memory_scaling=1, core_scaling=1):
    plan = node_plan(product, count)
    # HAMi's device plugin registers `split` devices per GPU and the GPU's NVML memory times memory_scaling.
    gpu_mib = int(find_product(product).memory_mib * memory_scaling)
    entry = {
        "backend": "hami",
        "split": split,
        "memory_scaling": memory_scaling,
        "core_scaling": core_scaling,
        "scheduler_accounts": {"nvidia.com/gpumem": gpu_mib * count, "nvidia.com/gpucores": 100 * core_scaling * count},
    }
    labels = {"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"}
    return _memory_shared(plan, {"nvidia.com/gpu": count * split}, labels, entry)


def gpushare(product="NVIDIA L4", count=2):
    plan = node_plan(product, count)
    # gpushare-device-plugin pkg/gpu/nvidia/nvidia.go: one fake device per GiB (MiB // 1024) of each GPU.
    gib = find_product(product).memory_mib // 1024
    labels = {"gpushare": "true", "nvidia.com/gpu.deploy.device-plugin": "false"}
    resources = {"aliyun.com/gpu-mem": gib * count, "aliyun.com/gpu-count": count}
    return _memory_shared(plan, resources, labels, {"backend": "gpushare", "scheduler_accounts": {}})
