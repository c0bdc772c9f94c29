# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""HAMi (Project-HAMi/HAMi v2.10.0): its device plugin in place of NVIDIA's, and its own scheduler.

What a node advertises and what HAMi's scheduler accounts are computed as its code does: the device plugin
registers each GPU deviceSplitCount times as nvidia.com/gpu (pkg/device-plugin/nvidiadevice/nvinternal/rm/
devices.go GetPluginDevices: one "<uuid>-<i>" device per i below deviceSplitCount), and writes per GPU
Count=deviceSplitCount, Devmem (MiB, times deviceMemoryScaling) and Devcore (100 * deviceCoreScaling) into the
node annotation its scheduler accounts from (nvinternal/plugin/register.go getAPIDevices, RegisterInAnnotation).
"""

from __future__ import annotations

import math

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import FULL_GPU_RESOURCE
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import (
    VARIABLE,
    MemorySharingBackend,
    SharedUnit,
    SharingCapacityError,
)

NAME = "hami"
# The resources HAMi's device plugin registers (resourceName in the chart's values.yaml), and those its
# scheduler accounts from the node annotation.
GPU_RESOURCE = FULL_GPU_RESOURCE
# HAMi's scheduler reads a container's memory slice, in MiB, from this limit (pkg/device/nvidia/device.go,
# GenerateResourceRequests; without it the container takes all of the GPU's memory).
MEMORY_RESOURCE = "nvidia.com/gpumem"
CORES_RESOURCE = "nvidia.com/gpucores"
KEYS = ("split", "memory_scaling", "core_scaling")
# The chart's devicePlugin.deviceSplitCount, deviceMemoryScaling and deviceCoreScaling (charts/hami values.yaml).
DEFAULTS = {"split": 10, "memory_scaling": 1, "core_scaling": 1}
# The node selector of HAMi's device plugin: the chart's devicePlugin.nvidiaNodeSelector.
NODE_LABELS = {"gpu": "on"}
# The chart's schedulerName: HAMi runs its own scheduler, so it needs no kube-scheduler extender.
SCHEDULER_NAME = "hami-scheduler"
# HAMi's scheduler spreads a node's pods over its GPUs by default; binpack fills one GPU before the next, so
# that even a capped sharing check puts `split` pods on its first GPU.
GPU_POLICY_ANNOTATION = {"hami.io/gpu-scheduler-policy": "binpack"}
# gpu_validation's hami_scheduler_name, the schedulerName of the pods on HAMi nodes (None or "": the cluster's
# default, which HAMi's webhook sets too), and hami_request_gpumem: whether the sharing pods ask for
# nvidia.com/gpumem, which HAMi's scheduler needs to put several pods on one GPU. No node advertises it, so a
# scheduler that does not leave it to HAMi's extender keeps the pod Pending (Insufficient nvidia.com/gpumem).
POD_OPTION_DEFAULTS = {"scheduler_name": SCHEDULER_NAME, "request_gpumem": True}

# HAMi registers per GPU Count = int32(deviceSplitCount), Devmem = int32(MiB) scaled by deviceMemoryScaling and
# Devcore = int32(deviceCoreScaling * 100) (register.go getAPIDevices): beyond an int32 each wraps around, so
# these bound split, the scaled memory and core_scaling. A node's nvidia.com/gpu (at most 32 GPUs times an
# int32) stays within the int64 the kubelet advertises.
_INT32_MAX = 2**31 - 1
MAX_SPLIT = _INT32_MAX
MAX_CORE_SCALING = _INT32_MAX / 100
# A GPU has at least 1 MiB, so a larger memory_scaling overflows Devmem whatever the GPU.
MAX_MEMORY_SCALING = _INT32_MAX
_SCALING_MAXIMUM = {"memory_scaling": MAX_MEMORY_SCALING, "core_scaling": MAX_CORE_SCALING}


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _scaling_problem(key, value):
    if not _is_number(value) or value <= 0:
        return f"{VARIABLE}.{key}: must be a number greater than 0 such as 1 or 1.5, got {excerpt(value)}"
    if value > _SCALING_MAXIMUM[key]:
        field = (
            "Devcore = int32(100 * core_scaling)" if key == "core_scaling" else "Devmem = int32(MiB * memory_scaling)"
        )
        return (
            f"{VARIABLE}.{key}: must be at most {_SCALING_MAXIMUM[key]} (HAMi registers {field} per GPU, a "
            f"32-bit integer), got {excerpt(value)}"
        )
    if key == "core_scaling" and int(value * 100) < 1:
        # register.go: Devcore = int32(deviceCoreScaling * 100); below 0.01 a GPU would offer no core.
        return (
            f"{VARIABLE}.{key}: must be 0.01 or more (HAMi registers int(100 * core_scaling) cores per GPU), "
            f"got {excerpt(value)}"
        )
    return None


def registered_memory(memory_mib, memory_scaling):
    """Devmem HAMi registers for one GPU: MiB, scaled and truncated to an int32 when the scaling is not 1.

    MEMORY_SCALING: at most MAX_MEMORY_SCALING (lint_keys), so the float product stays finite.
    """
    if memory_mib > _INT32_MAX:
        raise SharingCapacityError(
            f"HAMi registers a GPU's memory as a 32-bit integer of MiB (at most {_INT32_MAX}), and this GPU has "
            f"{excerpt(memory_mib)} MiB; correct memory_mib in gpuops_gpu_catalog_extra"
        )
    if memory_scaling == 1:
        return memory_mib
    scaled = int(float(memory_mib) * memory_scaling)
    if scaled > _INT32_MAX:
        raise SharingCapacityError(
            f"memory_scaling {memory_scaling} makes {memory_mib} MiB {scaled} MiB, more than HAMi registers per "
            f"GPU (a 32-bit integer, {_INT32_MAX}); use a smaller memory_scaling"
        )
    if scaled < 1:
        raise SharingCapacityError(
            f"memory_scaling {memory_scaling} makes {memory_mib} MiB 0 MiB (HAMi truncates), so the GPU would offer "
            "no memory; use a larger memory_scaling"
        )
    return scaled


def gpu_mib(node_plan):
    """MiB HAMi's scheduler accounts per GPU (memory_scaling included), or None when neither the plan nor the
    catalog says.

    The plan's scheduler_accounts["nvidia.com/gpumem"] covers all of the node's GPUs; without it, the catalog's
    memory (as nvidia-smi prints it, which is what HAMi's device plugin reads through NVML) times memory_scaling.
    """
    entry = node_plan.get("memory_sharing") or {}
    count = node_plan.get("gpu_count") or 0
    accounted = (entry.get("scheduler_accounts") or {}).get(MEMORY_RESOURCE)
    if isinstance(accounted, int) and not isinstance(accounted, bool) and accounted > 0 and count > 0:
        return accounted // count
    product = find_product(str(node_plan.get("gpu_product") or ""))
    if product is None or not product.memory_mib:
        return None
    return int(product.memory_mib * float(entry.get("memory_scaling", 1) or 1))


class HamiBackend(MemorySharingBackend):
    name = NAME
    title = "HAMi"
    standing = "maintained, recommended"
    example = "{backend: hami, split: 10}"
    keys = KEYS
    other_keys_reason = "hami takes split, memory_scaling and core_scaling"
    node_labels = NODE_LABELS
    advertised_resources = (GPU_RESOURCE,)
    # HAMi registers its split devices as nvidia.com/gpu.
    pod_resource = GPU_RESOURCE
    unallocatable_resources = ()
    # The chart's release (tasks/hami_*.yml).
    needs_helm = True
    pod_option_defaults = POD_OPTION_DEFAULTS

    def lint_keys(self, value):
        problems = []
        if "split" in value:
            split = whole_number(value["split"])
            if split is None or not 1 <= split <= MAX_SPLIT:
                problems.append(
                    f"{VARIABLE}.split: must be a whole number of 1 or more, at most {MAX_SPLIT} (devices HAMi "
                    f"registers per GPU, its deviceSplitCount, which it registers as a 32-bit integer), got "
                    f"{excerpt(value['split'])}"
                )
        for key in ("memory_scaling", "core_scaling"):
            if key in value:
                problem = _scaling_problem(key, value[key])
                if problem:
                    problems.append(problem)
        return problems

    def normalize(self, value):
        settings = {**DEFAULTS, **{key: value[key] for key in KEYS if key in value}}
        settings["split"] = whole_number(settings["split"])
        return {"backend": NAME, **settings}

    def capacity(self, memory_mib, count, sharing):
        resources = {GPU_RESOURCE: count * sharing["split"]}
        accounts = {
            CORES_RESOURCE: count * int(sharing["core_scaling"] * 100),
            MEMORY_RESOURCE: count * registered_memory(memory_mib, sharing["memory_scaling"]),
        }
        return resources, accounts

    def describe(self, sharing):
        text = f"hami x{sharing['split']}"
        for key, short in (("memory_scaling", "memory"), ("core_scaling", "cores")):
            if sharing[key] != 1:
                text += f" {short} x{sharing[key]}"
        return text

    def plan_problems(self, where, node_plan):
        split = node_plan["memory_sharing"].get("split")
        if not isinstance(split, int) or isinstance(split, bool) or split < 1:
            return [f"{where}.split: must be a whole number of 1 or more, got {split!r}"]
        if gpu_mib(node_plan) is None:
            return [
                f"{where}: the memory of one GPU is unknown (no scheduler_accounts['{MEMORY_RESOURCE}'] and "
                f"no memory in the catalog for {node_plan.get('gpu_product')!r}); the sharing pods ask for a share "
                "of it"
            ]
        return []

    def validation_unit(self, node_plan, resource):
        split = max(int(node_plan["memory_sharing"].get("split", 1) or 1), 1)
        memory = gpu_mib(node_plan)
        # HAMi counts each GPU as `split` devices; one of `split` pods gets an even share of its memory.
        size = memory // split if memory else 0
        return SharedUnit(
            replicas=split,
            advertised=int((node_plan.get("resources") or {}).get(resource, 0)),
            sharing=f"HAMi, {MEMORY_RESOURCE} {size} MiB per pod",
            slice_resource=MEMORY_RESOURCE,
            slice_size=size,
        )

    def sharing_pod_limits(self, resource, slice_size, options):
        limits = {resource: "1"}
        if options["request_gpumem"] and slice_size:
            limits[MEMORY_RESOURCE] = str(slice_size)
        return limits

    def scheduler_name(self, options):
        return options["scheduler_name"] or None

    def sharing_pod_annotations(self):
        return dict(GPU_POLICY_ANNOTATION)
