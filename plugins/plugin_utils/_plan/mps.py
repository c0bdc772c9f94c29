# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MPS (gpuops_mps): its keys, its replica limit by compute capability, its lint, its normalized form, what the
device plugin refuses of it on a node or a cluster, and its section of the plugin's config, sharing.mps.

The rules follow NVIDIA/k8s-device-plugin v0.20: api/config/v1/ (config.go, sharing.go),
cmd/nvidia-device-plugin/main.go (validateFlags), cmd/mps-control-daemon/mps/device.go and the README's
"With CUDA MPS".
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import FULL_GPU_RESOURCE
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin_sharing import (
    DevicePluginSharing,
    key_problems,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import hosts_text
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.shared_resources import (
    replicas_problem,
    with_whole_replicas,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import (
    VARIABLE as TIME_SLICING_VARIABLE,
)

VARIABLE = "gpuops_mps"
# failRequestsGreaterThanOne is not offered: api/config/v1/config.go forces it to true for MPS.
KEYS = ("replicas", "resources", "rename_by_default")
# cmd/mps-control-daemon/mps/device.go assertReplicas/maxClients: the plugin's MPS daemon refuses more
# replicas than 48 per device at compute capability >= 7.5 (isAtLeastVolta compares with "v7.5"), else 16.
MAX_MPS_REPLICAS = 48
MAX_MPS_REPLICAS_BEFORE_7_5 = 16
MPS_48_CLIENTS_FROM = (7, 5)
# README "With CUDA MPS": the only resource MPS shares is nvidia.com/gpu, and only on full GPUs.
MPS_RESOURCE = FULL_GPU_RESOURCE
_SERVER_CLIENTS = "the most clients an MPS server serves per device"
# k8s-device-plugin cmd/nvidia-device-plugin/main.go validateFlags: "using MPS requires CDI".
NEEDS_CDI = (
    'MPS needs CDI (NVIDIA\'s device plugin refuses MPS without it: "using MPS requires CDI"); '
    "set gpuops_cdi: true or share with gpuops_time_slicing"
)

_ALWAYS_ONE = (
    "MPS always refuses a request for more than one replica "
    "(api/config/v1/config.go sets failRequestsGreaterThanOne to true); drop it"
)
_WRITTEN_BY_COLLECTION = "write 'replicas' and 'resources' directly under gpuops_mps; the collection writes sharing.mps"
_NATIVE_KEY_ADVICE = {
    "fail_requests_greater_than_one": _ALWAYS_ONE,
    "failRequestsGreaterThanOne": _ALWAYS_ONE,
    "renameByDefault": "use 'rename_by_default'",
    "sharing": _WRITTEN_BY_COLLECTION,
    "mps": _WRITTEN_BY_COLLECTION,
    "timeSlicing": "time-slicing is gpuops_time_slicing; a node uses one of the two",
    "migStrategy": "set gpuops_mig_strategy (none | single) instead",
}


def mps_limit(compute_capability) -> int:
    """The most MPS replicas per GPU the plugin's MPS daemon accepts (48, or 16 below compute capability 7.5).

    An unknown compute capability (a product outside the catalog) gets the higher limit: the plan cannot tell.
    """
    if compute_capability is None:
        return MAX_MPS_REPLICAS
    major, _dot, minor = str(compute_capability).partition(".")
    version = (int(major), int(minor or 0))
    return MAX_MPS_REPLICAS if version >= MPS_48_CLIENTS_FROM else MAX_MPS_REPLICAS_BEFORE_7_5


def lint_mps(value, compute_capability=None) -> list[str]:
    """Every problem in a gpuops_mps value, each naming its key path and what is valid.

    COMPUTE_CAPABILITY ("8.9") of the node's GPUs sets the replica limit (mps_limit). None means no MPS.
    """
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{VARIABLE}: must be a mapping such as {{replicas: 4}}, got {type(value).__name__}; "
            f"omit {VARIABLE} for no MPS"
        ]
    limit = mps_limit(compute_capability)
    problems = key_problems(value, VARIABLE, KEYS, _NATIVE_KEY_ADVICE, "not a setting of gpuops_mps")
    if "replicas" not in value and "resources" not in value:
        problems.append(f"{VARIABLE}: give 'replicas' (MPS clients per GPU), e.g. {{replicas: 4}}")
    if "replicas" in value:
        problem = _replicas_problem(value["replicas"], limit, compute_capability)
        if problem:
            problems.append(f"{VARIABLE}.replicas: {problem}")
    if "rename_by_default" in value and not isinstance(value["rename_by_default"], bool):
        problems.append(
            f"{VARIABLE}.rename_by_default: must be true or false, got {excerpt(value['rename_by_default'])}"
        )
    if "resources" in value:
        resources = value["resources"]
        if not isinstance(resources, dict) or not resources:
            problems.append(
                f'{VARIABLE}.resources: must be a mapping such as {{"{MPS_RESOURCE}": 4}}; '
                f"MPS shares {MPS_RESOURCE} only"
            )
            return problems
        for name, replicas in resources.items():
            where = f'{VARIABLE}.resources["{excerpt(name, bare=True)}"]'
            if name != MPS_RESOURCE:
                problems.append(
                    f"{where}: MPS shares only {MPS_RESOURCE} on full GPUs (the device plugin's README, "
                    "With CUDA MPS); MIG devices can be time-sliced with gpuops_time_slicing instead"
                )
                continue
            problem = _replicas_problem(replicas, limit, compute_capability)
            if problem:
                problems.append(f"{where}: {problem}")
    return problems


def _replicas_problem(value, limit, compute_capability):
    problem = replicas_problem(value, None, text_allowed=True)
    if problem:
        if whole_number(value) == 1:
            problem += f"; 1 replica means no MPS: omit {VARIABLE}"
        return problem
    if whole_number(value) > limit:
        where = f"compute capability {compute_capability}" if compute_capability else "these GPUs"
        return (
            f"must be <= {limit}, the most MPS clients per GPU the device plugin's MPS daemon accepts on {where} "
            f"(48 from compute capability 7.5, else 16), got {excerpt(whole_number(value))}"
        )
    return None


def normalize_mps(value):
    """A valid gpuops_mps as the sharing settings replicas_for/advertised_resource read: replicas as ints,
    per-resource replicas folded in (MPS has one resource)."""
    if not isinstance(value, dict):
        return value
    normalized = with_whole_replicas(value)
    overrides = normalized.get("resources") or {}
    replicas = overrides.get(MPS_RESOURCE, normalized.get("replicas"))
    result = {"replicas": replicas}
    if "rename_by_default" in normalized:
        result["rename_by_default"] = normalized["rename_by_default"]
    return result


def lint_mps_for_node(mps, mig_strategy, mig_enabled_gpus, time_slicing) -> list[str]:
    """What the device plugin refuses for a node with gpuops_mps (MIG_ENABLED_GPUS: indexes with MIG on)."""
    if mps is None:
        return []
    problems = []
    if time_slicing is not None:
        # README "Shared Access to GPUs": time-slicing and MPS are mutually exclusive; api/config/v1/sharing.go
        # SharingStrategy picks MPS whenever it is set, so the time-slicing settings would be ignored.
        problems.append(
            f"{VARIABLE}: gpuops_mps and gpuops_time_slicing are both set; a node shares its GPUs one way "
            "(the device plugin would use MPS and ignore time-slicing); keep one of them"
        )
    if mig_strategy == "mixed":
        # cmd/nvidia-device-plugin/main.go validateFlags: "using --mig-strategy=mixed is not supported with MPS".
        problems.append(
            f"{VARIABLE}: the device plugin refuses MPS with gpuops_mig_strategy mixed (it does not start); "
            "use gpuops_mig_strategy none or single, or gpuops_time_slicing on this node"
        )
    elif mig_enabled_gpus:
        # README "With CUDA MPS": sharing with MPS is not supported on devices with MIG enabled.
        problems.append(
            f"{VARIABLE}: MPS is not supported on GPUs with MIG enabled (GPU "
            f"{', '.join(map(str, mig_enabled_gpus))} of this node); use a MIG config that disables MIG "
            "(all-disabled) or gpuops_time_slicing"
        )
    return problems


def refused_under_mixed_message(mig_hosts, need_mixed):
    """Why every gpuops_mps node is refused under gpuops_mig_strategy mixed, and what works for the whole cluster.

    MIG_HOSTS: the GPU nodes with MIG enabled; NEED_MIXED: those whose MIG layouts strategy single refuses.
    cmd/nvidia-device-plugin/main.go validateFlags refuses MPS with --mig-strategy=mixed.
    """
    refused = (
        "NVIDIA's device plugin refuses MPS with MIG strategy mixed (\"using --mig-strategy=mixed is not supported "
        'with MPS"), and gpuops_mig_strategy is one for the whole cluster'
    )
    instead = "share this node with gpuops_time_slicing (or gpuops_memory_sharing) instead of gpuops_mps"
    if not mig_hosts:
        return f"{refused}; no GPU node has MIG enabled, so set gpuops_mig_strategy none, or {instead}"
    if not need_mixed:
        return (
            f"{refused}; the MIG nodes ({hosts_text(mig_hosts)}) also work with single, which advertises their MIG "
            f"devices as nvidia.com/gpu: set gpuops_mig_strategy single, or {instead}"
        )
    return (
        f"{refused}: {hosts_text(need_mixed)} need mixed (their MIG layouts have several profiles per node or MIG "
        f"off on some GPUs, which single refuses), so none or single would break them; {instead}, or give those "
        "nodes one MIG profile on every GPU (all-1g.10gb, ...) and set gpuops_mig_strategy single"
    )


def mps_section(mps) -> dict:
    """sharing.mps from a normalized gpuops_mps: MPS shares nvidia.com/gpu only, whatever the node finds."""
    section = {}
    if "rename_by_default" in mps:
        section["renameByDefault"] = mps["rename_by_default"]
    section["resources"] = [{"name": MPS_RESOURCE, "replicas": mps["replicas"]}]
    return section


class Mps(DevicePluginSharing):
    """MPS: the replicas of a full GPU are clients of its one MPS server, each with an equal share of it."""

    variable = VARIABLE
    gfd_sharing_strategy = "mps"
    config_key = "mps"

    def lint(self, value, product) -> list[str]:
        return lint_mps(value, product.compute_capability if product else None)

    def normalize(self, value):
        return normalize_mps(value)

    def lint_for_node(self, value, node) -> list[str]:
        return lint_mps_for_node(
            value, node.mig_strategy, node.mig_enabled_gpus, node.settings.get(TIME_SLICING_VARIABLE)
        )

    def config_section(self, value, resources) -> dict | None:
        return mps_section(value)

    def replicas_limit(self, compute_capability) -> tuple[int, str]:
        return (mps_limit(compute_capability), _SERVER_CLIENTS)


MPS = Mps()
