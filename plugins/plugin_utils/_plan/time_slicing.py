# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time-slicing (gpuops_time_slicing): its keys, its lint, its normalized form and its section of the device plugin's
config, sharing.timeSlicing.

The rules follow NVIDIA/k8s-device-plugin v0.20 (api/config/v1/replicas.go, internal/rm/device_map.go).
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import (
    MAX_GPUS_PER_NODE,
    MAX_MIG_DEVICES_PER_GPU,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import INT64_MAX
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin_sharing import (
    DevicePluginSharing,
    key_problems,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.shared_resources import (
    replicas_for,
    replicas_problem,
    resource_name_problem,
    with_whole_replicas,
)

VARIABLE = "gpuops_time_slicing"
KEYS = ("replicas", "resources", "rename_by_default", "fail_requests_greater_than_one")
# replicas.go reads replicas as a Go int and sets no maximum; internal/rm/device_map.go
# updateDeviceMapWithReplicas lists each replica as a device, which the kubelet advertises as an int64
# (bounds.INT64_MAX). A node has at most 32 GPUs of at most 8 MIG devices each (_gpu/limits.py), so with this
# many replicas no node's advertised quantity leaves the int64.
MAX_REPLICAS = INT64_MAX // (MAX_GPUS_PER_NODE * MAX_MIG_DEVICES_PER_GPU)
LIMIT = (MAX_REPLICAS, "so that no node advertises more devices than the int64 the kubelet counts")
# Device-plugin spellings a user may write under gpuops_time_slicing, and what to write instead.
NATIVE_KEY_ADVICE = {
    "renameByDefault": "use 'rename_by_default'",
    "failRequestsGreaterThanOne": "use 'fail_requests_greater_than_one'",
    "sharing": "write 'replicas' and 'resources' directly under gpuops_time_slicing; the collection writes sharing",
    "timeSlicing": "write 'replicas' and 'resources' directly under gpuops_time_slicing; "
    "the collection writes sharing.timeSlicing",
    "mps": "gpuops_time_slicing configures time-slicing only; set gpuops_mps for MPS (not both on one node)",
    "flags": "the MIG strategy comes from gpuops_mig_strategy; other plugin flags are not set here",
    "migStrategy": "set gpuops_mig_strategy (none | single | mixed) instead",
    "version": "leave it out; the collection writes version: v1",
    "name": "per-resource replicas go in 'resources', a mapping such as {\"nvidia.com/gpu\": 4}",
    "rename": "the plugin ignores per-resource renames; use 'rename_by_default'",
    "devices": "the plugin ignores device selection and always shares every device of a resource",
}
# What the plugin advertises: the full GPU, or a MIG device named after its profile
# ("mig-1g.10gb", "mig-1c.3g.20gb"); further dot-separated parts are let through. Matched with fullmatch, as the
# Go code anchors its patterns: re.match with "$" would let a trailing newline through.
_ADVERTISABLE = re.compile(r"nvidia\.com/(gpu|mig-([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\.[a-z0-9]+)*)")
# Our keys that the plugin's sharing.timeSlicing takes under its own names.
_CONFIG_FLAGS = (
    ("rename_by_default", "renameByDefault"),
    ("fail_requests_greater_than_one", "failRequestsGreaterThanOne"),
)


def lint_time_slicing(value) -> list[str]:
    """Every problem in a gpuops_time_slicing value, each naming its key path and what is valid.

    None means no time-slicing. At least one of 'replicas' (every resource the node advertises)
    and 'resources' (per-resource replicas, overriding 'replicas') must be given.
    """
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{VARIABLE}: must be a mapping such as {{replicas: 4}}, got {type(value).__name__}; "
            f"omit {VARIABLE} for no time-slicing"
        ]
    problems = key_problems(value, VARIABLE, KEYS, NATIVE_KEY_ADVICE, "device plugin key in the wrong place")
    if "replicas" not in value and "resources" not in value:
        problems.append(f"{VARIABLE}: give 'replicas' (for every resource) and/or 'resources' (per resource)")
    if "replicas" in value:
        problem = replicas_problem(value["replicas"], LIMIT, text_allowed=True)
        if problem and whole_number(value["replicas"]) == 1:
            problem += f"; 1 replica means no time-slicing: omit {VARIABLE}"
        if problem:
            problems.append(f"{VARIABLE}.replicas: {problem}")
    for key in ("rename_by_default", "fail_requests_greater_than_one"):
        if key in value and not isinstance(value[key], bool):
            problems.append(f"{VARIABLE}.{key}: must be true or false, got {excerpt(value[key])}")
    if "resources" in value:
        problems.extend(_lint_resource_overrides(value["resources"]))
    return problems


def _lint_resource_overrides(resources) -> list[str]:
    path = f"{VARIABLE}.resources"
    if not isinstance(resources, dict) or not resources:
        return [
            f"{path}: must be a non-empty mapping of resource name to replicas, "
            'e.g. {"nvidia.com/mig-1g.10gb": 3}; the collection writes the plugin\'s list form itself'
        ]
    problems = []
    for name, replicas in resources.items():
        where = f'{path}["{excerpt(name, bare=True)}"]'
        problem = resource_name_problem(name)
        if problem is None and not _ADVERTISABLE.fullmatch(name):
            problem = "not a resource the device plugin advertises: nvidia.com/gpu or nvidia.com/mig-<profile>"
        if problem:
            problems.append(f"{where}: {problem}")
        problem = replicas_problem(replicas, LIMIT, text_allowed=True)
        if problem:
            problems.append(f"{where}: {problem}; to leave a resource unshared, list only the shared ones")
    return problems


def normalize_time_slicing(value):
    """A valid gpuops_time_slicing with its replicas as ints (inventories and -e may give "4")."""
    return with_whole_replicas(value)


def lint_time_slicing_for_node(time_slicing, resources) -> list[str]:
    """Per-resource overrides that match nothing the node advertises (RESOURCES: plugin names)."""
    if not isinstance(time_slicing, dict) or not isinstance(time_slicing.get("resources"), dict):
        return []
    advertised = sorted(set(resources))
    return [
        f'{VARIABLE}.resources["{excerpt(name, bare=True)}"]: this node does not advertise it; it advertises: '
        f"{', '.join(advertised) or 'nothing'}"
        for name in time_slicing["resources"]
        if name not in advertised
    ]


def time_slicing_section(time_slicing, resources) -> dict | None:
    """sharing.timeSlicing for a node whose plugin finds RESOURCES, from a normalized gpuops_time_slicing (None:
    nothing to share)."""
    shared = [
        {"name": name, "replicas": replicas_for(name, time_slicing)}
        for name in sorted(set(resources))
        if replicas_for(name, time_slicing) > 1
    ]
    # replicas.go refuses an empty resources list, so a node with nothing to share gets no sharing.
    if not shared:
        return None
    section = {theirs: time_slicing[ours] for ours, theirs in _CONFIG_FLAGS if ours in time_slicing}
    section["resources"] = shared
    return section


class TimeSlicing(DevicePluginSharing):
    """Time-slicing: every device of a resource is advertised as several replicas that take turns on it."""

    variable = VARIABLE
    gfd_sharing_strategy = "time-slicing"
    config_key = "timeSlicing"

    def lint(self, value, product) -> list[str]:
        return lint_time_slicing(value)

    def normalize(self, value):
        return normalize_time_slicing(value)

    def lint_for_node(self, value, node) -> list[str]:
        # Unknown resources: the plugin refuses the node's MIG layout, and the plan says that instead.
        if node.resources is None:
            return []
        return lint_time_slicing_for_node(value, node.resources)

    def config_section(self, value, resources) -> dict | None:
        return time_slicing_section(value, resources)

    def replicas_limit(self, compute_capability) -> tuple[int, str]:
        return LIMIT


TIME_SLICING = TimeSlicing()
