# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helm values of the GPU Operator release: the plan's values, the role's own, a registry mirror, the user's.

Later layers win; dicts merge key by key, anything else (lists included) is replaced whole, as Helm
merges a values file over the chart's values.
"""

from __future__ import annotations

import copy
import difflib
import json

import yaml
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import InputError

# Every image repository of the gpu-operator chart v26.7.0 (values.yaml) and of its bundled
# node-feature-discovery subchart, by values path. A mirror keeps the path after the registry host:
# nvcr.io/nvidia/cloud-native becomes REGISTRY/nvidia/cloud-native. vgpuManager has no default
# repository (NVIDIA ships no public vGPU image) and is left to gpu_operator_values.
IMAGE_REPOSITORIES = {
    ("validator",): "nvcr.io/nvidia",
    ("operator",): "nvcr.io/nvidia",
    ("driver",): "nvcr.io/nvidia",
    ("driver", "manager"): "nvcr.io/nvidia/cloud-native",
    ("toolkit",): "nvcr.io/nvidia/k8s",
    ("devicePlugin",): "nvcr.io/nvidia",
    ("dcgm",): "nvcr.io/nvidia/cloud-native",
    ("dcgmExporter",): "nvcr.io/nvidia/k8s",
    ("gfd",): "nvcr.io/nvidia",
    ("migManager",): "nvcr.io/nvidia/cloud-native",
    ("nodeStatusExporter",): "nvcr.io/nvidia",
    ("gds",): "nvcr.io/nvidia/cloud-native",
    ("gdrcopy",): "nvcr.io/nvidia/cloud-native",
    ("vgpuManager", "driverManager"): "nvcr.io/nvidia/cloud-native",
    ("vgpuDeviceManager",): "nvcr.io/nvidia/cloud-native",
    ("vfioManager",): "nvcr.io/nvidia/cloud-native",
    ("vfioManager", "driverManager"): "nvcr.io/nvidia/cloud-native",
    ("sandboxDevicePlugin",): "nvcr.io/nvidia",
    ("kataSandboxDevicePlugin",): "nvcr.io/nvidia/cloud-native",
    ("ccManager",): "nvcr.io/nvidia/cloud-native",
    ("draDriver",): "nvcr.io/nvidia",
    ("node-feature-discovery", "image"): "registry.k8s.io/nfd/node-feature-discovery",
}

# The role applies the chart's CRDs itself (before Helm, on install and upgrade), so the chart's
# pre-upgrade hook Job that would do it with the operator image is not rendered.
ROLE_VALUES = {"operator": {"upgradeCRD": False}}


def merge_values(base, override):
    """BASE with OVERRIDE merged over it (recursive for dicts); neither argument is changed."""
    merged = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def registry_problem(registry):
    """Why REGISTRY cannot prefix image repositories, or None ('' means no mirror)."""
    if not registry:
        return None
    if "://" in registry:
        return (
            f"must be a registry host with an optional path, without a scheme, got {registry!r} "
            "(e.g. registry.example.com:5000/mirror)"
        )
    if registry.endswith("/") or any(ch.isspace() for ch in registry):
        return f"must not end with '/' or contain spaces, got {registry!r} (e.g. registry.example.com:5000/mirror)"
    return None


def registry_override(registry):
    """Values that point every image repository of the chart at REGISTRY, keeping each image's path."""
    values = {}
    if not registry:
        return values
    for path, default in IMAGE_REPOSITORIES.items():
        node = values
        for key in path:
            node = node.setdefault(key, {})
        node["repository"] = registry + "/" + default.split("/", 1)[1]
    return values


def release_values(plan_values, image_registry="", user_values=None):
    """The values the release is installed with: plan, then the role's own, then the registry, then the user's."""
    problem = registry_problem(image_registry)
    if problem:
        raise InputError(f"gpu_operator_image_registry: {problem}")
    values = merge_values(plan_values or {}, ROLE_VALUES)
    values = merge_values(values, registry_override(image_registry))
    return merge_values(values, user_values or {})


def _yaml(values):
    # The same text for equal values whatever their key order (json round-trip drops Ansible's tagged types).
    return yaml.safe_dump(json.loads(json.dumps(values or {}, default=str)), sort_keys=True, default_flow_style=False)


def values_diff(current, desired, header="gpu-operator values"):
    """Unified diff of the release's current values and DESIRED values; '' when they are equal."""
    before, after = _yaml(current), _yaml(desired)
    if before == after:
        return ""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{header} (installed)",
        tofile=f"{header} (this run)",
    )
    return "".join(lines)


def _named_configmap(section, enabled=True):
    # A values section whose config names a ConfigMap the chart does not create (config.create false).
    section = section if isinstance(section, dict) else {}
    config = section.get("config") if isinstance(section.get("config"), dict) else {}
    if not enabled or not config.get("name") or config.get("create"):
        return None
    return config["name"]


def referenced_configmaps(documents, values):
    """The plan's ConfigMaps (of DOCUMENTS) that VALUES make the operator's pods mount."""
    names = {
        _named_configmap(values.get("devicePlugin")),
        _named_configmap(values.get("migManager"), enabled=(values.get("migManager") or {}).get("enabled", True)),
    } - {None}
    found = []
    for key in ("device_plugin_configmap", "mig_parted_configmap"):
        document = (documents or {}).get(key)
        if isinstance(document, dict) and (document.get("metadata") or {}).get("name") in names:
            found.append(document)
    return found
