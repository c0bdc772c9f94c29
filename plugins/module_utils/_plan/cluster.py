# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The offline cluster plan: validate every GPU node's intent, then compute what each will advertise.

plan_cluster() collects EVERY problem of every host before it gives up (IntentErrors), so one run
shows the whole list. The work is done once per distinct intent: a thousand identical nodes cost
one computation and a thousand dictionary look-ups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import all_products, find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import (
    gpu_layout,
    lint_mig_parted_document,
    mig_parted_document,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import plan_layout
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.capacity import (
    GpuLayout,
    node_capacity,
    physical_resources,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.device_plugin import (
    MIG_STRATEGIES,
    build_device_plugin_config,
    lint_device_plugin_config,
    lint_time_slicing,
    lint_time_slicing_for_node,
    normalize_time_slicing,
    whole_number,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.documents import (
    DEFAULT_DEVICE_PLUGIN_CONFIG,
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
    canonical_json,
    configmap,
    describe_layout,
    device_plugin_config_key,
    gpu_operator_values,
    render_table,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.errors import (
    HOSTS_SHOWN,
    CapacityError,
    IntentError,
    IntentErrors,
)

INTENT_VARIABLES = (
    "gpuops_gpu_product",
    "gpuops_gpu_count",
    "gpuops_mig_strategy",
    "gpuops_mig_manager",
    "gpuops_mig_config",
    "gpuops_mig_configs",
    "gpuops_time_slicing",
)
DEFAULT_MIG_STRATEGY = "none"
# Who applies MIG layouts: the collection's mig role on the hosts, or the GPU Operator's mig-manager.
MIG_MANAGERS = ("host", "operator")
DEFAULT_MIG_MANAGER = "host"
DEFAULT_SETTINGS = {
    "namespace": "gpu-operator",
    "device_plugin_configmap": "gpuops-device-plugin-config",
    "mig_configmap": "gpuops-mig-parted-config",
    "rke2": True,
}
FILES = (
    "capacity.json",
    "device-plugin-configmap.yaml",
    "mig-parted-config.yaml",
    "gpu-operator-values.yaml",
    "plan.txt",
)


@dataclass
class ClusterPlan:
    capacity: dict
    device_plugin_configmap: dict
    mig_parted_config: dict
    gpu_operator_values: dict
    table: str
    notes: list = field(default_factory=list)

    def files(self, dump_yaml, dump_json):
        """{file name: text}; DUMP_YAML/DUMP_JSON turn a document into text."""
        data = self.device_plugin_configmap["data"]
        manifest = {**self.device_plugin_configmap, "data": {key: dump_yaml(doc) for key, doc in data.items()}}
        return {
            "capacity.json": dump_json(self.capacity),
            "device-plugin-configmap.yaml": dump_yaml(manifest),
            "mig-parted-config.yaml": dump_yaml(self.mig_parted_config),
            "gpu-operator-values.yaml": dump_yaml(self.gpu_operator_values),
            "plan.txt": self.table,
        }


@dataclass(frozen=True)
class _NodeResult:
    product: object
    layouts: tuple
    capacity: dict
    device_plugin_config: dict


def _split_path(message, variable):
    """Linter messages start with their key path ("gpuops_time_slicing.replicas: ..."): keep it as the variable."""
    path, sep, rest = message.partition(": ")
    if sep and path.startswith(variable):
        return path, rest
    return variable, message


def _known_products():
    return ", ".join(product.name for product in all_products())


def _check_cluster_wide(nodes, variable, valid, default, why, errors):
    """The one value of a variable every GPU node must share, or None (errors added)."""
    values = {}
    for host, intent in nodes.items():
        value = intent.get(variable, default)
        if value not in valid:
            errors.append(IntentError(host, variable, f"{value!r} is not valid; valid: {', '.join(valid)}"))
            continue
        values.setdefault(value, []).append(host)
    if len(values) > 1:
        found = "; ".join(f"{value} on {len(hosts)} hosts" for value, hosts in values.items())
        message = f"must be the same on every GPU node ({why}); found {found}; set it once in group_vars/all"
        errors.extend(IntentError(host, variable, message) for hosts in values.values() for host in hosts)
        return None
    return next(iter(values), None)


def _collect_user_configs(nodes, errors):
    """({name: entries} of the valid user configs, {invalid names}) over every host's gpuops_mig_configs.

    Each config is checked on its own, so one bad config does not hide the others; a name defined
    two ways is an error.
    """
    docs = {}
    for host, intent in nodes.items():
        if intent.get("gpuops_mig_configs") is not None:
            doc = intent["gpuops_mig_configs"]
            docs.setdefault(canonical_json(doc), (doc, []))[1].append(host)
    configs, defined_by, invalid = {}, {}, set()
    for doc, hosts in docs.values():
        problems = lint_mig_parted_document(doc)
        errors.extend(IntentError(host, "gpuops_mig_configs", problem) for problem in problems for host in hosts)
        named = doc.get("mig-configs") if isinstance(doc, dict) else None
        for name, entries in (named or {}).items() if isinstance(named, dict) else ():
            if lint_mig_parted_document({"version": "v1", "mig-configs": {name: entries}}):
                invalid.add(name)
                continue
            if name in configs and canonical_json(configs[name]) != canonical_json(entries):
                message = (
                    f"config {name} is defined differently on {defined_by[name]}; "
                    "give it one definition for the whole cluster or another name"
                )
                errors.extend(IntentError(host, "gpuops_mig_configs", message) for host in hosts)
                invalid.add(name)
                continue
            configs[name], defined_by[name] = entries, hosts[0]
    return {name: entries for name, entries in configs.items() if name not in invalid}, invalid


def _check_count(value):
    if value is None:
        return None, "is not set; give the number of GPUs per node, a whole number such as 8"
    count = whole_number(value)
    if count is None:
        return None, f'must be a whole number of GPUs per node such as 8 or "8", got {value!r}'
    if count < 1:
        return None, f"must be 1 or more GPUs per node, got {count}; remove the host from gpu_nodes if it has none"
    return count, None


def _applies(entries, product):
    try:
        gpu_layout(entries, 0, product)
    except MigLayoutError:
        return False
    return True


def _mig_unsupported(product, mig_config):
    capable = ", ".join(p.name for p in all_products() if p.mig)
    return (
        f"{product.name} does not support MIG but config {mig_config} enables it; use all-disabled "
        f"or remove gpuops_mig_config (MIG-capable: {capable})"
    )


def _mig_layouts(product, count, mig_config, mig_configs, invalid_configs):
    """(layouts, problems) of the node's GPUs under MIG_CONFIG."""
    if mig_config is None:
        return tuple(GpuLayout.of(False) for _gpu in range(count)), []
    if isinstance(mig_config, str) and mig_config in invalid_configs:
        return None, [f"MIG config {mig_config!r} in gpuops_mig_configs is invalid (see the gpuops_mig_configs errors)"]
    if not isinstance(mig_config, str) or mig_config not in mig_configs:
        valid = ", ".join(name for name in sorted(mig_configs) if _applies(mig_configs[name], product))
        return None, [
            f"undefined MIG config {mig_config!r}; valid for {product.name}: {valid} "
            "(or define it in gpuops_mig_configs)"
        ]
    problems, layouts = {}, []
    for index in range(count):
        try:
            enabled, devices = gpu_layout(mig_configs[mig_config], index, product)
            # A GPU without MIG takes a config only when it leaves MIG disabled (all-disabled).
            if enabled and product.mig is None:
                return None, [_mig_unsupported(product, mig_config)]
            if enabled:
                plan_layout(product, devices)
            layouts.append(GpuLayout.of(enabled, devices))
        except MigLayoutError as error:
            problems.setdefault(str(error), []).append(str(index))
    messages = [f"config {mig_config}, GPU {', '.join(indexes)}: {text}" for text, indexes in problems.items()]
    return (None if messages else tuple(layouts)), messages


def _plan_node(product, count, mig_config, time_slicing, strategy, mig_configs, invalid_configs):
    """A _NodeResult, or a list of (variable, message)."""
    problems = [_split_path(message, "gpuops_time_slicing") for message in lint_time_slicing(time_slicing)]
    layouts, layout_problems = _mig_layouts(product, count or 0, mig_config, mig_configs, invalid_configs)
    problems += [("gpuops_mig_config", message) for message in layout_problems]
    if problems or strategy is None or count is None:
        return problems
    time_slicing = normalize_time_slicing(time_slicing)
    try:
        resources = physical_resources(product, layouts, strategy)
        capacity = node_capacity(product, layouts, strategy, time_slicing)
    except CapacityError as error:
        return [("gpuops_mig_config", f"config {mig_config} with gpuops_mig_strategy {strategy}: {error}")]
    problems = [
        _split_path(message, "gpuops_time_slicing") for message in lint_time_slicing_for_node(time_slicing, resources)
    ]
    if problems:
        return problems
    doc = build_device_plugin_config(strategy, time_slicing, list(resources))
    problems = [("gpuops_time_slicing", f"device plugin config: {p}") for p in lint_device_plugin_config(doc)]
    return problems or _NodeResult(product, layouts, capacity, doc)


def plan_cluster(nodes, settings=None):
    """Plan a cluster from NODES, {host: {gpuops_* variable: value}} (absent variables left out).

    SETTINGS overrides DEFAULT_SETTINGS (namespace, ConfigMap names, rke2). Returns a ClusterPlan or
    raises IntentErrors listing every problem of every host.
    """
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    errors = []
    if not nodes:
        raise IntentErrors([IntentError("gpu_nodes", "inventory", "the group has no hosts; add the GPU nodes to it")])
    strategy = _check_cluster_wide(
        nodes, "gpuops_mig_strategy", MIG_STRATEGIES, DEFAULT_MIG_STRATEGY, "the device plugin and GFD use one", errors
    )
    mig_manager = _check_cluster_wide(
        nodes, "gpuops_mig_manager", MIG_MANAGERS, DEFAULT_MIG_MANAGER, "one component applies MIG layouts", errors
    )
    user_configs, invalid_configs = _collect_user_configs(nodes, errors)

    intents = {}
    for host, intent in nodes.items():
        product = find_product(intent.get("gpuops_gpu_product"))
        if product is None:
            value = intent.get("gpuops_gpu_product")
            message = "is not set" if value is None else f"unknown product {value!r}"
            errors.append(IntentError(host, "gpuops_gpu_product", f"{message}; valid: {_known_products()}"))
        count, problem = _check_count(intent.get("gpuops_gpu_count"))
        if problem:
            errors.append(IntentError(host, "gpuops_gpu_count", problem))
        # A bad count still lets the rest of the host's intent be checked.
        if product is not None:
            intents[host] = (product, count, intent.get("gpuops_mig_config"), intent.get("gpuops_time_slicing"))

    mig_products = {product for product, *_settings in intents.values() if product.mig}
    mig_doc = mig_parted_document(mig_products, user_configs)
    results, cache = {}, {}
    for host, (product, count, mig_config, time_slicing) in intents.items():
        key = (product.name, count, canonical_json(mig_config), canonical_json(time_slicing))
        if key not in cache:
            cache[key] = _plan_node(
                product, count, mig_config, time_slicing, strategy, mig_doc["mig-configs"], invalid_configs
            )
        result = cache[key]
        if isinstance(result, list):
            errors.extend(IntentError(host, variable, message) for variable, message in result)
        else:
            results[host] = (result, mig_config)
    if errors:
        raise IntentErrors(errors)
    return _assemble(results, strategy, mig_manager, mig_doc, settings)


def _assemble(results, strategy, mig_manager, mig_doc, settings):
    nodes, totals, data, rows, unmanaged = {}, {}, {}, [], []
    data[DEFAULT_DEVICE_PLUGIN_CONFIG] = build_device_plugin_config(strategy, None, [])
    for host in sorted(results):
        result, mig_config = results[host]
        key = device_plugin_config_key(result.device_plugin_config)
        data[key] = result.device_plugin_config
        labels = {**result.capacity["labels"], DEVICE_PLUGIN_CONFIG_LABEL: key}
        if mig_config is None and result.product.mig:
            unmanaged.append(host)
        elif mig_config is not None and result.product.mig and mig_manager == "operator":
            # The operator's mig-manager applies the config this label names.
            labels[MIG_CONFIG_LABEL] = mig_config
        resources = result.capacity["resources"]
        nodes[host] = {
            "gpu_product": result.product.name,
            "gpu_count": len(result.layouts),
            "mig_config": mig_config,
            "resources": dict(resources),
            "labels": dict(sorted(labels.items())),
        }
        for name, count in resources.items():
            totals[name] = totals.get(name, 0) + count
        layout = describe_layout(mig_config, result.product, result.layouts)
        rows.append((host, result.product.name, len(result.layouts), layout, resources))
    totals = dict(sorted(totals.items()))
    notes = []
    if unmanaged:
        notes.append(
            f"{len(unmanaged)} MIG-capable hosts have no gpuops_mig_config ({', '.join(unmanaged[:HOSTS_SHOWN])}"
            f"{' ...' if len(unmanaged) > HOSTS_SHOWN else ''}): the collection does not touch MIG on them, and "
            "their planned capacity assumes MIG off; set gpuops_mig_config (all-disabled for no MIG) to be sure"
        )
    if strategy == "none" and any(
        layout.mig_enabled for result, _mig_config in results.values() for layout in result.layouts
    ):
        notes.append(
            "gpuops_mig_strategy is none: the device plugin advertises MIG-enabled GPUs whole (nvidia.com/gpu) "
            "and no MIG device can be requested; use single or mixed to schedule MIG devices"
        )
    manages_mig = any(result.product.mig for result, _mig_config in results.values())
    return ClusterPlan(
        capacity={"nodes": nodes, "totals": totals},
        device_plugin_configmap=configmap(
            settings["device_plugin_configmap"], settings["namespace"], dict(sorted(data.items()))
        ),
        mig_parted_config=mig_doc,
        gpu_operator_values=gpu_operator_values(settings, strategy, mig_manager == "operator" and manages_mig),
        table=render_table(rows, totals, strategy),
        notes=notes,
    )
