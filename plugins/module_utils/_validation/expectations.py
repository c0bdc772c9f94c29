# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What one unit of a planned GPU resource must look like from inside a pod, read from the plan.

The plan's node entry (capacity.json) carries the resources the device plugin advertises and the labels
GPU Feature Discovery writes for them, named after the resource before renaming
(`nvidia.com/gpu.replicas` describes `nvidia.com/gpu.shared` too).

A node that shares its GPUs by memory (the entry's `memory_sharing`, HAMi or gpushare) has no NVIDIA device
plugin: its backend (module_utils/_sharing) reads its sharing from `memory_sharing` and its resources, not from
GFD's replicas labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product, normalize_product_name
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    FULL_GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    MIG_STRATEGY_LABEL,
    SHARED_SUFFIX,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import SharedUnit

# With MIG strategy single, GFD names the product "<GPU>-MIG-<profile>" (plus "-SHARED" when shared).
_SINGLE_PRODUCT = re.compile(r"-MIG-(?P<profile>.+?)(?:-SHARED)?$")

KIND_GPU = "gpu"
KIND_MIG = "mig"


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
    # DRA nodes (dra_claims.py): the DeviceClass a claim asks one device of (then RESOURCE is its name), and the uuid
    # of the published device the claim is pinned to, once the run has read the node's ResourceSlices.
    device_class: str | None = None
    uuid: str | None = None

    def describe(self):
        device = f"one MIG {self.mig_profile} device" if self.kind == KIND_MIG else "one GPU and no MIG device"
        pinned = f", {self.uuid}" if self.uuid else ""
        return f"{device} of {self.product}{pinned}"


def base_resource(resource):
    """The resource before renaming: "nvidia.com/gpu.shared" -> "nvidia.com/gpu"."""
    return resource[: -len(SHARED_SUFFIX)] if resource.endswith(SHARED_SUFFIX) else resource


def _replicas(labels, base):
    try:
        return max(int(labels.get(f"{base}.replicas", "1")), 1)
    except (TypeError, ValueError):
        return 1


def memory_sharing(node_plan):
    """The node's `memory_sharing` entry when it names a registered backend, else None."""
    entry = node_plan.get("memory_sharing")
    if isinstance(entry, dict) and registry.get(entry.get("backend")) is not None:
        return entry
    return None


def shared_unit(expect):
    """The SharedUnit of a memory-shared EXPECT."""
    return SharedUnit(expect.replicas, expect.advertised, expect.sharing, expect.slice_resource, expect.slice_size)


def with_unit(expect, unit):
    """EXPECT with the SharedUnit UNIT in place of its own."""
    return replace(
        expect,
        replicas=unit.replicas,
        advertised=unit.advertised,
        sharing=unit.sharing,
        slice_resource=unit.slice_resource,
        slice_size=unit.slice_size,
    )


def _memory_shared(node_plan, entry, resource):
    backend = registry.of(entry)
    unit = backend.validation_unit(node_plan, resource)
    return DeviceExpectation(
        resource=resource,
        kind=KIND_GPU,
        mig_profile=None,
        product=str(node_plan.get("gpu_product") or ""),
        replicas=unit.replicas,
        sharing=unit.sharing,
        advertised=unit.advertised,
        backend=backend.name,
        slice_resource=unit.slice_resource,
        slice_size=unit.slice_size,
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
