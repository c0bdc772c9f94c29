# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU sharing by memory (gpuops_memory_sharing): HAMi or Alibaba's gpushare in place of NVIDIA's device plugin.

What a node advertises and what the sharing scheduler accounts are computed as each project's code does:
- HAMi v2.10.0 (Project-HAMi/HAMi): the device plugin registers each GPU deviceSplitCount times as
  nvidia.com/gpu (pkg/device-plugin/nvidiadevice/nvinternal/rm/devices.go GetPluginDevices: one
  "<uuid>-<i>" device per i below deviceSplitCount), and writes per GPU Count=deviceSplitCount, Devmem
  (MiB, times deviceMemoryScaling) and Devcore (100 * deviceCoreScaling) into the node annotation its
  scheduler accounts from (nvinternal/plugin/register.go getAPIDevices, RegisterInAnnotation).
- gpushare-device-plugin (AliyunContainerService): aliyun.com/gpu-mem is one fake device per GiB of
  every GPU, and aliyun.com/gpu-count the number of GPUs, patched into the node status
  (pkg/gpu/nvidia/nvidia.go getDevices, server.go NewNvidiaDevicePlugin, podmanager.go patchGPUCount).
"""

from __future__ import annotations

import difflib
import math

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.device_plugin import whole_number
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.errors import CapacityError

VARIABLE = "gpuops_memory_sharing"
HAMI = "hami"
GPUSHARE = "gpushare"
BACKENDS = (HAMI, GPUSHARE)
HAMI_KEYS = ("split", "memory_scaling", "core_scaling")
KEYS = ("backend", *HAMI_KEYS)
# The chart's devicePlugin.deviceSplitCount, deviceMemoryScaling and deviceCoreScaling (charts/hami values.yaml).
HAMI_DEFAULTS = {"split": 10, "memory_scaling": 1, "core_scaling": 1}

HAMI_GPU = "nvidia.com/gpu"
HAMI_MEMORY = "nvidia.com/gpumem"
HAMI_CORES = "nvidia.com/gpucores"
GPUSHARE_MEMORY = "aliyun.com/gpu-mem"
GPUSHARE_COUNT = "aliyun.com/gpu-count"
# The GPU Operator deploys its device plugin on a node unless this label is "false"; HAMi and gpushare
# register their own on such nodes, and two plugins cannot both serve nvidia.com/gpu.
DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# The node selectors of each backend's device plugin: HAMi's chart devicePlugin.nvidiaNodeSelector,
# gpushare's device-plugin-ds.yaml nodeSelector.
BACKEND_LABELS = {HAMI: {"gpu": "on"}, GPUSHARE: {"gpushare": "true"}}
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
# gpushare-device-plugin's DaemonSet runs with --memory-unit=GiB (device-plugin-ds.yaml): MiB / 1024,
# truncated (nvidia.go setGPUMemory).
_MIB_PER_GIB = 1024

# The kube-scheduler extender of gpushare-scheduler-extender, as its
# config/scheduler-policy-config-v1.28+.yaml (and scheduler-policy-config.yaml) declares it: the
# extender's NodePort 32766 on the scheduler's host, managing aliyun.com/gpu-mem.
GPUSHARE_EXTENDER = {
    "urlPrefix": "http://127.0.0.1:32766/gpushare-scheduler",
    "filterVerb": "filter",
    "bindVerb": "bind",
    "enableHTTPS": False,
    "nodeCacheCapable": True,
    "managedResources": [{"name": GPUSHARE_MEMORY, "ignoredByScheduler": False}],
    "ignorable": False,
}


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _suggest(word, valid):
    close = difflib.get_close_matches(str(word), list(valid), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


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


def lint_memory_sharing(value) -> list[str]:
    """Every problem of a gpuops_memory_sharing value, each starting with its key path. None: no memory sharing."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{VARIABLE}: must be a mapping such as {{backend: hami, split: 10}} or {{backend: gpushare}}, "
            f"got {type(value).__name__}; omit {VARIABLE} for no memory sharing"
        ]
    problems = [
        f"{VARIABLE}.{excerpt(key, bare=True)}: unknown key; {_suggest(key, KEYS)}valid keys: {', '.join(KEYS)}"
        for key in value
        if key not in KEYS
    ]
    backend = value.get("backend")
    if "backend" not in value:
        problems.append(f"{VARIABLE}.backend: is not set; valid: {', '.join(BACKENDS)}")
    elif backend not in BACKENDS:
        problems.append(
            f"{VARIABLE}.backend: unknown backend {excerpt(backend)}; {_suggest(backend, BACKENDS)}valid: hami "
            "(maintained, recommended) or gpushare (legacy)"
        )
    if backend == GPUSHARE:
        problems += [
            f"{VARIABLE}.{key}: applies to backend hami only; gpushare takes no other key (it shares by whole GiB "
            f"of memory): remove {key} or use backend hami"
            for key in HAMI_KEYS
            if key in value
        ]
        return problems
    if "split" in value:
        split = whole_number(value["split"])
        if split is None or not 1 <= split <= MAX_SPLIT:
            problems.append(
                f"{VARIABLE}.split: must be a whole number of 1 or more, at most {MAX_SPLIT} (devices HAMi registers "
                f"per GPU, its deviceSplitCount, which it registers as a 32-bit integer), got {excerpt(value['split'])}"
            )
    for key in ("memory_scaling", "core_scaling"):
        if key in value:
            problem = _scaling_problem(key, value[key])
            if problem:
                problems.append(problem)
    return problems


