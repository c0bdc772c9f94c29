# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_sharing role changes in the cluster, computed from the plan and the Node objects.

Pure functions over plain data (the plan's capacity, Node objects as the API returns them), so the role's
tasks only send what these return and the unit tests check every object without a cluster.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    DRA_ALLOCATION,
    MIG_CONFIG_LABEL,
    RESOURCE_PREFIX,
)

# Written by the operator's mig-manager: pending, rebooting, success or failed.
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_DONE_STATES = ("success", "failed")
# The labels of the plan the role sets; the others are GFD's predictions, which GFD writes itself.
MANAGED_LABELS = (DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL)


def _labels(node):
    return (node.get("metadata") or {}).get("labels") or {}


def _by_name(nodes):
    return {node["metadata"]["name"]: node for node in nodes or ()}


def _planned_labels(planned):
    labels = planned.get("labels") or {}
    return {name: labels[name] for name in MANAGED_LABELS if name in labels}


def node_changes(capacity, nodes):
    """{"missing": [hosts of the plan with no Node], "patches": [{"name", "labels"}]}.

    A patch is returned only for a node whose labels differ from the plan, so a second run sends nothing.
    When a node's MIG config changes, its mig.config.state label is removed in the same patch (null in a
    merge patch): the mig-manager writes it again for the new config, so a state left from the previous
    config is never taken for the new one's.
    """
    present = _by_name(nodes)
    missing, patches = [], []
    for host, planned in sorted((capacity.get("nodes") or {}).items()):
        if host not in present:
            missing.append(host)
            continue
        current = _labels(present[host])
        wanted = _planned_labels(planned)
        changed = {name: value for name, value in wanted.items() if current.get(name) != value}
        # NVIDIA's device plugin does not serve a memory-shared or DRA node: a config label left from earlier goes.
        plugin_off = planned.get("memory_sharing") or planned.get("gpu_allocation") == DRA_ALLOCATION
        if plugin_off and DEVICE_PLUGIN_CONFIG_LABEL in current:
            changed[DEVICE_PLUGIN_CONFIG_LABEL] = None
        if MIG_CONFIG_LABEL in changed and MIG_CONFIG_STATE_LABEL in current:
            changed[MIG_CONFIG_STATE_LABEL] = None
        if changed:
            patches.append({"name": host, "labels": dict(sorted(changed.items()))})
    return {"missing": missing, "patches": patches}


def configmap_data(planned_data, existing_data, nodes, plan_hosts):
    """The device-plugin ConfigMap's data once the nodes carry the plan's labels.

    The plan's keys, plus any existing key that a node outside the plan still selects (pruning it would
    leave that node's plugin without its config). Every other existing key is stale.
    """
    plan_hosts = set(plan_hosts or ())
    used = {
        _labels(node).get(DEVICE_PLUGIN_CONFIG_LABEL)
        for node in nodes or ()
        if node["metadata"]["name"] not in plan_hosts
    }
    data = dict(planned_data or {})
    for key, value in (existing_data or {}).items():
        if key not in data and key in used:
            data[key] = value
    return dict(sorted(data.items()))


def stale_keys(existing_data, kept_data):
    """Keys of the existing ConfigMap that the kept data drops."""
    return sorted(set(existing_data or {}) - set(kept_data or {}))


def mig_states(capacity, nodes):
    """{"waiting": [...], "success": [...], "failed": [...]}: the nodes the plan gives a MIG config, by the
    mig-manager's state for the config the node is labelled with now."""
    present = _by_name(nodes)
    states = {"waiting": [], "success": [], "failed": []}
    for host, planned in sorted((capacity.get("nodes") or {}).items()):
        wanted = (planned.get("labels") or {}).get(MIG_CONFIG_LABEL)
        if wanted is None or host not in present:
            continue
        labels = _labels(present[host])
        state = labels.get(MIG_CONFIG_STATE_LABEL)
        if labels.get(MIG_CONFIG_LABEL) != wanted or state not in MIG_DONE_STATES:
            states["waiting"].append(host)
        else:
            states[state].append(host)
    return states


def _count(value):
    try:
        return int(str(value))
    except ValueError:
        # Quantities such as "1k" are not what a device plugin advertises; report them as they are.
        return value


def capacity_differences(capacity, nodes):
    """[{"node", "resource", "planned", "advertised"}] for every nvidia.com/ resource of every GPU node of the
    plan whose allocatable count differs from the plan. A resource the plan does not list must be absent or
    0 (the kubelet keeps a resource a plugin stopped advertising at 0). A node missing from the cluster is
    not listed here (node_changes reports it)."""
    present = _by_name(nodes)
    differences = []
    for host, planned in sorted((capacity.get("nodes") or {}).items()):
        if host not in present:
            continue
        if planned.get("memory_sharing"):
            continue  # HAMi's or gpushare's device plugin serves it; the gpu_memory_sharing role compares it
        allocatable = (present[host].get("status") or {}).get("allocatable") or {}
        advertised = {name: _count(value) for name, value in allocatable.items() if name.startswith(RESOURCE_PREFIX)}
        wanted = planned.get("resources") or {}
        for resource in sorted(set(wanted) | set(advertised)):
            plan_count, node_count = wanted.get(resource, 0), advertised.get(resource, 0)
            if plan_count != node_count:
                differences.append(
                    {"node": host, "resource": resource, "planned": plan_count, "advertised": node_count}
                )
    return differences


def describe_differences(differences):
    """One line per node and resource: "gpu-l4-1: nvidia.com/gpu planned 16, advertised 4"."""
    return [
        f"{item['node']}: {item['resource']} planned {item['planned']}, advertised {item['advertised']}"
        for item in differences
    ]


def mig_failure_messages(capacity, failed, logs_by_node, namespace, log_lines=5):
    """One line per node whose MIG config failed, with the last LOG_LINES non-empty lines of its mig-manager's
    log (LOGS_BY_NODE: {node: [lines], or the error text when the log could not be read}); the mig-manager
    reports the reason only there."""
    messages = []
    for host in failed:
        config = ((capacity.get("nodes") or {}).get(host) or {}).get("mig_config")
        text = f"node {host}: MIG config {config} failed (nvidia.com/mig.config.state=failed); "
        log = (logs_by_node or {}).get(host)
        if isinstance(log, str):
            # The pod exists but its log could not be read: say why.
            text += f"the log of its nvidia-mig-manager pod could not be read: {log}"
        elif host in (logs_by_node or {}):
            lines = [line for line in log or () if line.strip()]
            text += "mig-manager log: " + (" | ".join(lines[-log_lines:]) or "(empty)")
        else:
            text += f"no nvidia-mig-manager pod runs on it in namespace {namespace} to read the reason from"
        messages.append(text)
    return messages
