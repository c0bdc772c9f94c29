# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The device plugin's resources and GFD's labels for one node, from its GPUs and the plugin config
(k8s-device-plugin api/config/v1: flags.migStrategy, sharing.timeSlicing / sharing.mps with
renameByDefault and resources [{name, rename, replicas}]).

- internal/rm: whole GPUs are `nvidia.com/gpu`; with migStrategy mixed each MIG profile is
  `nvidia.com/mig-<profile>` (`+` becomes `.`) and MIG-enabled GPUs are not whole GPUs; with single
  either no GPU is MIG-enabled, or every GPU is, with one profile, advertised as `nvidia.com/gpu`.
  A shared resource with replicas R is advertised R times per device, under `rename`, or
  `<name>.shared` when renameByDefault is set.
- internal/lm: `<resource>.product/.count/.replicas/.sharing-strategy/.memory`, the architecture
  labels of whole GPUs, the MIG attributes of MIG resources, `nvidia.com/mig.capable`,
  `nvidia.com/mps.capable` (MPS sharing configured) and `nvidia.com/mig.strategy`. Product names
  get `-SHARED` when shared and not renamed.
"""

from collections import Counter

from .hardware import Node
from .mig_parted import Gpu

GPU = "nvidia.com/gpu"


class PluginError(Exception):
    pass


def arch_family(major: int, minor: int) -> str:
    families = {
        1: "tesla",
        2: "fermi",
        3: "kepler",
        5: "maxwell",
        6: "pascal",
        8: "ampere",
        9: "hopper",
        10: "blackwell",
        12: "blackwell",
    }
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if (major, minor) == (8, 9):
        return "ada-lovelace"
    return families.get(major, "undefined")


def _sharing(config: dict) -> tuple[str, dict]:
    sharing = config.get("sharing") or {}
    for strategy, key in (("time-slicing", "timeSlicing"), ("mps", "mps")):
        if sharing.get(key) and sharing[key].get("resources"):
            return strategy, sharing[key]
    return "none", {}


def _replication(config: dict | None, resource: str) -> dict | None:
    if config is None:
        return None
    _strategy, sharing = _sharing(config)
    for entry in sharing.get("resources") or []:
        if entry.get("name") == resource:
            # As the config's parser does: renameByDefault fills in `rename` with `<name>.shared`.
            if not entry.get("rename") and sharing.get("renameByDefault"):
                return {**entry, "rename": resource + ".shared"}
            return entry
    return None


def _mig_resource(profile: str) -> str:
    return "nvidia.com/mig-" + profile.replace("+", ".")


def devices(node: Node, gpus: list[Gpu], strategy: str) -> dict:
    """resource name -> list of (gpu index, what) before sharing, as internal/rm builds them."""
    by_resource: dict[str, list] = {}
    if strategy == "none":
        by_resource[GPU] = [(gpu.index, None) for gpu in gpus]
    elif strategy == "mixed":
        for gpu in gpus:
            if not gpu.mig_enabled:
                by_resource.setdefault(GPU, []).append((gpu.index, None))
            for profile in gpu.mig_devices:
                by_resource.setdefault(_mig_resource(profile), []).append((gpu.index, profile))
    elif strategy == "single" and not any(gpu.mig_enabled for gpu in gpus):
        by_resource[GPU] = [(gpu.index, None) for gpu in gpus]  # no MIG at all: as with none
    elif strategy == "single":
        profiles = {profile for gpu in gpus for profile in gpu.mig_devices}
        if not all(gpu.mig_enabled and gpu.mig_devices for gpu in gpus) or len(profiles) != 1:
            raise PluginError("migStrategy single needs every GPU MIG-enabled with one MIG profile")
        by_resource[GPU] = [(gpu.index, profile) for gpu in gpus for profile in gpu.mig_devices]
    else:
        raise PluginError(f"unknown migStrategy {strategy!r}")
    return {name: entries for name, entries in by_resource.items() if entries}


def advertised(node: Node, gpus: list[Gpu], config: dict, unhealthy_gpus: set[int]) -> tuple[dict, dict]:
    """(capacity, allocatable) of the node's NVIDIA resources: devices of unhealthy GPUs count in
    the capacity and not in the allocatable, as the kubelet does with devices reported unhealthy."""
    strategy = (config.get("flags") or {}).get("migStrategy", "none")
    capacity: Counter = Counter()
    allocatable: Counter = Counter()
    for resource, entries in devices(node, gpus, strategy).items():
        name, replicas = resource, 1
        replication = _replication(config, resource)
        if replication and int(replication.get("replicas", 1)) > 1:
            replicas = int(replication["replicas"])
            name = replication.get("rename") or resource
        for index, _what in entries:
            capacity[name] += replicas
            if index not in unhealthy_gpus:
                allocatable[name] += replicas
    return dict(capacity), {name: allocatable.get(name, 0) for name in capacity}


def _resource_labels(prefix: str, config: dict | None, count: int, product_parts: list[str]) -> dict:
    replication = _replication(config, prefix)
    shared = bool(replication) and int(replication.get("replicas", 1)) > 1
    renamed = shared and bool(replication.get("rename"))
    product = "-".join(part.replace(" ", "-") for part in product_parts if part)
    if shared and not renamed:
        product += "-SHARED"
    if config is None:
        replicas, sharing = 0, "none"
    else:
        replicas = int(replication["replicas"]) if shared else 1
        sharing = _sharing(config)[0] if shared else "none"
    return {
        f"{prefix}.product": product,
        f"{prefix}.count": str(count),
        f"{prefix}.replicas": str(replicas),
        f"{prefix}.sharing-strategy": sharing,
    }


def gfd_labels(node: Node, gpus: list[Gpu], config: dict) -> dict:
    strategy = (config.get("flags") or {}).get("migStrategy", "none")
    major, minor = node.compute_capability
    whole = {
        "memory": node.memory_mib,
        "family": arch_family(major, minor),
        "compute.major": major,
        "compute.minor": minor,
    }
    labels = {
        "nvidia.com/mig.capable": str(node.mig_capable).lower(),
        "nvidia.com/mps.capable": str(_sharing(config)[0] == "mps").lower(),
    }
    mig_enabled = [gpu for gpu in gpus if gpu.mig_enabled]
    full = [gpu for gpu in gpus if not gpu.mig_enabled] if strategy != "none" else gpus
    # MIG-enabled GPUs are labelled without sharing; whole GPUs (with sharing) override them.
    if mig_enabled and strategy != "none":
        labels |= _resource_labels(GPU, None, len(mig_enabled), [node.product])
        labels |= {f"{GPU}.{key}": str(value) for key, value in whole.items()}
    if full:
        labels |= _resource_labels(GPU, config, len(full), [node.product])
        labels |= {f"{GPU}.{key}": str(value) for key, value in whole.items()}
    if strategy == "none":
        return labels
    labels["nvidia.com/mig.strategy"] = strategy
    counts = Counter(profile for gpu in gpus for profile in gpu.mig_devices)
    if strategy == "single":
        if not mig_enabled:
            return labels
        if len(counts) != 1 or len(mig_enabled) != len(gpus) or not all(gpu.mig_devices for gpu in gpus):
            return labels | {
                f"{GPU}.product": f"{node.product.replace(' ', '-')}-MIG-INVALID",
                f"{GPU}.count": "0",
                f"{GPU}.replicas": "0",
                f"{GPU}.memory": "0",
            }
    for profile, count in counts.items():
        prefix = GPU if strategy == "single" else _mig_resource(profile)
        labels |= _resource_labels(prefix, config, count, [node.product, "MIG", profile])
        labels |= {f"{prefix}.{key}": str(value) for key, value in node.profiles[profile].attributes.items()}
    return labels
