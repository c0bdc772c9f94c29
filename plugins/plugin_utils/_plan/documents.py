# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documents of the cluster plan: device-plugin ConfigMap, GPU Operator values, the table for people.

The mig-parted document comes from _gpu.mig_configs, where built-in and user configs are merged.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import SETTING_RULES, setting_problem

DEFAULT_DEVICE_PLUGIN_CONFIG = "default"
# migManager.config.default for the operator's mig-manager: empty, because the operator labels nodes
# without nvidia.com/mig.config only when the default is all-disabled (gpu-operator
# controllers/state_manager.go), which would turn MIG off on hosts the inventory leaves alone.
OPERATOR_MIG_CONFIG_DEFAULT = ""
# The GPU Operator's mig-manager reads the mig-parted document from this key of its ConfigMap.
MIG_CONFIGMAP_KEY = "config.yaml"


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def device_plugin_config_key(doc):
    """ConfigMap key of a device-plugin config, named by its content: `time-slicing-<hash>` or `mps-<hash>`.

    The device plugin reloads only when the node label changes (cmd/config-manager follows the label, not
    the ConfigMap data), so a changed config must get a new key and the label a new value.
    """
    sharing = doc.get("sharing")
    if not sharing:
        return DEFAULT_DEVICE_PLUGIN_CONFIG
    kind = "mps" if "mps" in sharing else "time-slicing"
    return f"{kind}-" + hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:8]


def settings_problems(settings):
    """{setting: message} for each namespace or ConfigMap name the API server would refuse."""
    problems = {name: setting_problem(name, settings.get(name)) for name in SETTING_RULES}
    return {name: problem for name, problem in problems.items() if problem}


def configmap(name, namespace, data):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpuops.cluster"},
        },
        "data": data,
    }


def gpu_operator_values(settings, mig_strategy, operator_manages_mig, cdi=True):
    """Helm values for a host-installed driver and container toolkit.

    CDI: gpuops_cdi, the chart's cdi.enabled (containerd injects the devices the device plugin names).

    OPERATOR_MANAGES_MIG: gpuops_mig_manager is operator and a node is MIG-capable; otherwise the
    operator's mig-manager stays off, so it neither fights the collection's mig role nor disables MIG.
    """
    return {
        "operator": {"defaultRuntime": "containerd"},
        "driver": {"enabled": False},
        # The host role installs the toolkit, so the operator deploys no toolkit container, and toolkit.env
        # (CONTAINERD_SOCKET, CONTAINERD_CONFIG) would configure nothing: only toolkit.enabled is set.
        "toolkit": {"enabled": False},
        # Written out although it is the chart's default (v25.10.0 on), so that a chart upgrade cannot change it.
        "cdi": {"enabled": cdi},
        "mig": {"strategy": mig_strategy},
        "devicePlugin": {
            "config": {
                "create": False,
                "name": settings["device_plugin_configmap"],
                "default": DEFAULT_DEVICE_PLUGIN_CONFIG,
            }
        },
        "migManager": (
            {
                "enabled": True,
                "config": {"create": False, "name": settings["mig_configmap"], "default": OPERATOR_MIG_CONFIG_DEFAULT},
            }
            if operator_manages_mig
            else {"enabled": False}
        ),
    }


def describe_layout(mig_config, product, layouts, unselected=()):
    """UNSELECTED: indexes of the GPUs no entry of the config selects (left as they are, planned as MIG off)."""
    if product.mig is None:
        return "no MIG"
    if mig_config is None:
        return "not managed (planned as MIG off)"
    groups = {}
    for index, layout in enumerate(layouts):
        text = "not selected, left as is (planned as MIG off)" if index in unselected else layout.describe()
        groups[text] = groups.get(text, 0) + 1
    return mig_config + ": " + "; ".join(f"{count}x[{text}]" for text, count in groups.items())


def _resources_text(resources):
    if isinstance(resources, str):  # what a node offers otherwise: "DRA: 4 devices"
        return resources
    return ", ".join(f"{name}={count}" for name, count in resources.items()) or "nothing"


def render_table(rows, totals, mig_strategy):
    """Plain-text table: one line per node (HOST, PRODUCT, GPUS, MIG LAYOUT, MEMORY SHARING, ADVERTISED) and the
    totals. MEMORY SHARING: the backend that replaces NVIDIA's device plugin ("hami x10", "gpushare") or "-".
    ADVERTISED: {resource: count}, or a text for a node that advertises no extended resource (a DRA node)."""
    header = ("HOST", "PRODUCT", "GPUS", "MIG LAYOUT", "MEMORY SHARING", "ADVERTISED")
    lines = [
        (host, product, str(count), layout, sharing, _resources_text(resources))
        for host, product, count, layout, sharing, resources in rows
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header) - 1)]

    def fmt(line):
        return "  ".join(line[column].ljust(width) for column, width in enumerate(widths)) + "  " + line[-1]

    out = [f"GPU cluster plan: {len(rows)} GPU nodes, MIG strategy {mig_strategy}", fmt(header)]
    out += [fmt(line) for line in lines]
    out.append(f"TOTAL: {_resources_text(totals)}")
    return "\n".join(out) + "\n"