def normalize_memory_sharing(value):
    """A valid gpuops_memory_sharing with HAMi's defaults filled in, or None."""
    if value is None:
        return None
    if value["backend"] == GPUSHARE:
        return {"backend": GPUSHARE}
    settings = {**HAMI_DEFAULTS, **{key: value[key] for key in HAMI_KEYS if key in value}}
    settings["split"] = whole_number(settings["split"])
    return {"backend": HAMI, **settings}


def conflict_problems(value, time_slicing, mps, mig_config, mig_gpus) -> list[str]:
    """Why memory sharing cannot run on a node with these other intents (MIG_GPUS: indexes of MIG-enabled GPUs)."""
    if value is None:
        return []
    why = "memory sharing replaces NVIDIA's device plugin on the node, which is what"
    problems = []
    if time_slicing is not None:
        problems.append(
            f"cannot be combined with gpuops_time_slicing on one node: {why} time-slices; remove one of them"
        )
    if mps is not None:
        problems.append(f"cannot be combined with gpuops_mps on one node: {why} runs MPS; remove one of them")
    if mig_gpus:
        problems.append(
            f"cannot be combined with gpuops_mig_config {mig_config}, which enables MIG on GPU "
            f"{', '.join(map(str, mig_gpus))}: memory sharing splits whole GPUs; use all-disabled or remove "
            "gpuops_mig_config"
        )
    return problems


def _memory_mib(product):
    if product.memory_mib:
        return product.memory_mib
    if product.origin == "catalog":
        way_out = "record it in the catalog from the product's nvidia-smi output (docs/gpu-catalog.md)"
    else:
        way_out = "describe the product in gpuops_gpu_catalog_extra (name, memory_mib, compute_capability)"
    raise CapacityError(
        f"memory sharing needs the memory of {product.name}, which the GPU catalog does not record; {way_out}"
    )


def hami_registered_memory(memory_mib, memory_scaling):
    """Devmem HAMi registers for one GPU: MiB, scaled and truncated to an int32 when the scaling is not 1.

    MEMORY_SCALING: at most MAX_MEMORY_SCALING (lint_memory_sharing), so the float product stays finite.
    """
    if memory_mib > _INT32_MAX:
        raise CapacityError(
            f"HAMi registers a GPU's memory as a 32-bit integer of MiB (at most {_INT32_MAX}), and this GPU has "
            f"{excerpt(memory_mib)} MiB; correct memory_mib in gpuops_gpu_catalog_extra"
        )
    if memory_scaling == 1:
        return memory_mib
    scaled = int(float(memory_mib) * memory_scaling)
    if scaled > _INT32_MAX:
        raise CapacityError(
            f"memory_scaling {memory_scaling} makes {memory_mib} MiB {scaled} MiB, more than HAMi registers per "
            f"GPU (a 32-bit integer, {_INT32_MAX}); use a smaller memory_scaling"
        )
    if scaled < 1:
        raise CapacityError(
            f"memory_scaling {memory_scaling} makes {memory_mib} MiB 0 MiB (HAMi truncates), so the GPU would offer "
            "no memory; use a larger memory_scaling"
        )
    return scaled


def gpushare_memory_gib(memory_mib):
    """aliyun.com/gpu-mem devices per GPU: whole GiB, truncated."""
    return memory_mib // _MIB_PER_GIB


def sharing_capacity(product, count, sharing):
    """(resources, scheduler_accounts) of a node of COUNT GPUS of PRODUCT under a normalized SHARING.

    Raises CapacityError when the product's memory is unknown.
    """
    memory_mib = _memory_mib(product)
    if sharing["backend"] == GPUSHARE:
        return {GPUSHARE_COUNT: count, GPUSHARE_MEMORY: count * gpushare_memory_gib(memory_mib)}, {}
    resources = {HAMI_GPU: count * sharing["split"]}
    accounts = {
        HAMI_CORES: count * int(sharing["core_scaling"] * 100),
        HAMI_MEMORY: count * hami_registered_memory(memory_mib, sharing["memory_scaling"]),
    }
    return resources, accounts


def sharing_labels(sharing):
    """The node labels that select the backend's device plugin and turn the GPU Operator's off."""
    return {**BACKEND_LABELS[sharing["backend"]], DEVICE_PLUGIN_DEPLOY_LABEL: "false"}


def describe_sharing(sharing):
    """The SHARING column of the plan's table."""
    if sharing is None:
        return "-"
    if sharing["backend"] == GPUSHARE:
        return "gpushare"
    text = f"hami x{sharing['split']}"
    for key, short in (("memory_scaling", "memory"), ("core_scaling", "cores")):
        if sharing[key] != 1:
            text += f" {short} x{sharing[key]}"
    return text


def scheduler_extenders(sharings):
    """The KubeSchedulerConfiguration extenders the cluster needs for SHARINGS (normalized values): gpushare's
    when a node uses it. HAMi needs none: its chart runs its own scheduler (schedulerName hami-scheduler)."""
    if any(sharing and sharing["backend"] == GPUSHARE for sharing in sharings):
        return [dict(GPUSHARE_EXTENDER, managedResources=[dict(r) for r in GPUSHARE_EXTENDER["managedResources"]])]
    return []
