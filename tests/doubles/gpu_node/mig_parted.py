# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mig-parted's `apply` on the GPUs of one node: a named config of the mig-parted v1 document
(version, mig-configs: NAME: [{devices, device-filter, mig-enabled, mig-devices}]) gives each GPU
its MIG mode and MIG devices. What mig-parted refuses raises MigConfigError with its reason."""

from dataclasses import dataclass

from .hardware import Node


class MigConfigError(Exception):
    pass


@dataclass(frozen=True)
class Gpu:
    index: int
    mig_enabled: bool = False
    mig_devices: tuple = ()  # profile names, one entry per MIG device


def initial(node: Node) -> list[Gpu]:
    return [Gpu(index) for index in range(node.count)]


def _selected(entry: dict, node: Node) -> list[int]:
    devices = entry.get("devices", "all")
    device_filter = entry.get("device-filter")
    if device_filter:
        wanted = [device_filter] if isinstance(device_filter, str) else device_filter
        if node.pci_device_id not in {str(item).lower() for item in wanted}:
            return []  # mig-parted skips entries for other GPU models
    if devices == "all":
        return list(range(node.count))
    if not isinstance(devices, list) or not all(isinstance(index, int) for index in devices):
        raise MigConfigError(f"invalid devices value {devices!r}: 'all' or a list of GPU indices")
    beyond = [index for index in devices if not 0 <= index < node.count]
    if beyond:
        raise MigConfigError(f"GPU indices {beyond} do not exist (the node has {node.count} GPUs)")
    return devices


def apply(document: dict, name: str, node: Node, gpus: list[Gpu]) -> list[Gpu]:
    configs = (document or {}).get("mig-configs") or {}
    if name not in configs:
        raise MigConfigError(f"config {name!r} not found in the mig-parted config (has: {', '.join(sorted(configs))})")
    result = list(gpus)
    for entry in configs[name] or []:
        selected = _selected(entry, node)
        if not selected:
            continue
        enabled = bool(entry.get("mig-enabled", False))
        if enabled and not node.mig_capable:
            raise MigConfigError(f"{node.product} is not MIG capable")
        wanted = entry.get("mig-devices") or {}
        devices = []
        for profile, count in wanted.items():
            if profile not in node.profiles:
                raise MigConfigError(f"MIG profile {profile} is not supported on {node.product}")
            if int(count) > node.profiles[profile].instances:
                raise MigConfigError(f"{count}x {profile} do not fit on one {node.product}")
            devices += [profile] * int(count)
        used = sum(node.profiles[profile].slices for profile in devices)
        if used > node.mig_slices:
            raise MigConfigError(
                f"{', '.join(f'{c}x {p}' for p, c in wanted.items())} need {used} slices, "
                f"one {node.product} has {node.mig_slices}"
            )
        for index in selected:
            result[index] = Gpu(index, enabled, tuple(devices) if enabled else ())
    return result
