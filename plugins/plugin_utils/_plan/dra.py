# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The devices NVIDIA's DRA driver for GPUs publishes for a node, predicted from its product and MIG layout.

The driver (kubernetes-sigs/dra-driver-nvidia-gpu, formerly NVIDIA/k8s-dra-driver-gpu; v0.5.0 is the version the
GPU Operator v26.7.0 deploys) publishes one ResourceSlice pool per node, named after the node, under the driver name
gpu.nvidia.com. The rules below follow its kubelet plugin as read at kubernetes-sigs/dra-driver-nvidia-gpu
cmd/gpu-kubelet-plugin (docs/dra.md names the commits):

- deviceinfo.go: a GPU without MIG is the device "gpu-<minor>", with the attributes type "gpu", productName (NVML's
  name), architecture (go-nvlib's name), cudaComputeCapability (a version, "8.0" published as 8.0.0), and the
  capacity memory (NVML's total, in bytes).
- mig.go, migppCanonicalName: a MIG device is "gpu-<parent minor>-mig-<profile>-<GI profile id>-<placement start>",
  the profile's dots removed and the rest made RFC 1123 compliant (toRFC1123Compliant: lower case, every character
  outside [a-z0-9-.] a '-', leading and trailing '-' trimmed), so 1g.10gb+me at start 3 of GPU 0 is
  gpu-0-mig-1g10gb-me-20-3. Its attributes: type "mig", profile, and the parent's productName, architecture and
  cudaComputeCapability; its capacity memory is the GPU-instance profile's size in MiB, in bytes.
- nvlib.go: a GPU with MIG enabled publishes only its MIG devices, and none when it has no MIG device; the MIG
  profiles it knows are those whose compute instance fills the GPU instance (getGpuInfo), and a MIG device of any
  other profile fails its discovery (getMigDevices).

What only the node knows (uuid, driverVersion, cudaDriverVersion, brand, the PCI bus id, the multiprocessor and
engine counts of a MIG device) is not predicted. Names carry the GPU's minor number (/dev/nvidia<minor>), which is
not its index: recorded `nvidia-smi -q` outputs show minors 3 to 6 for GPUs 0 to 3 (an A100-SXM4-80GB host) and
8 for GPU 0 (an L4 host). The plan writes each name with "{minor}" in its place and the GPU's index beside it;
device_names() fills them in from the minors read on the node.

MIG device names also carry the placement: the mig role creates each GPU instance at the start plan_layout
chooses (module_utils/_gpu/mig_layout.py); mig-parted, which the GPU Operator's mig-manager runs, lets the driver
choose, so there only the profiles and counts are predicted.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_DEPLOY_LABEL,
    DRA_ALLOCATION,
    GFD_DEPLOY_LABEL,
    GPU_ALLOCATION_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import MINOR_PLACEHOLDER as MINOR
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import plan_layout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan import dra_gates

DRIVER_NAME = "gpu.nvidia.com"
DRIVER_VERSION = "v0.5.0"
# go-nvlib pkg/nvlib/device/device.go GetArchitectureAsString, from the catalog's architecture names.
ARCHITECTURES = {
    "volta": "Volta",
    "turing": "Turing",
    "ampere": "Ampere",
    "ada-lovelace": "Ada Lovelace",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
}
_MIB = 1 << 20
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
# Kubernetes limits a device name to a DNS label (k8s.io/api resource/v1 Device.Name).
_DEVICE_NAME_MAX = 63


class DraPlanError(ValueError):
    """A layout whose devices the driver would not publish as the plan describes them."""


def rfc1123(name):
    """toRFC1123Compliant of the driver's mig.go."""
    name = re.sub(r"[^a-z0-9.-]", "-", name.lower()).strip("-")
    name = name.removesuffix(".")
    return name[:253]


def gpu_device_name(minor=MINOR):
    return f"gpu-{minor}"


def mig_device_name(profile_name, profile_id, start, parent_minor=MINOR):
    return f"gpu-{parent_minor}-mig-{rfc1123(profile_name.replace('.', ''))}-{profile_id}-{start}"


def device_names(devices, minors):
    """The devices' names with each GPU's minor number (MINORS, by GPU index) in place of "{minor}"."""
    indexes = sorted({device["gpu"] for device in devices})
    if indexes and indexes[-1] >= len(minors):
        raise DraPlanError(f"the devices name GPUs {indexes}, but minor numbers are given for {len(minors)} GPUs")
    return [device["name"].replace(MINOR, str(int(minors[device["gpu"]]))) for device in devices]


def binary_quantity(count):
    """A count of bytes as Kubernetes writes a BinarySI quantity: the largest power of 1024 that divides it."""
    exponent = 0
    while count and count % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
        count //= 1024
        exponent += 1
    return f"{count}{_BINARY_SUFFIXES[exponent]}"


def _version(compute_capability):
    # semver.MustParse of "<major>.<minor>": the patch is 0.
    return f"{compute_capability}.0"


def _common_attributes(product):
    attributes = {"productName": product.name}
    if product.architecture in ARCHITECTURES:
        attributes["architecture"] = ARCHITECTURES[product.architecture]
    if product.compute_capability:
        attributes["cudaComputeCapability"] = {"version": _version(product.compute_capability)}
    return attributes


def _gpu_device(product, index):
    device = {
        "name": gpu_device_name(),
        "gpu": index,
        "attributes": {"type": {"string": "gpu"}, **_typed(_common_attributes(product))},
        "capacity": {},
        # NVML's total is in bytes; nvidia-smi prints it in whole MiB, which the catalog records: the published
        # quantity is at least this and less than 1 MiB more.
        "memory_exact": False,
    }
    if product.memory_mib:
        device["capacity"]["memory"] = {"value": binary_quantity(product.memory_mib * _MIB)}
    return device


def _mig_devices(product, index, mig_devices):
    devices = []
    for instance in plan_layout(product, dict(mig_devices)):
        profile = instance.profile
        if len(instance.devices) != 1 or instance.devices[0].is_compute_instance_profile:
            raise DraPlanError(
                f"GPU {index}: {' + '.join(d.name for d in instance.devices)} in one {profile.name} GPU instance: the "
                "DRA driver knows only MIG devices that fill their GPU instance (its nvlib.go keeps the MIG profiles "
                "with as many compute as GPU slices) and fails to start on a GPU with others; use GPU-instance "
                f"profiles (e.g. {profile.name}) on a node that offers its GPUs through DRA"
            )
        device = {
            "name": mig_device_name(profile.name, profile.profile_id, instance.start),
            "gpu": index,
            "attributes": {
                "type": {"string": "mig"},
                "profile": {"string": profile.name},
                **_typed(_common_attributes(product)),
            },
            "capacity": {},
            # The GPU-instance profile's size is whole MiB (NVML MemorySizeMB): published as exactly that.
            "memory_exact": True,
            "placement": {"start": instance.start, "size": instance.size},
        }
        if profile.memory_mib:
            device["capacity"]["memory"] = {"value": binary_quantity(profile.memory_mib * _MIB)}
        devices.append(device)
    return devices


def _typed(attributes):
    """Attributes as a ResourceSlice holds them: {"string": ...} unless already typed ({"version": ...})."""
    return {key: value if isinstance(value, dict) else {"string": value} for key, value in attributes.items()}


def predict_node_devices(product, layouts):
    """The devices the driver publishes for a node whose GPUs are LAYOUTS (plan GpuLayout, index order).

    Returns a list of devices: name ("{minor}" standing for the GPU's minor number), attributes and capacity as a
    ResourceSlice holds them (resource.k8s.io/v1 Device), and what the plan knows beside: gpu (the parent's index),
    memory_exact (False where the published memory may exceed the prediction by less than 1 MiB) and, for MIG
    devices, placement (start and size in memory slices).
    Raises DraPlanError for a layout the driver would publish differently from the plan.
    """
    devices = []
    for index, layout in enumerate(layouts):
        if not layout.mig_enabled:
            devices.append(_gpu_device(product, index))
        elif layout.mig_devices:
            devices.extend(_mig_devices(product, index, layout.mig_devices))
    # A minor number has at most 3 digits (/dev/nvidia0 to /dev/nvidia255).
    for name in device_names(devices, [255] * len(layouts)):
        if len(name) > _DEVICE_NAME_MAX:
            raise DraPlanError(f"device name {name} is longer than {_DEVICE_NAME_MAX} characters")
    return devices


def node_labels():
    """The labels of a DRA node: the driver's kubelet plugin runs there, the GPU Operator's device plugin and GFD
    do not. The device plugin cannot share a node with the driver (its chart's validation.yaml); GFD's labels follow
    the cluster-wide MIG strategy, which DRA nodes are free of, and the driver publishes what they say as device
    attributes."""
    return {GPU_ALLOCATION_LABEL: DRA_ALLOCATION, DEVICE_PLUGIN_DEPLOY_LABEL: "false", GFD_DEPLOY_LABEL: "false"}


def cluster_document(node_devices, products, feature_gates, kubernetes_gates):
    """What the plan writes as dra.json: the driver, its chart's feature gates, the Kubernetes gates they need per
    component, and per DRA node (NODE_DEVICES: {host: devices}, PRODUCTS: {host: product name}) the pool and the
    devices the driver is expected to publish."""
    return {
        "driver": DRIVER_NAME,
        "driver_version": DRIVER_VERSION,
        "feature_gates": dra_gates.chart_gates(feature_gates),
        "kubernetes_feature_gates": kubernetes_gates,
        "nodes": {
            host: {"pool": host, "product": products[host], "devices": devices}
            for host, devices in sorted(node_devices.items())
        },
    }
