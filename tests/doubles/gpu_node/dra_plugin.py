# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ResourceSlice NVIDIA's DRA driver publishes for a node's GPUs, from what NVML reports there.

Follows kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin at 0545e9e55d (deviceinfo.go, mig.go,
nvlib.go; docs/dra.md of the collection lists the rules) and its chart's kubelet-plugin DaemonSet
(deployments/helm/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml, values.yaml). Independent of the
collection's plan code: the GPUs come from the node's hardware description and the nvidia-smi double's state.

Played: one pool named after the node in one ResourceSlice, a generation that grows with every change; whole GPUs
as gpu-<minor>, MIG devices as gpu-<parent minor>-mig-<profile>-<GI profile id>-<placement start>, with the
attributes and capacities the driver gives them (uuid, product, architecture, compute capability, driver and
CUDA versions; memory, multiprocessors, engines, memory slices). Not played: PCI and NUMA attributes, brand,
addressing mode, health, DynamicMIG, passthrough, consumable shares.
"""

import re

DRIVER = "gpu.nvidia.com"
# The chart's selector label of the kubelet plugin's pods, and the container that serves GPUs.
COMPONENT_LABEL = "dra-driver-nvidia-gpu-component"
GPUS_CONTAINER = "gpus"
_BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_MIB = 1 << 20
# go-nvlib's architecture names, by compute capability major (and minor where one major has two).
_ARCHITECTURES = {(7, 0): "Volta", (7, 2): "Volta", (7, 5): "Turing", (8, 9): "Ada Lovelace"}
_BY_MAJOR = {8: "Ampere", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}
# hardware.py's lgip attribute -> the capacity name mig.go gives it.
_MIG_CAPACITIES = {
    "multiprocessors": "multiprocessors",
    "engines.copy": "copyEngines",
    "engines.decoder": "decoders",
    "engines.encoder": "encoders",
    "engines.jpeg": "jpegEngines",
    "engines.ofa": "ofaEngines",
}


def kubelet_plugin(daemonsets: list) -> dict | None:
    """The chart's kubelet-plugin DaemonSet with its GPU container (resources.gpus.enabled), if installed."""
    for daemonset in daemonsets:
        template = daemonset["spec"]["template"]
        if (template["metadata"].get("labels") or {}).get(COMPONENT_LABEL) != "kubelet-plugin":
            continue
        if any(container.get("name") == GPUS_CONTAINER for container in template["spec"].get("containers") or []):
            return daemonset
    return None


def _expression_holds(expression: dict, labels: dict) -> bool:
    key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def runs_on(daemonset: dict, labels: dict) -> bool:
    """The DaemonSet places a pod on the node: its nodeSelector matches, and one term of its required node
    affinity (the chart's: NFD's PCI vendor labels or the GPU Operator's nvidia.com/gpu.present) holds."""
    spec = daemonset["spec"]["template"]["spec"]
    if not all(labels.get(key) == value for key, value in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(
        all(_expression_holds(expression, labels) for expression in term.get("matchExpressions") or [])
        for term in terms
    )


def quantity(count: int) -> str:
    """resource.NewQuantity(count, BinarySI).String(): the largest binary suffix that divides it."""
    exponent = 0
    while count and count % 1024 == 0 and exponent < len(_BINARY) - 1:
        count //= 1024
        exponent += 1
    return f"{count}{_BINARY[exponent]}"


def _semver(text: str) -> str:
    """Masterminds semver's form of a version: three numbers, leading zeros dropped (535.183.01 is 535.183.1)."""
    parts = [str(int(part)) for part in re.findall(r"\d+", text)[:3]]
    return ".".join(parts + ["0"] * (3 - len(parts)))


def architecture(compute_capability: tuple) -> str:
    return _ARCHITECTURES.get(tuple(compute_capability)) or _BY_MAJOR.get(compute_capability[0], "Unknown")


def _rfc1123(name: str) -> str:
    """toRFC1123Compliant of mig.go: lower case, every character outside [a-z0-9-.] a '-', '-' trimmed."""
    return re.sub(r"[^a-z0-9.-]", "-", name.lower()).strip("-")


def _common(hardware, state: dict) -> dict:
    return {
        "productName": {"string": hardware.product},
        "architecture": {"string": architecture(hardware.compute_capability)},
        "cudaComputeCapability": {"version": "{}.{}.0".format(*hardware.compute_capability)},
        "driverVersion": {"version": _semver(state["driver_version"])},
        "cudaDriverVersion": {"version": _semver(state["cuda_version"])},
    }


def _gpu(hardware, state: dict, gpu: dict) -> dict:
    attributes = {"type": {"string": "gpu"}, "uuid": {"string": gpu["uuid"]}, **_common(hardware, state)}
    return {
        "name": f"gpu-{gpu['minor']}",
        "attributes": attributes,
        "capacity": {"memory": {"value": quantity(hardware.memory_mib * _MIB)}},
    }


def _mig(hardware, state: dict, gpu: dict, gpu_instance: dict, name: str, uuid: str) -> dict:
    profile = hardware.profiles[name]
    capacity = {
        capacity: {"value": str(profile.attributes[attribute])} for attribute, capacity in _MIG_CAPACITIES.items()
    }
    capacity["memory"] = {"value": quantity(profile.memory_mib * _MIB)}
    for memory_slice in range(gpu_instance["start"], gpu_instance["start"] + gpu_instance["size"]):
        capacity[f"memorySlice{memory_slice}"] = {"value": "1"}
    profile_part = _rfc1123(name.replace(".", ""))
    device_name = f"gpu-{gpu['minor']}-mig-{profile_part}-{gpu_instance['profile_id']}-{gpu_instance['start']}"
    attributes = {
        "type": {"string": "mig"},
        "uuid": {"string": uuid},
        "parentUUID": {"string": gpu["uuid"]},
        "profile": {"string": name},
        **_common(hardware, state),
    }
    return {"name": device_name, "attributes": attributes, "capacity": capacity}


def devices(hardware, state: dict, mig_devices, lost: int = 0) -> list:
    """The devices of the node's GPUs in the nvidia-smi double's STATE; MIG_DEVICES(gpu) gives a GPU's
    (GI, profile name, MIG UUID). LOST: the last GPUs NVML no longer enumerates (fallen off the bus)."""
    published = []
    for gpu in state["gpus"][: len(state["gpus"]) - lost]:
        gpu = {**gpu, "minor": gpu.get("minor", gpu["index"])}
        if not gpu["mig_current"]:
            published.append(_gpu(hardware, state, gpu))
            continue
        # A GPU in MIG mode publishes its MIG devices only (nvlib.go), none when it has none.
        for gpu_instance, name, uuid in mig_devices(gpu):
            published.append(_mig(hardware, state, gpu, gpu_instance, name, uuid))
    return published


def resource_slice(node: str, devices_list: list, generation: int) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": devices_list,
        },
    }
