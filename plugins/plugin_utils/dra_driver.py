# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the dra_driver role sends to the cluster, computed from the plan (capacity.json, dra.json) and the cluster's
objects.

The role installs NVIDIA's DRA driver with its own chart (kubernetes-sigs/dra-driver-nvidia-gpu,
deployments/helm/dra-driver-nvidia-gpu): the GPU Operator's GPUCluster would deploy it too, but v26.7.0's chart
refuses a GPUCluster beside the ClusterPolicy (templates/validations.yaml), so it cannot serve a cluster whose other
nodes keep the device plugin. Pure functions over plain data, so the role's tasks only send what these return.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_DEPLOY_LABEL,
    DRA_ALLOCATION,
    GPU_ALLOCATION_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.dra_slices import published_devices
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import node_labels
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import merge_values

# The labels the role sets on a DRA node (the plan's capacity.json writes the same), and removes from a node that
# carried GPU_ALLOCATION_LABEL=dra and that the plan no longer makes one.
DRA_LABELS = tuple(sorted(node_labels()))


def release_values(dra, user_values=None):
    """The chart's values for the plan's DRA nodes (dra.json content DRA), USER_VALUES merged last.

    - nvidiaDriverRoot /: the nvidia_driver role installs the driver on the host, not in a container;
    - resources.gpus.enabled with gpuResourcesEnabledOverride: the chart refuses GPUs without the override, since its
      kubelet plugin must not share a node with the device plugin (templates/validation.yaml); the collection keeps
      them apart with the node labels below;
    - resources.computeDomains.enabled false: ComputeDomains are multi-node NVLink (GB200), which no GPU model of
      the collection has, and they need the chart's webhook and cert-manager;
    - featureGates: the plan's (gpuops_dra_feature_gates, checked against the driver's gates);
    - kubeletPlugin.nodeSelector: the DRA nodes only, by the label the role sets.
    """
    values = {
        "nvidiaDriverRoot": "/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "featureGates": dict((dra or {}).get("feature_gates") or {}),
        "kubeletPlugin": {"nodeSelector": {GPU_ALLOCATION_LABEL: DRA_ALLOCATION}},
    }
    return merge_values(values, user_values or {})


def release_state(dra, requested):
    """{"state": present or absent, "stuck": line or None}: auto is present while the plan has DRA nodes; absent
    while it has some is stuck (their GPUs would be offered by nothing)."""
    hosts = sorted((dra or {}).get("nodes") or {})
    if requested == "absent" and hosts:
        return {
            "state": "absent",
            "stuck": f"dra_driver_state is absent but the plan offers the GPUs of {', '.join(hosts)} through DRA",
        }
    present = requested == "present" or (requested == "auto" and hosts)
    return {"state": "present" if present else "absent", "stuck": None}


def _labels(node):
    return (node.get("metadata") or {}).get("labels") or {}


def node_changes(capacity, nodes, node_names=None):
    """{"missing": ["host (node NAME)"], "patches": [{"name", "labels"}]}.

    A DRA node of the plan gets the DRA labels; a node that carries GPU_ALLOCATION_LABEL=dra and that the plan no
    longer makes a DRA node loses them (null in a merge patch), except the device plugin's switch where the plan still
    turns it off (a memory-shared node). A patch only where something differs, so a second run sends nothing.
    """
    node_names = node_names or {}
    present = {node["metadata"]["name"]: node for node in nodes or ()}
    missing, patches = [], []
    planned_by_node = {}
    for host, planned in sorted((capacity.get("nodes") or {}).items()):
        name = node_names.get(host) or host
        planned_by_node[name] = planned
        if planned.get("gpu_allocation") == DRA_ALLOCATION and name not in present:
            missing.append(host if name == host else f"{host} (node {name})")
    for name in sorted(present):
        labels, planned = _labels(present[name]), planned_by_node.get(name) or {}
        plan_labels = planned.get("labels") or {}
        if planned.get("gpu_allocation") == DRA_ALLOCATION:
            patch = {key: plan_labels.get(key, value) for key, value in node_labels().items()}
            patch = {key: value for key, value in patch.items() if labels.get(key) != value}
        elif labels.get(GPU_ALLOCATION_LABEL) == DRA_ALLOCATION:
            kept = dict(plan_labels)
            if planned.get("memory_sharing"):
                kept.setdefault(DEVICE_PLUGIN_DEPLOY_LABEL, "false")
            patch = {key: None for key in DRA_LABELS if key in labels and key not in kept}
        else:
            patch = {}
        if patch:
            patches.append({"name": name, "labels": dict(sorted(patch.items()))})
    return {"missing": missing, "patches": patches}


def unpublished(dra, slices, node_names=None):
    """Lines naming each DRA node of the plan whose driver has not published as many devices as the plan predicts
    (SLICES: ResourceSlice objects as the API returns them); [] once every node has. The validation's dra check
    compares the devices themselves."""
    node_names = node_names or {}
    driver = (dra or {}).get("driver")
    lines = []
    for host, entry in sorted(((dra or {}).get("nodes") or {}).items()):
        name = node_names.get(host) or host
        published = len(published_devices(slices, driver, name))
        planned = len(entry.get("devices") or ())
        if published != planned:
            lines.append(f"{name}: {published} of {planned} devices published by {driver}")
    return lines
