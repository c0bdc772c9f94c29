# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the ResourceSlices NVIDIA's DRA driver publishes for a node are what the plan predicts (dra.json).

The plan writes each device name with "{minor}" where the GPU's minor number goes, because only the node knows
it; published names carry it (gpu-<minor>, gpu-<minor>-mig-...). So devices are compared GPU by GPU: the published
ones grouped by the minor in their names, the planned ones by GPU index, each group's names with the minor taken
out. Every planned GPU must match a published GPU of its own: the same names, each predicted attribute equal (the
driver publishes more: uuid, driverVersion, PCI attributes), and the memory capacity equal, or for a whole GPU
(memory_exact false) at most 1 MiB more, since the catalog records NVML's bytes in whole MiB. Which minor holds
which index is not checked.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import MINOR_PLACEHOLDER as MINOR

_MIB = 1 << 20
_NAME = re.compile(r"gpu-(\d+)((?:-mig-.+)?)")
# Kubernetes quantity suffixes (k8s.io/apimachinery pkg/api/resource/suffix.go); whole numbers only, as the driver
# publishes memory.
_SUFFIXES = {
    "": 1,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
    "Ei": 1 << 60,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
_QUANTITY = re.compile(r"(\d+)(" + "|".join(suffix for suffix in _SUFFIXES if suffix) + r")?")


def quantity_bytes(value):
    """A whole-number Kubernetes quantity ("80Gi", "23034Mi", "85899345920") as an int, None for anything else."""
    match = _QUANTITY.fullmatch(str(value))
    if match is None:
        return None
    return int(match.group(1)) * _SUFFIXES[match.group(2) or ""]


def published_devices(slices, driver, pool):
    """The devices of POOL (a node's name) by DRIVER, from SLICES (ResourceSlice objects as the API returns them),
    of the pool's newest generation: a driver that republishes leaves older slices until it deletes them."""
    mine = [
        item
        for item in slices or ()
        if (item.get("spec") or {}).get("driver") == driver
        and ((item.get("spec") or {}).get("pool") or {}).get("name") == pool
    ]
    if not mine:
        return []
    newest = max(int(item["spec"]["pool"].get("generation") or 0) for item in mine)
    return [
        device
        for item in mine
        if int(item["spec"]["pool"].get("generation") or 0) == newest
        for device in item["spec"].get("devices") or ()
    ]


def _published_groups(devices):
    """({minor: {name without the minor: device}}, [names that are no GPU's])."""
    groups, strays = {}, []
    for device in devices:
        match = _NAME.fullmatch(str(device.get("name")))
        if match is None:
            strays.append(str(device.get("name")))
            continue
        groups.setdefault(int(match.group(1)), {})[f"gpu-{MINOR}{match.group(2)}"] = device
    return groups, strays


def _planned_groups(devices):
    """{GPU index: {name: planned device}}."""
    groups = {}
    for device in devices:
        groups.setdefault(device["gpu"], {})[device["name"]] = device
    return groups


def _memory_problem(planned, published):
    wanted = ((planned.get("capacity") or {}).get("memory") or {}).get("value")
    if wanted is None:
        return None
    found = ((published.get("capacity") or {}).get("memory") or {}).get("value")
    wanted_bytes, found_bytes = quantity_bytes(wanted), quantity_bytes(found)
    if found_bytes is not None and wanted_bytes is not None:
        slack = 0 if planned.get("memory_exact", True) else _MIB - 1
        if wanted_bytes <= found_bytes <= wanted_bytes + slack:
            return None
    return f"memory {found if found is not None else 'not published'}, planned {wanted}"


def device_problems(planned, published):
    """What differs between a planned device and the published device of the same name ([]: they match)."""
    problems = []
    attributes = published.get("attributes") or {}
    for key, value in sorted((planned.get("attributes") or {}).items()):
        if attributes.get(key) != value:
            problems.append(f"{key} {_typed(attributes.get(key))}, planned {_typed(value)}")
    memory = _memory_problem(planned, published)
    if memory:
        problems.append(memory)
    return problems


def _typed(value):
    """An attribute's value as people read it: {"string": "gpu"} is 'gpu', {"version": "8.0.0"} is 8.0.0."""
    if not isinstance(value, dict) or len(value) != 1:
        return "not published" if value is None else repr(value)
    ((kind, inner),) = value.items()
    return repr(inner) if kind == "string" else str(inner)


def _gpu_problems(planned, published):
    """Why the published group of one GPU is not the planned one ([]: it is)."""
    if set(planned) != set(published):
        return [f"devices {', '.join(sorted(published)) or 'none'}, planned {', '.join(sorted(planned)) or 'none'}"]
    return [
        f"{name}: {problem}" for name in sorted(planned) for problem in device_problems(planned[name], published[name])
    ]


def _with_minor(text, minor):
    return text.replace(MINOR, str(minor))


def _pair(planned_groups, published_groups):
    """([indexes of the planned GPUs no published GPU matches], {minor: group} left unmatched, {index: minor by rank}).

    Interchangeable GPUs are paired in order first (GPU i with the i-th smallest minor, as the kernel numbers the
    GPUs NVML indexes), so that a difference is reported on the GPU a person would look at."""
    ranked = dict(zip(sorted(planned_groups), sorted(published_groups)))
    unmatched, pairs = dict(published_groups), {}
    for index, planned in sorted(planned_groups.items()):
        minor = ranked.get(index)
        if minor in unmatched and not _gpu_problems(planned, unmatched[minor]):
            pairs[index] = minor
            del unmatched[minor]
    for index, planned in sorted(planned_groups.items()):
        if index in pairs:
            continue
        minor = next((m for m, group in sorted(unmatched.items()) if not _gpu_problems(planned, group)), None)
        if minor is not None:
            pairs[index] = minor
            del unmatched[minor]
    return [index for index in sorted(planned_groups) if index not in pairs], unmatched, ranked


def node_differences(node, planned_devices, published):
    """Lines saying how the devices PUBLISHED for NODE differ from PLANNED_DEVICES (the node's devices in dra.json),
    each starting with the node's name; [] when every planned GPU is published as planned and nothing else is."""
    planned_groups = _planned_groups(planned_devices)
    published_groups, strays = _published_groups(published)
    missing, unmatched, ranked = _pair(planned_groups, published_groups)
    lines = []
    for index in missing:
        planned = planned_groups[index]
        # The nearest published GPU: one with the same device names (its own rank first), whose attributes then say
        # what differs; else the one left at its rank.
        same_names = [m for m in sorted(unmatched) if set(unmatched[m]) == set(planned)]
        minor = ranked.get(index) if ranked.get(index) in same_names else next(iter(same_names), None)
        if minor is None and ranked.get(index) in unmatched:
            minor = ranked[index]
        if minor is None:
            lines.append(f"{node}: GPU {index} is not published; planned {', '.join(sorted(planned))}")
            continue
        problems = _gpu_problems(planned, unmatched.pop(minor))
        lines.extend(f"{node}: GPU {index} (minor {minor}): {_with_minor(problem, minor)}" for problem in problems)
    for minor, group in sorted(unmatched.items()):
        lines.append(f"{node}: minor {minor} publishes {_with_minor(', '.join(sorted(group)), minor)}, not planned")
    if strays:
        lines.append(f"{node}: publishes {', '.join(sorted(strays))}, no GPU or MIG device name the driver gives")
    return lines
