# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_memory_sharing role sends to the cluster, computed from the plan and the Node objects.

Pure functions over plain data (the plan's capacity, Node objects as the API returns them, manifests as
parsed YAML), so the role's tasks only send what these return and the unit tests check every object
without a cluster.
"""

from __future__ import annotations

import copy
import json

from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import hami, registry
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import (
    DEVICE_PLUGIN_DEPLOY_LABEL as DEPLOY_DEVICE_PLUGIN_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import merge_values

# Which backend the role labelled a node for: only labels the role set are ever removed.
MARKER_ANNOTATION = "gpuops.cluster/memory-sharing"
# The role's variable that says what to do with a backend: auto, present or absent.
STATE_VARIABLE = "gpu_memory_sharing_{}_state"


def _labels(node):
    return (node.get("metadata") or {}).get("labels") or {}


def _annotations(node):
    return (node.get("metadata") or {}).get("annotations") or {}


def _by_name(nodes):
    return {node["metadata"]["name"]: node for node in nodes or ()}


def _node_name(host, node_names):
    return (node_names or {}).get(host) or host


def shared_nodes(capacity, node_names=None, backend=None):
    """{host: {"node": Kubernetes node name, **memory_sharing}} of the plan's memory-shared nodes, sorted,
    optionally only those of BACKEND."""
    found = {}
    for host, planned in sorted((capacity.get("nodes") or {}).items()):
        sharing = planned.get("memory_sharing")
        if not sharing or (backend and sharing.get("backend") != backend):
            continue
        found[host] = {"node": _node_name(host, node_names), **sharing}
    return found


def backends_in_use(capacity):
    """The backends some node of the plan uses, sorted."""
    return sorted({entry["backend"] for entry in shared_nodes(capacity).values()})


def backend_states(capacity, requested=None):
    """What the role does with each backend, in the registry's order, and the backends it cannot remove.

    REQUESTED: the role's gpu_memory_sharing_<backend>_state variables by name (a backend without one is auto).
    Returns {"backends": [{"name", "state", "needs_helm"}], "stuck": [line]}: a backend is present when its
    variable says present, or auto and a node of the plan uses it, else absent; a backend set absent that nodes
    of the plan still use is a stuck line naming them.
    """
    users = {}
    for host, planned in (capacity.get("nodes") or {}).items():
        if planned.get("memory_sharing"):
            users.setdefault(planned["memory_sharing"].get("backend"), []).append(host)
    found, stuck = [], []
    for backend in registry.backends():
        variable = STATE_VARIABLE.format(backend.name)
        wanted, hosts = (requested or {}).get(variable, "auto"), users.get(backend.name)
        state = "present" if wanted == "present" or (wanted == "auto" and hosts) else "absent"
        found.append({"name": backend.name, "state": state, "needs_helm": backend.needs_helm})
        if wanted == "absent" and hosts:
            stuck.append(f"{variable} is absent but the plan shares {', '.join(hosts)} with {backend.title}")
    return {"backends": found, "stuck": stuck}


def wanted_labels(planned):
    """The labels the role sets on a memory-shared node: the backend's labels and the GPU Operator's
    device-plugin switch, as the plan writes them (the backend's defaults where the plan has none)."""
    sharing = planned.get("memory_sharing") or {}
    backend = registry.get(sharing.get("backend"))
    if backend is None:
        return {}
    plan_labels = planned.get("labels") or {}
    wanted = {key: str(plan_labels.get(key, value)) for key, value in backend.node_labels.items()}
    wanted[DEPLOY_DEVICE_PLUGIN_LABEL] = str(plan_labels.get(DEPLOY_DEVICE_PLUGIN_LABEL, "false"))
    return wanted


def node_changes(capacity, nodes, node_names=None):
    """{"missing": ["host (node NAME)"], "patches": [{"name", "labels", "annotations"}]}.

    A memory-shared node gets its backend's labels and the marker annotation; a node the role labelled
    before (it carries the marker) and that the plan no longer shares that way loses the labels of that
    backend and the device-plugin switch (null in a merge patch), unless the plan still wants them.
    Nodes the role never labelled keep their labels. A patch is returned only where something differs,
    so a second run sends nothing.
    """
    present = _by_name(nodes)
    planned_by_node = {
        _node_name(host, node_names): (host, planned) for host, planned in (capacity.get("nodes") or {}).items()
    }
    missing, patches = [], []
    for host, entry in shared_nodes(capacity, node_names).items():
        if entry["node"] not in present:
            missing.append(host if entry["node"] == host else f"{host} (node {entry['node']})")
    for name in sorted(present):
        labels, annotations = _labels(present[name]), _annotations(present[name])
        planned = planned_by_node.get(name, (None, {}))[1]
        wanted = wanted_labels(planned)
        backend = (planned.get("memory_sharing") or {}).get("backend")
        previous = annotations.get(MARKER_ANNOTATION)
        label_patch = {key: value for key, value in wanted.items() if labels.get(key) != value}
        if registry.get(previous) is not None:
            # A label the plan still gives the node stays: a node moved to DRA keeps the device plugin off.
            kept = {**(planned.get("labels") or {}), **wanted}
            for key in (*registry.get(previous).node_labels, DEPLOY_DEVICE_PLUGIN_LABEL):
                if key not in kept and key in labels:
                    label_patch[key] = None
        annotation_patch = {}
        if registry.get(backend) is not None and previous != backend:
            annotation_patch[MARKER_ANNOTATION] = backend
        elif registry.get(backend) is None and MARKER_ANNOTATION in annotations:
            annotation_patch[MARKER_ANNOTATION] = None
        if label_patch or annotation_patch:
            patches.append(
                {
                    "name": name,
                    "labels": dict(sorted(label_patch.items())),
                    "annotations": annotation_patch,
                }
            )
    return {"missing": missing, "patches": patches}


def _number(value):
    # 1.0 and 1 are the same setting; HAMi's JSON reads both, and a stable form keeps a second run unchanged.
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _settings(entry):
    return {key: _number(entry.get(key, default)) for key, default in hami.DEFAULTS.items()}


def hami_node_config(capacity, node_names=None):
    """The device plugin's config.json (devicePlugin.nodeConfiguration.config): one "nodeconfig" entry per
    HAMi node, by Kubernetes node name.

    Keys as HAMi v2.10.0 reads them (pkg/device/nvidia/device.go: DevicePluginConfigs with the inline
    NodeDefaultConfig, json tags devicesplitcount, devicememoryscaling, devicecorescaling; the chart's
    example in values.yaml sets operatingmode hami-core and migstrategy none). Serialised with sorted
    keys, so the same plan gives the same string and Helm sees no change.
    """
    entries = []
    for entry in shared_nodes(capacity, node_names, hami.NAME).values():
        settings = _settings(entry)
        entries.append(
            {
                "name": entry["node"],
                "operatingmode": "hami-core",
                "devicesplitcount": settings["split"],
                "devicememoryscaling": settings["memory_scaling"],
                "devicecorescaling": settings["core_scaling"],
                "migstrategy": "none",
            }
        )
    return json.dumps({"nodeconfig": entries}, indent=2, sort_keys=True) + "\n"


def hami_values(
    capacity, node_names=None, runtime_class="nvidia", scheduler_name=hami.SCHEDULER_NAME, user_values=None
):
    """Helm values of the HAMi release: the plan's settings, then USER_VALUES merged last.

    The cluster-wide deviceSplitCount/deviceMemoryScaling/deviceCoreScaling are the HAMi nodes' settings
    when they all agree, else HAMi's defaults; every HAMi node also gets its own nodeconfig entry, which
    the device plugin applies over the cluster-wide values, so each node gets what the plan says either way.
    """
    nodes = shared_nodes(capacity, node_names, hami.NAME)
    distinct = {json.dumps(_settings(entry), sort_keys=True) for entry in nodes.values()}
    common = json.loads(distinct.pop()) if len(distinct) == 1 else dict(hami.DEFAULTS)
    values = {
        "schedulerName": scheduler_name,
        "devicePlugin": {
            "deviceSplitCount": common["split"],
            "deviceMemoryScaling": common["memory_scaling"],
            "deviceCoreScaling": common["core_scaling"],
            "nvidiaNodeSelector": dict(hami.NODE_LABELS),
            "nodeConfiguration": {"config": hami_node_config(capacity, node_names)},
        },
    }
    if runtime_class:
        # The RuntimeClass exists already (RKE2's containerd runtime "nvidia", the rke2 role's object):
        # the chart must not create it (createRuntimeClass), only name it.
        values["devicePlugin"]["runtimeClassName"] = runtime_class
        values["devicePlugin"]["createRuntimeClass"] = False
    return merge_values(values, user_values or {})


def _allocatable(node):
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    counts = {}
    for name in registry.advertised_resources():
        value = allocatable.get(name, 0)
        try:
            counts[name] = int(str(value))
        except ValueError:
            counts[name] = value
    return counts


def capacity_differences(capacity, nodes, node_names=None):
    """One line per memory-shared node and resource whose allocatable differs from the plan's `resources`
    ("gpu-l4-1: nvidia.com/gpu planned 40, advertised 4"). The other backend's resources and NVIDIA's
    nvidia.com/gpu on a gpushare node must be absent or 0. Nodes missing from the cluster are left to
    node_changes."""
    present = _by_name(nodes)
    lines = []
    for host, entry in shared_nodes(capacity, node_names).items():
        node = present.get(entry["node"])
        if node is None:
            continue
        planned = (capacity["nodes"][host].get("resources")) or {}
        advertised = _allocatable(node)
        for resource in sorted(set(registry.advertised_resources()) | set(planned)):
            want, have = planned.get(resource, 0), advertised.get(resource, 0)
            if want != have:
                name = host if entry["node"] == host else f"{host} (node {entry['node']})"
                lines.append(f"{name}: {resource} planned {want}, advertised {have}")
    return lines


def gpushare_objects(documents, extender_node_selector=None):
    """The objects of gpushare's pinned manifests, as kubernetes.core.k8s applies them.

    Empty documents are dropped. The extender Deployment's nodeSelector (node-role.kubernetes.io/master
    "" upstream, which kubeadm's control-plane nodes carried) is replaced by EXTENDER_NODE_SELECTOR when
    given: RKE2 labels its servers node-role.kubernetes.io/control-plane=true.
    """
    objects = []
    for document in documents or ():
        if not document:
            continue
        obj = copy.deepcopy(document)
        if extender_node_selector and obj.get("kind") == "Deployment":
            obj["spec"]["template"]["spec"]["nodeSelector"] = dict(extender_node_selector)
        objects.append(obj)
    return objects


def object_keys(objects):
    """References to OBJECTS ({apiVersion, kind, metadata: {name[, namespace]}}), which kubernetes.core.k8s
    deletes in one call as its definition (state absent); cluster-scoped kinds get no namespace."""
    keys = []
    for obj in objects:
        metadata = {"name": obj["metadata"]["name"]}
        if obj["kind"] not in _CLUSTER_KINDS and obj["metadata"].get("namespace"):
            metadata["namespace"] = obj["metadata"]["namespace"]
        keys.append({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": metadata})
    return keys


# Cluster-scoped kinds of gpushare's manifests (a ClusterRoleBinding there names a namespace the API ignores).
_CLUSTER_KINDS = ("ClusterRole", "ClusterRoleBinding")
