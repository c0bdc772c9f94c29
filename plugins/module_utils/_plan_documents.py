"""Documents of the cluster plan: mig-parted config, device-plugin ConfigMap, GPU Operator values, table."""

from __future__ import annotations

import hashlib
import json

from ansible_collections.gpuops.cluster.plugins.module_utils._mig_layout import (
    builtin_mig_configs,
    merged_mig_parted_document,
)

RKE2_CONTAINERD_SOCKET = "/run/k3s/containerd/containerd.sock"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEFAULT_DEVICE_PLUGIN_CONFIG = "default"
DEFAULT_MIG_CONFIG = "all-disabled"
# migManager.config.default for the operator's mig-manager: empty, because the operator labels nodes
# without nvidia.com/mig.config only when the default is all-disabled (gpu-operator
# controllers/state_manager.go), which would turn MIG off on hosts the inventory leaves alone.
OPERATOR_MIG_CONFIG_DEFAULT = ""
# The GPU Operator's mig-manager reads the mig-parted document from this key of its ConfigMap.
MIG_CONFIGMAP_KEY = "config.yaml"


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def builtin_configs_for(products):
    """Built-in MIG configs of every product in use, one document for all of them.

    A config name whose entries differ between products (all-balanced, all-1g.10gb on a 40GB and an
    80GB A100) gets one entry per product, each limited to it by device-filter, as mig-parted's own
    default config does.
    """
    if not products:
        return {DEFAULT_MIG_CONFIG: [{"devices": "all", "mig-enabled": False}]}
    by_name = {}
    for product in sorted(products, key=lambda p: p.name):
        for name, entries in builtin_mig_configs(product).items():
            by_name.setdefault(name, []).append((product, entries))
    configs = {}
    for name, variants in sorted(by_name.items()):
        if len(variants) == len(products) and len({canonical_json(e) for _product, e in variants}) == 1:
            configs[name] = variants[0][1]
            continue
        configs[name] = [
            {**entry, "device-filter": list(product.pci_device_ids)}
            for product, entries in variants
            for entry in entries
        ]
    return configs


def mig_parted_document(products, user_configs):
    """The mig-parted v1 document: built-ins for PRODUCTS, the user's configs overriding by name."""
    return merged_mig_parted_document(builtin_configs_for(products), {"version": "v1", "mig-configs": user_configs})


def device_plugin_config_key(doc):
    """Stable ConfigMap key of a device-plugin config: the label value stays put while the doc does."""
    if "sharing" not in doc:
        return DEFAULT_DEVICE_PLUGIN_CONFIG
    return "time-slicing-" + hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:8]


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


def gpu_operator_values(settings, mig_strategy, operator_manages_mig):
    """Helm values for a host-installed driver and container toolkit.

    OPERATOR_MANAGES_MIG: gpuops_mig_manager is operator and a node is MIG-capable; otherwise the
    operator's mig-manager stays off, so it neither fights the collection's mig role nor disables MIG.
    """
    toolkit = {"enabled": False}
    if settings["rke2"]:
        # RKE2's containerd; CONTAINERD_CONFIG is left alone (it broke clusters after reboots).
        toolkit["env"] = [{"name": "CONTAINERD_SOCKET", "value": RKE2_CONTAINERD_SOCKET}]
    return {
        "operator": {"defaultRuntime": "containerd"},
        "driver": {"enabled": False},
        "toolkit": toolkit,
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


def describe_layout(mig_config, product, layouts):
    if product.mig is None:
        return "no MIG"
    if mig_config is None:
        return "not managed (planned as MIG off)"
    groups = {}
    for layout in layouts:
        text = layout.describe()
        groups[text] = groups.get(text, 0) + 1
    return mig_config + ": " + "; ".join(f"{count}x[{text}]" for text, count in groups.items())


def _resources_text(resources):
    return ", ".join(f"{name}={count}" for name, count in resources.items()) or "nothing"


def render_table(rows, totals, mig_strategy):
    """Plain-text table: one line per node (HOST, PRODUCT, GPUS, MIG LAYOUT, ADVERTISED) and the totals."""
    header = ("HOST", "PRODUCT", "GPUS", "MIG LAYOUT", "ADVERTISED")
    lines = [
        (host, product, str(count), layout, _resources_text(resources))
        for host, product, count, layout, resources in rows
    ]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header) - 1)]

    def fmt(line):
        return "  ".join(line[column].ljust(width) for column, width in enumerate(widths)) + "  " + line[-1]

    out = [f"GPU cluster plan: {len(rows)} GPU nodes, MIG strategy {mig_strategy}", fmt(header)]
    out += [fmt(line) for line in lines]
    out.append(f"TOTAL: {_resources_text(totals)}")
    return "\n".join(out) + "\n"
