# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the NVIDIA device plugin advertises and GPU Feature Discovery labels on one node.

The rules follow NVIDIA/k8s-device-plugin v0.20: internal/rm/device_map.go (resources per MIG
strategy, the configurations the plugin refuses, time-slicing replicas) and internal/lm
(resource.go, mig-strategy.go: the GFD labels).
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import gfd_product_label
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    FULL_GPU_RESOURCE,
    MIG_NAME_PREFIX,
    MIG_STRATEGY_LABEL,
    RESOURCE_PREFIX,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import (
    describe_mig_devices,
    mig_device_profile,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import label_value_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin import (
    MIG_STRATEGIES,
    sharing_in_use,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import CapacityError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.mps import MPS
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.shared_resources import (
    advertised_resource,
    replicas_for,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import TIME_SLICING

# api/config/v1/sharing.go SharingStrategy of an unshared resource, which GFD writes as <resource>.sharing-strategy;
# each way of sharing has its own (DevicePluginSharing.gfd_sharing_strategy).
SHARING_NONE = "none"
# GFD's label for a node whose device-plugin config shares with MPS (the operator runs its MPS daemon there).
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"


@dataclass(frozen=True)
class GpuLayout:
    """MIG state of one physical GPU: MIG mode and the MIG devices created on it."""

    mig_enabled: bool
    mig_devices: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, mig_enabled, mig_devices=None):
        devices = tuple(sorted((name, int(count)) for name, count in (mig_devices or {}).items() if int(count) > 0))
        return cls(bool(mig_enabled), devices if mig_enabled else ())

    def describe(self):
        if not self.mig_enabled:
            return "MIG off"
        if not self.mig_devices:
            return "MIG on, no devices"
        return describe_mig_devices(self.mig_devices)


def _mig_device_name(profile):
    # The device plugin names MIG resources "mig-<name>"; GFD appends the same <name> to products.
    return profile.resource_name.removeprefix(MIG_NAME_PREFIX)


def _profiles_on_node(product, layouts):
    """{MigDeviceProfile: count} over every MIG-enabled GPU of the node.

    A compute-instance profile ("1c.3g.40gb": one 1-slice CI in a 3g.40gb GI, as mig-parted creates it) is
    a MIG device of its own name: go-nvlib MigProfileInfo.String gives "1c.3g.40gb", which the device
    plugin matches as resource mig-1c.3g.40gb (internal/rm/device_map.go buildMigDeviceMap).
    """
    counts = {}
    for layout in layouts:
        for name, count in layout.mig_devices:
            profile = mig_device_profile(product, name)
            if profile is None:
                raise CapacityError(f"MIG profile {excerpt(name)} does not exist on {product.name}")
            counts[profile] = counts.get(profile, 0) + count
    return counts


def empty_mig_gpus(layouts):
    """Indexes of the GPUs with MIG enabled but no MIG device (config all-enabled)."""
    return [index for index, layout in enumerate(layouts) if layout.mig_enabled and not layout.mig_devices]


def _check_plugin_accepts(layouts, strategy, profiles):
    """Raise what the device plugin would refuse at start (device_map.go)."""
    if strategy != "single":
        # device_map.go assertAllMigDevicesAreValid: under mixed a MIG-enabled GPU without MIG devices
        # only logs "device N has no MIG devices configured" and advertises nothing; none ignores MIG.
        return
    empty = empty_mig_gpus(layouts)
    if empty:
        raise CapacityError(
            f"GPU {', '.join(map(str, empty))} would have MIG enabled but no MIG device: the device plugin refuses "
            f"to start with mig strategy {strategy}; give those GPUs MIG devices, disable MIG on them "
            "or use strategy mixed (which advertises nothing for them)"
        )
    enabled = [layout.mig_enabled for layout in layouts]
    if any(enabled) and not all(enabled):
        raise CapacityError(
            "mig strategy single needs every GPU of a node in the same MIG mode, but this layout enables MIG on "
            f"{enabled.count(True)} of {len(enabled)} GPUs; use one MIG config for all GPUs or strategy mixed"
        )
    if len(profiles) > 1:
        names = ", ".join(sorted(_mig_device_name(p) for p in profiles))
        raise CapacityError(
            f"mig strategy single allows one MIG profile per node, but this layout creates {names}; "
            "use a config with a single profile (for example all-1g.<size>) or strategy mixed"
        )


def physical_resources(product, layouts, strategy):
    """{resource: devices} the device plugin finds before any time-slicing."""
    if strategy not in MIG_STRATEGIES:
        raise CapacityError(f"unknown MIG strategy {excerpt(strategy)}; valid: {', '.join(MIG_STRATEGIES)}")
    profiles = _profiles_on_node(product, layouts)
    _check_plugin_accepts(layouts, strategy, profiles)
    resources = {}
    # With strategy none the plugin ignores MIG mode and advertises every GPU whole.
    full_gpus = len(layouts) if strategy == "none" else sum(1 for layout in layouts if not layout.mig_enabled)
    if full_gpus:
        resources[FULL_GPU_RESOURCE] = full_gpus
    if strategy == "single":
        for count in profiles.values():
            resources[FULL_GPU_RESOURCE] = resources.get(FULL_GPU_RESOURCE, 0) + count
    elif strategy == "mixed":
        for profile, count in profiles.items():
            resources[RESOURCE_PREFIX + profile.resource_name] = count
    return dict(sorted(resources.items()))


def _arch_family(compute_capability):
    # getArchFamily in internal/lm/resource.go (v0.20: 10 and 12 blackwell, 13 rubin).
    major, _dot, minor = compute_capability.partition(".")
    major, minor = int(major), int(minor or 0)
    families = {
        1: "tesla",
        2: "fermi",
        3: "kepler",
        5: "maxwell",
        6: "pascal",
        9: "hopper",
        10: "blackwell",
        12: "blackwell",
        13: "rubin",
    }
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    return families.get(major, "undefined")


def _resource_labels(resource, product_parts, count, memory_mib, time_slicing, sharing_applies, kind):
    """baseLabeler (product, count, replicas, sharing-strategy) and memory of resourceLabeler for one resource.

    MEMORY_MIB None: the value is not known here, so no memory label is predicted.
    """
    # GFD labels MIG-enabled full GPUs "without sharing": replicas 0, never -SHARED.
    replicas = replicas_for(resource, time_slicing) if sharing_applies else 0
    renamed = advertised_resource(resource, time_slicing) != resource
    product = gfd_product_label(" ".join(product_parts))
    if replicas > 1 and not renamed:
        product += "-SHARED"
    labels = {
        f"{resource}.product": product,
        f"{resource}.count": str(count),
        f"{resource}.replicas": str(replicas),
        f"{resource}.sharing-strategy": kind if replicas > 1 else SHARING_NONE,
    }
    if memory_mib:
        labels[f"{resource}.memory"] = str(memory_mib)
    return labels


def gfd_labels(product, layouts, strategy, time_slicing, kind=TIME_SLICING.gfd_sharing_strategy):
    """The GFD labels that follow from the intent alone (no driver, CUDA or machine labels).

    TIME_SLICING: the node's sharing settings (gpuops_time_slicing, or a normalized gpuops_mps with KIND mps).
    """
    major, _dot, minor = (product.compute_capability or "").partition(".")
    any_full_gpu = any(not layout.mig_enabled for layout in layouts)
    # A GPU with MIG enabled is labelled without sharing; a MIG-disabled GPU of the same name wins.
    labels = _resource_labels(
        FULL_GPU_RESOURCE, [product.name], len(layouts), product.memory_mib, time_slicing, any_full_gpu, kind
    )
    if kind == MPS.gfd_sharing_strategy and time_slicing:
        labels[MPS_CAPABLE_LABEL] = "true"
    labels["nvidia.com/mig.capable"] = "true" if product.mig else "false"
    if product.compute_capability:
        # An unknown product (not in the catalog, not described by the inventory): not predicted.
        labels.update(
            {
                "nvidia.com/gpu.family": _arch_family(product.compute_capability),
                "nvidia.com/gpu.compute.major": major,
                "nvidia.com/gpu.compute.minor": minor or "0",
            }
        )
    if strategy == "none":
        return _published(labels)
    labels[MIG_STRATEGY_LABEL] = strategy
    profiles = _profiles_on_node(product, layouts)
    for profile, count in profiles.items():
        resource = FULL_GPU_RESOURCE if strategy == "single" else RESOURCE_PREFIX + profile.resource_name
        parts = [product.name, "MIG", _mig_device_name(profile)]
        if profile.memory_mib is None:
            # With strategy single the MIG device's memory replaces the full GPU's; unknown: predict none.
            labels.pop(f"{resource}.memory", None)
        labels.update(_resource_labels(resource, parts, count, profile.memory_mib, time_slicing, True, kind))
        labels[f"{resource}.slices.gi"] = str(profile.compute_slices)
        labels[f"{resource}.slices.ci"] = str(profile.ci_slices)
    return _published(labels)


def _published(labels):
    """LABELS sorted, without those whose value the API server refuses: GFD writes them as they come (a product
    name of 64 characters or with "(", k8s-device-plugin issues #514, #1876), and node-feature-discovery drops
    each such label from the node."""
    return {name: value for name, value in sorted(labels.items()) if label_value_problem(value) is None}


def node_capacity(product, layouts, strategy, time_slicing=None, mps=None):
    """{"resources": {RESOURCE: COUNT}, "labels": {LABEL: VALUE}} for one node.

    product: a _gpu.catalog.Product; layouts: one GpuLayout per physical GPU; strategy: the
    cluster's MIG strategy; time_slicing: the node's gpuops_time_slicing (None: no sharing); mps: the node's
    gpuops_mps after mps.normalize_mps (replicas of nvidia.com/gpu, rename_by_default), which
    multiplies and renames as time-slicing does (README, With CUDA MPS) but labels sharing-strategy mps.
    Raises CapacityError for a layout the device plugin refuses.
    """
    by_variable = {TIME_SLICING.variable: time_slicing, MPS.variable: mps}
    sharing = sharing_in_use(by_variable)
    settings = by_variable[sharing.variable]
    resources = {}
    for resource, devices in physical_resources(product, layouts, strategy).items():
        name = advertised_resource(resource, settings)
        resources[name] = resources.get(name, 0) + devices * replicas_for(resource, settings)
    return {
        "resources": dict(sorted(resources.items())),
        "labels": gfd_labels(product, layouts, strategy, settings, sharing.gfd_sharing_strategy),
    }
