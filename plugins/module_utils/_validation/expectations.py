# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What one unit of a planned GPU resource must look like from inside a pod, read from the plan.

The plan's node entry (capacity.json) carries the resources the device plugin advertises and the labels
GPU Feature Discovery writes for them, named after the resource before renaming
(`nvidia.com/gpu.replicas` describes `nvidia.com/gpu.shared` too).

A node that shares its GPUs by memory (the entry's `memory_sharing`, HAMi or gpushare) has no NVIDIA device
plugin: its sharing is read from `memory_sharing` and its resources, not from GFD's replicas labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product, normalize_product_name

FULL_GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
# The device plugin appends ".shared" to a time-sliced or MPS resource when renaming is on.
SHARED_SUFFIX = ".shared"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
# With MIG strategy single, GFD names the product "<GPU>-MIG-<profile>" (plus "-SHARED" when shared).
_SINGLE_PRODUCT = re.compile(r"-MIG-(?P<profile>.+?)(?:-SHARED)?$")
SHARING_STRATEGIES = ("time-slicing", "mps")

KIND_GPU = "gpu"
KIND_MIG = "mig"

# The names of the plan's memory_sharing (module_utils/_plan/memory_sharing.py, which modules do not import).
HAMI, GPUSHARE = "hami", "gpushare"
MEMORY_SHARING_BACKENDS = (HAMI, GPUSHARE)
# HAMi's scheduler reads a container's memory slice, in MiB, from this limit (pkg/device/nvidia/device.go,
# GenerateResourceRequests; without it the container takes all of the GPU's memory).
HAMI_MEMORY_RESOURCE = "nvidia.com/gpumem"
# gpushare's device plugin advertises the node's GPU memory in GiB, and the GPU count as a resource no pod asks for.
GPUSHARE_MEMORY_RESOURCE = "aliyun.com/gpu-mem"
GPUSHARE_COUNT_RESOURCE = "aliyun.com/gpu-count"


@dataclass(frozen=True)
class DeviceExpectation:
    """One unit of RESOURCE: a whole GPU or a MIG device of MIG_PROFILE, shared by REPLICAS pods."""

    resource: str
    kind: str
    mig_profile: str | None
    product: str
    replicas: int
    sharing: str
    advertised: int
    # Memory sharing: the backend, and the resource and amount each sharing pod asks for (MiB with HAMi's
    # nvidia.com/gpumem, GiB with gpushare's aliyun.com/gpu-mem); 0 where the size is unknown.
    backend: str | None = None
    slice_resource: str | None = None
    slice_size: int = 0

    def describe(self):
        device = f"one MIG {self.mig_profile} device" if self.kind == KIND_MIG else "one GPU and no MIG device"
        return f"{device} of {self.product}"


def base_resource(resource):
    """The resource before renaming: "nvidia.com/gpu.shared" -> "nvidia.com/gpu"."""
    return resource[: -len(SHARED_SUFFIX)] if resource.endswith(SHARED_SUFFIX) else resource


def _replicas(labels, base):
    try:
        return max(int(labels.get(f"{base}.replicas", "1")), 1)
    except (TypeError, ValueError):
        return 1


def memory_sharing(node_plan):
    """The node's `memory_sharing` entry when it names a known backend, else None."""
    entry = node_plan.get("memory_sharing")
    if isinstance(entry, dict) and entry.get("backend") in MEMORY_SHARING_BACKENDS:
        return entry
    return None


def hami_gpu_mib(node_plan):
    """MiB HAMi's scheduler accounts per GPU (memory_scaling included), or None when neither the plan nor the
    catalog says.

    The plan's scheduler_accounts["nvidia.com/gpumem"] covers all of the node's GPUs; without it, the catalog's
    memory (as nvidia-smi prints it, which is what HAMi's device plugin reads through NVML) times memory_scaling.
    """
    entry = memory_sharing(node_plan) or {}
    count = node_plan.get("gpu_count") or 0
    accounted = (entry.get("scheduler_accounts") or {}).get(HAMI_MEMORY_RESOURCE)
    if isinstance(accounted, int) and not isinstance(accounted, bool) and accounted > 0 and count > 0:
        return accounted // count
    product = find_product(str(node_plan.get("gpu_product") or ""))
    if product is None or not product.memory_mib:
        return None
    return int(product.memory_mib * float(entry.get("memory_scaling", 1) or 1))


def gpushare_gpu_gib(node_plan):
    """GiB of one GPU as gpushare's scheduler extender counts it: the node's aliyun.com/gpu-mem over its GPU count
    (gpushare-scheduler-extender pkg/cache/nodeinfo.go, NewNodeInfo), or 0 when the plan gives neither."""
    resources = node_plan.get("resources") or {}
    count = resources.get(GPUSHARE_COUNT_RESOURCE) or node_plan.get("gpu_count") or 0
    return int(resources.get(GPUSHARE_MEMORY_RESOURCE, 0)) // count if count else 0


def _memory_shared(node_plan, entry, resource):
    product = str(node_plan.get("gpu_product") or "")
    advertised = int((node_plan.get("resources") or {}).get(resource, 0))
    if entry["backend"] == HAMI:
        split = max(int(entry.get("split", 1) or 1), 1)
        gpu_mib = hami_gpu_mib(node_plan)
        # HAMi counts each GPU as `split` devices; one of `split` pods gets an even share of its memory.
        size = gpu_mib // split if gpu_mib else 0
        return DeviceExpectation(
            resource=resource,
            kind=KIND_GPU,
            mig_profile=None,
            product=product,
            replicas=split,
            sharing=f"HAMi, {HAMI_MEMORY_RESOURCE} {size} MiB per pod",
            advertised=advertised,
            backend=HAMI,
            slice_resource=HAMI_MEMORY_RESOURCE,
            slice_size=size,
        )
    # gpushare: one GPU's worth of GiB; the sharing check picks how many pods split it (checks.sharing_groups).
    gib = gpushare_gpu_gib(node_plan)
    return DeviceExpectation(
        resource=resource,
        kind=KIND_GPU,
        mig_profile=None,
        product=product,
        replicas=gib,
        sharing=f"gpushare, {GPUSHARE_MEMORY_RESOURCE} 1 GiB per pod",
        advertised=gib,
        backend=GPUSHARE,
        slice_resource=GPUSHARE_MEMORY_RESOURCE,
        slice_size=1,
    )


def expectation(node_plan, resource):
    """The DeviceExpectation of RESOURCE on the node NODE_PLAN (a capacity.json node entry)."""
    entry = memory_sharing(node_plan)
    if entry is not None:
        return _memory_shared(node_plan, entry, resource)
    labels = node_plan.get("labels") or {}
    base = base_resource(resource)
    kind, profile = KIND_GPU, None
    if base.startswith(MIG_RESOURCE_PREFIX):
        kind, profile = KIND_MIG, base[len(MIG_RESOURCE_PREFIX) :]
    elif base == FULL_GPU_RESOURCE and labels.get(MIG_STRATEGY_LABEL) == "single":
        # Strategy single advertises MIG devices as nvidia.com/gpu; the product label names their profile.
        single = _SINGLE_PRODUCT.search(str(labels.get(f"{base}.product", "")))
        if single:
            kind, profile = KIND_MIG, single["profile"]
    replicas = _replicas(labels, base)
    sharing = labels.get(f"{base}.sharing-strategy", "none") if replicas > 1 else "none"
    return DeviceExpectation(
        resource=resource,
        kind=kind,
        mig_profile=profile,
        product=str(node_plan.get("gpu_product") or ""),
        replicas=replicas,
        sharing=sharing,
        advertised=int((node_plan.get("resources") or {}).get(resource, 0)),
    )


def products_match(planned, seen):
    """Whether SEEN (as nvidia-smi prints it) is the PLANNED product, by the catalog's name matching."""
    planned_product, seen_product = find_product(planned), find_product(seen)
    if planned_product is not None and seen_product is not None:
        return planned_product is seen_product
    # A product outside the catalog: compare the normalized names (prefix "NVIDIA ", dashes vs spaces).
    return normalize_product_name(planned) == normalize_product_name(seen)
