# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPUs of a real-kubelet node in the nvidia-smi double's state format, and the device plugin's
devices read from it, so that the UUIDs and MIG devices a pod is given are those `nvidia-smi -L`
shows in it.

The stand-in mig-manager keeps deciding each GPU's MIG mode and MIG devices (mig_parted.apply);
this module renders that layout with the double's own functions (new_state, create_gpu_instance,
mig_uuid), so UUIDs come from one place. The same layout always renders to the same state.
"""

import sys
from pathlib import Path

from . import device_plugin
from .hardware import Node
from .mig_parted import Gpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nvidia_smi"))
import nvsmi_double
from nvsmi_double_render import mig_uuid

HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"


class StateError(Exception):
    pass


def render(node: Node, gpus: list[Gpu]) -> dict:
    """The double's state for the node's GPUs with their MIG layout applied."""
    try:
        state = nvsmi_double.new_state(node.product, node.count)
        for gpu, wanted in zip(state["gpus"], gpus, strict=True):
            gpu["mig_current"] = gpu["mig_pending"] = wanted.mig_enabled
            # Largest instances first, as they have the fewest placements.
            for profile in sorted(wanted.mig_devices, key=lambda name: -int(name.split("g.", 1)[0])):
                nvsmi_double.create_gpu_instance(gpu, profile, with_ci=True)
    except nvsmi_double.Failure as failure:
        raise StateError(f"{node.name}: the nvidia-smi double cannot hold this layout: {failure.text}") from failure
    return state


def mig_devices(state_gpu: dict) -> list[tuple[str, str]]:
    """(profile name, MIG UUID) of each MIG device of one GPU, in nvidia-smi -L order."""
    return [(name, uuid) for _gi, name, uuid in mig_instances(state_gpu)]


def mig_instances(state_gpu: dict) -> list[tuple[dict, str, str]]:
    """(GPU instance, profile name, MIG UUID) of each MIG device of one GPU, in nvidia-smi -L order."""
    return [
        (gi, ci["name"], mig_uuid(state_gpu, gi, ci))
        for gi in sorted(state_gpu["gpu_instances"], key=lambda item: item["id"])
        for ci in gi["compute_instances"]
    ]


def plugin_devices(node: Node, gpus: list[Gpu], state: dict, config: dict, unhealthy: set[int]) -> dict:
    """resource name -> [(device ID, health, physical UUID)] as k8s-device-plugin advertises them:
    a GPU's UUID, a MIG device's UUID, `<id>::<n>` for the n-th replica of a shared device (as its
    internal/rm builds replicated ids). Devices of unhealthy GPUs are sent Unhealthy."""
    strategy = (config.get("flags") or {}).get("migStrategy", "none")
    result: dict[str, list] = {}
    for resource, entries in device_plugin.devices(node, gpus, strategy).items():
        name, replicas = resource, 1
        replication = device_plugin._replication(config, resource)
        if replication and int(replication.get("replicas", 1)) > 1:
            replicas = int(replication["replicas"])
            name = replication.get("rename") or resource
        taken: dict[int, int] = {}
        for index, profile in entries:
            state_gpu = state["gpus"][index]
            if profile is None:
                uuid = state_gpu["uuid"]
            else:
                of_profile = [found for found_profile, found in mig_devices(state_gpu) if found_profile == profile]
                number = taken.get(index, 0)
                taken[index] = number + 1
                uuid = of_profile[number]
            health = UNHEALTHY if index in unhealthy else HEALTHY
            ids = [uuid] if replicas == 1 else [f"{uuid}::{replica}" for replica in range(replicas)]
            result.setdefault(name, []).extend((device_id, health, uuid) for device_id in ids)
    return result
