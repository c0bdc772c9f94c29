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

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    all_products,
    extra_products,
    find_product,
    normalize_product_name,
    product_hint,
    suggest_names,
    suggest_products,
    unknown_product,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.driver_support import (
    BRANCH_VARIABLE,
    VERSION_VARIABLE,
    driver_problems,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError, excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_CONFIG_LABEL,
    MIG_CONFIG_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import MAX_GPUS_PER_NODE
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import (
    entry_selects_gpu,
    gpu_layout,
    lint_mig_parted_document,
    mig_parted_document,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import (
    plan_layout,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan import dra_gates, dra_intent
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import (
    intent_bound_problems,
    label_value_problem,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import (
    GpuLayout,
    empty_mig_gpus,
    node_capacity,
    physical_resources,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin import (
    MIG_STRATEGIES,
    SHARINGS,
    build_device_plugin_config,
    lint_device_plugin_config,
    sharing_in_use,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin_sharing import PluginNode
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.documents import (
    DEFAULT_DEVICE_PLUGIN_CONFIG,
    MIG_CONFIGMAP_KEY,
    canonical_json,
    configmap,
    describe_layout,
    device_plugin_config_key,
    gpu_operator_values,
    render_table,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import (
    DraPlanError,
    cluster_document,
    predict_node_devices,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import (
    node_labels as dra_node_labels,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import (
    CapacityError,
    IntentError,
    IntentErrors,
    hosts_text,
    split_path,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.memory_sharing import (
    VARIABLE as MEMORY_SHARING,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.memory_sharing import (
    conflict_problems,
    describe_sharing,
    lint_memory_sharing,
    normalize_memory_sharing,
    scheduler_extenders,
    sharing_capacity,
    sharing_labels,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.mps import (
    MPS,
    NEEDS_CDI,
    refused_under_mixed_message,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import TIME_SLICING

# The driver role's variables the plan checks against each node's GPUs (the action gives the role's defaults
# where the inventory sets none).
DRIVER_VARIABLES = (BRANCH_VARIABLE, VERSION_VARIABLE)
# The host roles' variables the plan reads for each GPU node, the role's default where the inventory sets none: the
# driver's, and the Kubernetes version a DRA node needs.
ROLE_VARIABLES = (*DRIVER_VARIABLES, dra_intent.KUBERNETES_VARIABLE)
# Whether the GPU Operator has containerd inject GPUs through CDI (docs/cdi.md). The chart's default since
# v25.10.0 (values.yaml cdi.enabled); the plan sets it explicitly so that a chart upgrade cannot change it.
CDI_VARIABLE = "gpuops_cdi"
DEFAULT_CDI = True
INTENT_VARIABLES = (
    "gpuops_gpu_product",
    "gpuops_gpu_count",
    "gpuops_mig_strategy",
    "gpuops_mig_manager",
    "gpuops_mig_config",
    "gpuops_mig_configs",
    "gpuops_time_slicing",
    "gpuops_mps",
    "gpuops_memory_sharing",
    "gpuops_gpu_catalog_extra",
    CDI_VARIABLE,
    dra_intent.VARIABLE,
    dra_gates.VARIABLE,
)
DEFAULT_MIG_STRATEGY = "none"
# Who applies MIG layouts: the collection's mig role on the hosts, or the GPU Operator's mig-manager.
MIG_MANAGERS = ("host", "operator")
DEFAULT_MIG_MANAGER = "host"
DEFAULT_SETTINGS = {
    "namespace": "gpu-operator",
    "device_plugin_configmap": "gpuops-device-plugin-config",
    "mig_configmap": "gpuops-mig-parted-config",
}
FILES = (
    "capacity.json",
    "device-plugin-configmap.yaml",
    "mig-parted-config.yaml",
    "mig-parted-configmap.yaml",
    "gpu-operator-values.yaml",
    "dra.json",
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
    # The ConfigMap the GPU Operator's mig-manager reads (key config.yaml: the mig-parted document).
    mig_parted_configmap: dict = field(default_factory=dict)
    # KubeSchedulerConfiguration extenders the memory-sharing backends need (gpushare's), else empty.
    scheduler_extenders: list = field(default_factory=list)
    # What NVIDIA's DRA driver is expected to publish on the DRA nodes, and the gates it runs with (dra.py).
    dra: dict = field(default_factory=dict)

    def manifests(self, dump_yaml):
        """The two ConfigMaps as the API takes them: each embedded document as text (DUMP_YAML)."""

        def manifest(configmap_doc):
            data = configmap_doc["data"]
            return {**configmap_doc, "data": {key: dump_yaml(doc) for key, doc in data.items()}}

        return {
            "device_plugin_configmap": manifest(self.device_plugin_configmap),
            "mig_parted_configmap": manifest(self.mig_parted_configmap),
        }

    def files(self, dump_yaml, dump_json):
        """{file name: text}; DUMP_YAML/DUMP_JSON turn a document into text."""
        manifests = self.manifests(dump_yaml)
        return {
            "capacity.json": dump_json(self.capacity),
            "device-plugin-configmap.yaml": dump_yaml(manifests["device_plugin_configmap"]),
            "mig-parted-config.yaml": dump_yaml(self.mig_parted_config),
            "mig-parted-configmap.yaml": dump_yaml(manifests["mig_parted_configmap"]),
            "gpu-operator-values.yaml": dump_yaml(self.gpu_operator_values),
            "dra.json": dump_json(self.dra),
            "plan.txt": self.table,
        }


@dataclass(frozen=True)
class _NodeResult:
    product: object
    layouts: tuple
    capacity: dict
    device_plugin_config: dict
    unselected: tuple = ()  # GPU indexes no entry of the MIG config selects: left as they are
    # The normalized gpuops_memory_sharing with its scheduler_accounts; None: NVIDIA's device plugin serves the node.
    memory_sharing: dict | None = None
    # The devices NVIDIA's DRA driver publishes on a DRA node; None: the node is not one.
    dra_devices: tuple | None = None


@dataclass(frozen=True)
class NodeIntent:
    """What one GPU node asks the plan for: its product (found), its GPU count (None when invalid), and its MIG
    config and sharing variables as the inventory gives them (None when unset)."""

    product: object  # _gpu.catalog.Product
    count: int | None
    mig_config: object
    # {variable: value} of each way NVIDIA's device plugin shares a GPU (device_plugin.SHARINGS).
    plugin_sharing: dict
    memory_sharing: object
    # gpuops_gpu_allocation: device_plugin or dra.
    allocation: str = dra_intent.DEVICE_PLUGIN

    def planning_key(self):
        """Nodes with equal keys get one plan: a thousand identical nodes are planned once."""
        sharing = (self.plugin_sharing, self.memory_sharing)
        return (self.product, self.count, canonical_json(self.mig_config), canonical_json(sharing), self.allocation)

    def layout_key(self):
        """Nodes with equal keys have the same MIG layouts, whatever their sharing."""
        return (self.product, self.count, canonical_json(self.mig_config))


@dataclass
class _PlanningContext:
    """What the planning of every node shares: the cluster-wide MIG strategy (None when it is invalid), the MIG
    configs by name (built-in and the inventory's), the names of the inventory's invalid configs, and the MIG
    layouts planned so far by NodeIntent.layout_key()."""

    strategy: str | None
    mig_configs: dict
    invalid_configs: set
    layouts: dict = field(default_factory=dict)
    # The cluster's gpuops_mig_manager and gpuops_dra_feature_gates, for the DRA nodes.
    mig_manager: str | None = DEFAULT_MIG_MANAGER
    dra_feature_gates: dict | None = None

    def layouts_of(self, intent):
        """((layouts or None, problems), unselected GPU indexes) of the node, planned once per layout key."""
        key = intent.layout_key()
        if key not in self.layouts:
            product, count, mig_config = intent.product, intent.count, intent.mig_config
            self.layouts[key] = (
                _mig_layouts(product, count or 0, mig_config, self.mig_configs, self.invalid_configs),
                _unselected_gpus(product, count, mig_config, self.mig_configs),
            )
        return self.layouts[key]


def _known_products():
    return ", ".join(product.name for product in all_products())


def _check_cluster_wide(nodes, variable, valid, default, why, errors):
    """The one value of a variable every GPU node must share, or None (errors added)."""
    values = {}
    for host, intent in nodes.items():
        value = intent.get(variable, default)
        if value not in valid:
            errors.append(IntentError(host, variable, f"{excerpt(value)} is not valid; valid: {', '.join(valid)}"))
            continue
        values.setdefault(value, []).append(host)
    if len(values) > 1:
        found = "; ".join(f"{value} on {len(hosts)} hosts" for value, hosts in values.items())
        message = f"must be the same on every GPU node ({why}); found {found}; set it once in group_vars/all"
        errors.extend(IntentError(host, variable, message) for hosts in values.values() for host in hosts)
        return None
    return next(iter(values), None)


def _check_cdi(nodes, errors):
    """gpuops_cdi: a boolean, the same on every GPU node (it is the ClusterPolicy's one cdi.enabled)."""
    wrong = [host for host, intent in nodes.items() if not isinstance(intent.get(CDI_VARIABLE, DEFAULT_CDI), bool)]
    for host in wrong:
        value = nodes[host][CDI_VARIABLE]
        errors.append(IntentError(host, CDI_VARIABLE, f"{excerpt(value)} is not valid; valid: true, false"))
    if wrong:
        return None
    return _check_cluster_wide(
        nodes, CDI_VARIABLE, (True, False), DEFAULT_CDI, "the GPU Operator's cdi.enabled is cluster-wide", errors
    )


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
                    f"config {excerpt(name, bare=True)} is defined differently on {defined_by[name]}; "
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
        return None, f'must be a whole number of GPUs per node such as 8 or "8", got {excerpt(value)}'
    if count < 1:
        return None, f"must be 1 or more GPUs per node, got {count}; remove the host from gpu_nodes if it has none"
    if count > MAX_GPUS_PER_NODE:
        # The plan works per GPU: bounded before it loops over them.
        return None, (
            f"must be at most {MAX_GPUS_PER_NODE} GPUs per node (the most the NVIDIA driver supports in one system), "
            f"got {excerpt(count)}"
        )
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
        return None, [
            f"MIG config {excerpt(mig_config)} in gpuops_mig_configs is invalid (see the gpuops_mig_configs errors)"
        ]
    if product.origin != "catalog" and mig_config != "all-disabled":
        hint = product_hint(product.name) if product.origin == "unknown" else ""
        return None, [
            f"{product.name} is not in the GPU catalog ("
            f"{'described by gpuops_gpu_catalog_extra, ' if product.origin == 'inventory' else ''}"
            f"no MIG geometry{'; ' + hint if hint else ''}), so MIG config {excerpt(mig_config)} cannot be planned; "
            "use all-disabled or leave gpuops_mig_config unset (whole GPUs and time-slicing work)"
        ]
    if not isinstance(mig_config, str) or mig_config not in mig_configs:
        names = [name for name in sorted(mig_configs) if _applies(mig_configs[name], product)]
        near = suggest_names(mig_config, names, 1) if isinstance(mig_config, str) else []
        hint = f"; did you mean {near[0]}?" if near else ""
        return None, [
            f"undefined MIG config {excerpt(mig_config)}; valid for {product.name}: {', '.join(names)} "
            f"(or define it in gpuops_mig_configs){hint}"
        ]
    problems, layouts = {}, []
    unselected = _unselected_gpus(product, count, mig_config, mig_configs)
    if count and len(unselected) == count:
        return None, [
            f"no entry of config {mig_config} selects any GPU of {product.name} (PCI "
            f"{', '.join(product.pci_device_ids) or 'unknown'}), so it would leave every GPU as it is; valid: a "
            "config whose devices and device-filter select this product's GPUs"
        ]
    for index in range(count):
        if index in unselected:
            # Left as it is, by mig-parted and nvidia_mig alike: planned as MIG off (whole GPU).
            layouts.append(GpuLayout.of(False))
            continue
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


def _unselected_gpus(product, count, mig_config, mig_configs):
    """Indexes of the node's GPUs that no entry of MIG_CONFIG selects, () without a config.

    mig-parted applies each entry only to the GPUs its devices and device-filter select
    (cmd/nvidia-mig-parted/assert/assert.go WalkSelectedMigConfigForEachGPU; api/spec/v1/helpers.go
    MatchesDevices, MatchesDeviceFilter) and leaves the others alone, as the nvidia_mig module does.
    """
    entries = mig_configs.get(mig_config) if isinstance(mig_config, str) else None
    if not entries:
        return ()
    return tuple(index for index in range(count or 0) if not any(entry_selects_gpu(e, index, product) for e in entries))


def _plan_memory_shared_node(product, layouts, strategy, memory_sharing, unselected):
    """A _NodeResult for a node whose GPUs HAMi or gpushare share, or a list of (variable, message).

    GFD still runs there and labels the GPUs without sharing (no device-plugin config selects one).
    """
    sharing = normalize_memory_sharing(memory_sharing)
    try:
        gfd = node_capacity(product, layouts, strategy)
        resources, accounts = sharing_capacity(product, len(layouts), sharing)
    except CapacityError as error:
        return [(MEMORY_SHARING, str(error) + _unknown_product_hint(product))]
    capacity = {
        "resources": dict(sorted(resources.items())),
        "labels": dict(sorted({**gfd["labels"], **sharing_labels(sharing)}.items())),
    }
    planned = {**sharing, "scheduler_accounts": dict(sorted(accounts.items()))}
    return _NodeResult(product, layouts, capacity, None, unselected, planned)


def _plan_node(intent, context):
    """A _NodeResult for the node of INTENT (a NodeIntent), or a list of (variable, message)."""
    (layouts, layout_problems), unselected = context.layouts_of(intent)
    if intent.allocation == dra_intent.DRA:
        return _plan_dra_node(intent, context, layouts, layout_problems, unselected)
    mig_on = [index for index, layout in enumerate(layouts or ()) if layout.mig_enabled]
    problems = _setting_problems(intent, layout_problems, mig_on)
    if problems or context.strategy is None or intent.count is None:
        return problems
    if intent.memory_sharing is not None:
        return _plan_memory_shared_node(intent.product, layouts, context.strategy, intent.memory_sharing, unselected)
    return _plan_device_plugin_node(intent, context.strategy, layouts, mig_on, unselected)


def _plan_dra_node(intent, context, layouts, layout_problems, unselected):
    """A _NodeResult for a node that offers its GPUs through NVIDIA's DRA driver, or a list of (variable, message).

    No extended resource is advertised there (resources {}): the driver publishes the GPUs as ResourceSlices."""
    product = intent.product
    problems = dra_intent.sharing_problems(intent.plugin_sharing, intent.memory_sharing, MEMORY_SHARING)
    problems += [("gpuops_mig_config", message) for message in layout_problems]
    problems += dra_intent.mig_problems(product, intent.mig_config, context.mig_manager, context.dra_feature_gates)
    if problems or intent.count is None:
        return problems
    try:
        devices = predict_node_devices(product, layouts)
    except DraPlanError as error:
        return [("gpuops_mig_config", f"config {intent.mig_config}, {error}")]
    capacity = {"resources": {}, "labels": dra_node_labels()}
    return _NodeResult(product, layouts, capacity, None, unselected, dra_devices=tuple(devices))


def _setting_problems(intent, layout_problems, mig_on):
    """(variable, message) of each sharing or MIG setting of the node that is wrong alone or with the others.

    LAYOUT_PROBLEMS: those of its MIG config; MIG_ON: the indexes of its GPUs with MIG enabled.
    """
    problems = [
        split_path(message, sharing.variable)
        for sharing in SHARINGS
        for message in sharing.lint(intent.plugin_sharing[sharing.variable], intent.product)
    ]
    problems += [split_path(message, MEMORY_SHARING) for message in lint_memory_sharing(intent.memory_sharing)]
    problems += [("gpuops_mig_config", message) for message in layout_problems]
    time_slicing, mps = intent.plugin_sharing[TIME_SLICING.variable], intent.plugin_sharing[MPS.variable]
    conflicts = conflict_problems(intent.memory_sharing, time_slicing, mps, intent.mig_config, mig_on)
    problems += [(MEMORY_SHARING, message) for message in conflicts]
    return problems


def _plan_device_plugin_node(intent, strategy, layouts, mig_on, unselected):
    """A _NodeResult for a node NVIDIA's device plugin serves (whole GPUs, MIG devices, time-slicing or MPS), or a
    list of (variable, message)."""
    product = intent.product
    settings = {sharing.variable: sharing.normalize(intent.plugin_sharing[sharing.variable]) for sharing in SHARINGS}
    time_slicing, mps = settings[TIME_SLICING.variable], settings[MPS.variable]
    capacity = None
    try:
        found = physical_resources(product, layouts, strategy)
        capacity = node_capacity(product, layouts, strategy, time_slicing, mps)
    except CapacityError as error:
        resources, refused = None, f"config {intent.mig_config} with gpuops_mig_strategy {strategy}: {error}"
    else:
        resources, refused = tuple(found), None
    # The plugin shares a node one way, so only that way's rules for the node apply. They come before a refused
    # layout (the time-slicing rules skip one: they need its resources). Under mixed, _mps_under_mixed_errors
    # refuses MPS once for the cluster, naming the MIG nodes that keep it mixed.
    sharing = sharing_in_use(settings)
    node = PluginNode(None if strategy == "mixed" else strategy, tuple(mig_on), resources, settings)
    problems = [
        split_path(message, sharing.variable) for message in sharing.lint_for_node(settings[sharing.variable], node)
    ]
    if problems or (sharing is MPS and strategy == "mixed"):
        return problems
    if refused:
        return [("gpuops_mig_config", refused)]
    doc = build_device_plugin_config(strategy, time_slicing, list(resources), mps)
    problems = [
        (sharing.variable, f"device plugin config: {p}")
        for p in lint_device_plugin_config(doc, product.compute_capability)
    ]
    return problems or _NodeResult(product, layouts, capacity, doc, unselected)


def plan_cluster(nodes, settings=None):
    """Plan a cluster from NODES, {host: {gpuops_* variable: value}} (absent variables left out). A node's
    nvidia_driver_branch and nvidia_driver_version, where given, are checked against its GPUs.

    SETTINGS overrides DEFAULT_SETTINGS (namespace, ConfigMap names). Returns a ClusterPlan or
    raises IntentErrors listing every problem of every host.
    """
    # Plain strings: a caller may pass str subclasses (Ansible's templated values), which the YAML dumpers refuse.
    settings = {name: str(value) for name, value in {**DEFAULT_SETTINGS, **(settings or {})}.items()}
    errors = []
    if not nodes:
        raise IntentErrors([IntentError("gpu_nodes", "inventory", "the group has no hosts; add the GPU nodes to it")])
    strategy = _check_cluster_wide(
        nodes, "gpuops_mig_strategy", MIG_STRATEGIES, DEFAULT_MIG_STRATEGY, "the device plugin and GFD use one", errors
    )
    mig_manager = _check_cluster_wide(
        nodes, "gpuops_mig_manager", MIG_MANAGERS, DEFAULT_MIG_MANAGER, "one component applies MIG layouts", errors
    )
    cdi = _check_cdi(nodes, errors)
    dra_feature_gates = dra_intent.cluster_feature_gates(nodes, errors)
    user_configs, invalid_configs = _collect_user_configs(nodes, errors)
    unknown = {}
    intents = _node_intents(nodes, cdi, errors, unknown)
    if mig_manager == "operator":
        errors.extend(_mig_config_label_errors(intents))
    mig_products = {intent.product for intent in intents.values() if intent.product.mig}
    mig_doc = mig_parted_document(mig_products, user_configs)
    context = _PlanningContext(strategy, mig_doc["mig-configs"], invalid_configs, {}, mig_manager, dra_feature_gates)
    results = _plan_nodes(intents, context, errors)
    errors.extend(_mps_under_mixed_errors(intents, context))
    dra_hosts = [host for host, intent in intents.items() if intent.allocation == dra_intent.DRA]
    kubernetes_gates = dra_intent.cluster_kubernetes_gates(nodes, dra_hosts, dra_feature_gates, errors)
    if errors:
        raise IntentErrors(errors)
    plan = _assemble(results, strategy, mig_manager, mig_doc, settings, cdi)
    plan.dra = _dra_document(results, dra_feature_gates, kubernetes_gates)
    plan.notes.extend(_unknown_product_notes(unknown))
    return plan


def _dra_versions(intent, checked):
    """(variable, message) of the versions a DRA node would run that the DRA driver refuses, checked once per pair."""
    key = (repr(intent.get(BRANCH_VARIABLE)), repr(intent.get(dra_intent.KUBERNETES_VARIABLE)))
    if key not in checked:
        checked[key] = dra_intent.version_problems(
            intent.get(BRANCH_VARIABLE, ""), intent.get(dra_intent.KUBERNETES_VARIABLE, "")
        )
    return checked[key]


def _dra_document(results, feature_gates, kubernetes_gates):
    dra_results = {host: result for host, (result, _mig) in results.items() if result.dra_devices is not None}
    return cluster_document(
        {host: list(result.dra_devices) for host, result in dra_results.items()},
        {host: result.product.name for host, result in dra_results.items()},
        feature_gates,
        kubernetes_gates,
    )


def _node_intents(nodes, cdi, errors, unknown):
    """{host: NodeIntent} of the hosts whose product is found; the problems of each host's own variables are
    added to ERRORS, and the products nobody described to UNKNOWN. CDI: the cluster's gpuops_cdi (None: invalid)."""
    intents, driver_checked, dra_checked = {}, {}, {}
    for host, intent in nodes.items():
        # A product name or memory beyond what NVML reports: the product is not looked up nor planned.
        bounds = intent_bound_problems(intent)
        errors.extend(IntentError(host, variable, message) for variable, message in bounds)
        product = None if bounds else _find_product(host, intent, errors, unknown)
        count, problem = _check_count(intent.get("gpuops_gpu_count"))
        if problem:
            errors.append(IntentError(host, "gpuops_gpu_count", problem))
        # A bad count still lets the rest of the host's intent be checked.
        if product is not None and BRANCH_VARIABLE in intent:
            key = (product, repr(intent[BRANCH_VARIABLE]), repr(intent.get(VERSION_VARIABLE)))
            if key not in driver_checked:
                driver_checked[key] = driver_problems(product, intent[BRANCH_VARIABLE], intent.get(VERSION_VARIABLE))
            errors.extend(IntentError(host, variable, message) for variable, message in driver_checked[key])
        allocation = intent.get(dra_intent.VARIABLE) or dra_intent.DEVICE_PLUGIN
        problem = dra_intent.allocation_problem(intent.get(dra_intent.VARIABLE))
        if problem:
            errors.append(IntentError(host, dra_intent.VARIABLE, problem))
            continue
        if allocation == dra_intent.DRA:
            problems = _dra_versions(intent, dra_checked)
            errors.extend(IntentError(host, variable, message) for variable, message in problems)
        # MPS needs CDI, which is the GPU Operator's one cdi.enabled: checked here, where the cluster's is known.
        elif cdi is False and intent.get(MPS.variable) is not None:
            errors.append(IntentError(host, MPS.variable, NEEDS_CDI))
        if product is not None:
            intents[host] = NodeIntent(
                product,
                count,
                intent.get("gpuops_mig_config"),
                {sharing.variable: intent.get(sharing.variable) for sharing in SHARINGS},
                intent.get(MEMORY_SHARING),
                allocation,
            )
    return intents


def _plan_nodes(intents, context, errors):
    """{host: (_NodeResult, mig_config)} of the nodes that can be planned; the others' problems are added to
    ERRORS. Each distinct intent is planned once."""
    results, planned = {}, {}
    for host, intent in intents.items():
        key = intent.planning_key()
        if key not in planned:
            planned[key] = _plan_node(intent, context)
        result = planned[key]
        if isinstance(result, list):
            errors.extend(IntentError(host, variable, message) for variable, message in result)
        else:
            results[host] = (result, intent.mig_config)
    return results


def _find_product(host, intent, errors, unknown):
    """The host's product: the catalog's, else its gpuops_gpu_catalog_extra entry, else an unknown product
    (whole GPUs and time-slicing only; recorded in UNKNOWN for a warning). None when not set or invalid."""
    value = intent.get("gpuops_gpu_product")
    extras, problems = extra_products(intent.get("gpuops_gpu_catalog_extra"))
    errors.extend(IntentError(host, *split_path(problem, "gpuops_gpu_catalog_extra")) for problem in problems)
    if value is None or not isinstance(value, str) or not value.strip():
        message = "is not set" if value is None else f"must be the product name nvidia-smi prints, got {excerpt(value)}"
        errors.append(IntentError(host, "gpuops_gpu_product", f"{message}; valid: {_known_products()}"))
        return None
    product = find_product(value)
    if product is None:
        wanted = normalize_product_name(value)
        product = next((extra for extra in extras if normalize_product_name(extra.name) == wanted), None)
    if product is None:
        product = unknown_product(value)
        unknown.setdefault(product.name, []).append(host)
    return product


def _unknown_product_hint(product):
    """For a product nobody described, the catalog names a typo may have meant, else ""."""
    hint = product_hint(product.name) if product.origin == "unknown" else ""
    return f"; gpuops_gpu_product {product.name!r} is not in the GPU catalog: {hint}" if hint else ""


def _mps_under_mixed_errors(intents, context):
    """gpuops_mps errors under gpuops_mig_strategy mixed (which the device plugin refuses with MPS), saying what
    works for the whole cluster: the strategy is the GPU Operator's one mig.strategy, so none or single must suit
    every MIG node too."""
    # A DRA node is not the device plugin's: its MPS is refused on its own, and its MIG needs no strategy.
    plugin_nodes = {host: intent for host, intent in intents.items() if intent.allocation != dra_intent.DRA}
    mps_hosts = [host for host, intent in plugin_nodes.items() if intent.plugin_sharing[MPS.variable] is not None]
    if context.strategy != "mixed" or not mps_hosts:
        return []
    mig_hosts, need_mixed = [], []
    for host, intent in plugin_nodes.items():
        (layouts, _problems), _unselected = context.layouts.get(intent.layout_key(), ((None, []), ()))
        if not any(layout.mig_enabled for layout in layouts or ()):
            continue
        mig_hosts.append(host)
        try:
            physical_resources(intent.product, layouts, "single")
        except CapacityError:
            need_mixed.append(host)
    message = refused_under_mixed_message(mig_hosts, need_mixed)
    return [IntentError(host, MPS.variable, message) for host in mps_hosts]


def _unknown_product_notes(unknown):
    notes = []
    for name, hosts in sorted(unknown.items()):
        near = suggest_products(name)
        hint = f"did you mean {' or '.join(near)}? " if near else ""
        notes.append(
            f"gpuops_gpu_product {name!r} on {len(hosts)} hosts ({hosts_text(hosts)}) is not in the GPU catalog: "
            f"{hint}planned as whole GPUs (time-slicing allowed, MIG refused) without memory or compute-capability "
            "labels; describe it in gpuops_gpu_catalog_extra (name, memory_mib, compute_capability) to predict them"
        )
    return notes


def _per_gpu_notes(results, gpus_of, sentence):
    """One note per (config, GPUs) that GPUS_OF(result) picks, naming its hosts; SENTENCE(config, gpus) ends it."""
    by_gpus = {}
    for host in sorted(results):
        result, mig_config = results[host]
        gpus = tuple(gpus_of(result))
        if gpus:
            by_gpus.setdefault((mig_config, gpus), []).append(host)
    return [
        f"{hosts_text(hosts)}: {sentence(mig_config, ', '.join(map(str, gpus)))}"
        for (mig_config, gpus), hosts in by_gpus.items()
    ]


def _unselected_notes(results):
    """Notes for GPUs no entry of the host's MIG config selects."""
    return _per_gpu_notes(
        results,
        lambda result: result.unselected,
        lambda config, gpus: (
            f"no entry of config {config} selects GPU {gpus}: mig-parted and the mig role leave those GPUs as they "
            "are, and the plan assumes they have MIG off and advertise whole GPUs; add an entry for them "
            "(e.g. mig-enabled false) to be sure"
        ),
    )


def _mig_config_label_errors(intents):
    """Errors for MIG configs whose name cannot be the value of the node label nvidia.com/mig.config."""
    errors = []
    for host, intent in intents.items():
        mig_config = intent.mig_config
        if not intent.product.mig or not isinstance(mig_config, str):
            continue
        problem = label_value_problem(mig_config)
        if problem:
            errors.append(
                IntentError(
                    host,
                    "gpuops_mig_config",
                    f"config name {excerpt(mig_config)} {problem}, so with gpuops_mig_manager operator it cannot be "
                    f"the value of the node label {MIG_CONFIG_LABEL} and the mig-manager can never select it; rename "
                    "the config (in gpuops_mig_configs too) to at most 63 letters, digits, '-', '_' or '.'",
                )
            )
    return errors


def _empty_mig_notes(results):
    """Warnings for GPUs with MIG enabled and no MIG device under strategy mixed, hosts grouped by GPUs.

    k8s-device-plugin internal/rm/device_map.go assertAllMigDevicesAreValid: with mixed the plugin only
    logs "device N has no MIG devices configured" and advertises nothing for such a GPU.
    """
    return _per_gpu_notes(
        results,
        lambda result: empty_mig_gpus(result.layouts),
        lambda config, gpus: (
            f"config {config} enables MIG with no MIG device on GPU {gpus}: with gpuops_mig_strategy mixed the "
            "device plugin only logs a warning and advertises nothing for those GPUs; give them MIG devices "
            "(e.g. all-1g.10gb) or disable MIG on them to schedule them"
        ),
    )


def _assemble(results, strategy, mig_manager, mig_doc, settings, cdi):
    nodes, totals, data, rows, unmanaged = {}, {}, {}, [], []
    data[DEFAULT_DEVICE_PLUGIN_CONFIG] = build_device_plugin_config(strategy, None, [])
    for host in sorted(results):
        result, mig_config = results[host]
        labels = dict(result.capacity["labels"])
        if result.device_plugin_config is not None:
            key = device_plugin_config_key(result.device_plugin_config)
            data[key] = result.device_plugin_config
            labels[DEVICE_PLUGIN_CONFIG_LABEL] = key
        # Else NVIDIA's device plugin does not run there (memory sharing, DRA): no config key, no label selecting one.
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
            "memory_sharing": _plain_copy(result.memory_sharing),
            "gpu_allocation": dra_intent.DEVICE_PLUGIN if result.dra_devices is None else dra_intent.DRA,
        }
        for name, count in resources.items():
            totals[name] = totals.get(name, 0) + count
        layout = describe_layout(mig_config, result.product, result.layouts, result.unselected)
        offered = resources if result.dra_devices is None else f"DRA: {len(result.dra_devices)} devices"
        rows.append(
            (host, result.product.name, len(result.layouts), layout, describe_sharing(result.memory_sharing), offered)
        )
    totals = dict(sorted(totals.items()))
    notes = []
    if unmanaged:
        notes.append(
            f"{len(unmanaged)} MIG-capable hosts have no gpuops_mig_config ({hosts_text(unmanaged)}): the "
            "collection does not touch MIG on them, and "
            "their planned capacity assumes MIG off; set gpuops_mig_config (all-disabled for no MIG) to be sure"
        )
    plugin_results = {host: item for host, item in results.items() if item[0].dra_devices is None}
    if strategy == "none" and any(
        layout.mig_enabled for result, _mig_config in plugin_results.values() for layout in result.layouts
    ):
        notes.append(
            "gpuops_mig_strategy is none: the device plugin advertises MIG-enabled GPUs whole (nvidia.com/gpu) "
            "and no MIG device can be requested; use single or mixed to schedule MIG devices"
        )
    if strategy == "mixed":
        notes.extend(_empty_mig_notes(plugin_results))
    notes.extend(_unselected_notes(results))
    manages_mig = any(result.product.mig for result, _mig_config in results.values())
    return ClusterPlan(
        capacity={"nodes": nodes, "totals": totals},
        device_plugin_configmap=configmap(
            settings["device_plugin_configmap"], settings["namespace"], dict(sorted(data.items()))
        ),
        mig_parted_config=mig_doc,
        mig_parted_configmap=configmap(settings["mig_configmap"], settings["namespace"], {MIG_CONFIGMAP_KEY: mig_doc}),
        gpu_operator_values=gpu_operator_values(settings, strategy, mig_manager == "operator" and manages_mig, cdi),
        table=render_table(rows, totals, strategy),
        notes=notes,
        scheduler_extenders=scheduler_extenders(result.memory_sharing for result, _mig_config in results.values()),
    )


def _plain_copy(memory_sharing):
    """A copy of a node's planned memory sharing, so nodes that share one result do not share one dict."""
    if memory_sharing is None:
        return None
    return {**memory_sharing, "scheduler_accounts": dict(memory_sharing["scheduler_accounts"])}
