# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One reconcile pass a second over every described GPU node: what the kubelet, the GPU Operator,
mig-manager, the device plugin, GFD, the memory-sharing device plugins (HAMi's, gpushare's) and the
DRA driver's kubelet plugin would each do on it. See README.md."""

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import device_plugin, dra_plugin, gpu_state, mig_parted, sharing_plugins
from .cluster import Cluster, now
from .hardware import Node

FAULT = "gpuops.test/"
MIG_CONFIG, MIG_STATE = "nvidia.com/mig.config", "nvidia.com/mig.config.state"
PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
# The operator's per-node switches; mig-manager pauses these while it reconfigures the GPUs.
DEPLOY_LABELS = (
    "device-plugin",
    "gpu-feature-discovery",
    "dcgm",
    "dcgm-exporter",
    "mig-manager",
    "container-toolkit",
    "driver",
    "operator-validator",
    "node-status-exporter",
)
PAUSED_BY_MIG_MANAGER = ("device-plugin", "gpu-feature-discovery", "dcgm", "dcgm-exporter")
# The ClusterPolicy's operand states (gpu-operator's stateNames), by the spec key that enables them.
OPERANDS = (
    ("driver", "state-driver", True),
    ("toolkit", "state-container-toolkit", True),
    ("validator", "state-operator-validation", True),
    ("devicePlugin", "state-device-plugin", True),
    ("dcgm", "state-dcgm", False),
    ("dcgmExporter", "state-dcgm-exporter", True),
    ("gfd", "gpu-feature-discovery", True),
    ("migManager", "state-mig-manager", True),
    ("nodeStatusExporter", "state-node-status-exporter", False),
)


def log(message: str) -> None:
    print(f"{now()} gpu-node: {message}", file=sys.stderr, flush=True)


def enabled(spec: dict, key: str, default: bool = True) -> bool:
    return bool((spec.get(key) or {}).get("enabled", default))


def pod_view(rendered: dict, annotations: dict) -> dict:
    """The GPUs' state as pods see it; the driver-unloaded fault makes nvidia-smi in them exit 9, as on a
    node whose kernel module is gone (a kernel update without it) while the device plugin still runs."""
    if annotations.get(FAULT + "driver-unloaded"):
        return {**rendered, "driver_unloaded": True}
    return rendered


def unhealthy_gpus(hardware: Node, annotations: dict) -> set[int]:
    """The fault annotation: its last N GPUs are unhealthy."""
    unhealthy = int(annotations.get(FAULT + "unhealthy-gpus", "0") or 0)
    return set(range(max(0, hardware.count - unhealthy), hardware.count))


def is_gfd_label(key: str) -> bool:
    if key in ("nvidia.com/mig.capable", "nvidia.com/mps.capable", "nvidia.com/mig.strategy"):
        return True
    if key.startswith("nvidia.com/gpu."):
        return not key.startswith(("nvidia.com/gpu.deploy.", "nvidia.com/gpu.present", "nvidia.com/gpu.workload"))
    return key.startswith("nvidia.com/mig-")


@dataclass
class NodeState:
    """What the node's GPUs and running plugin hold between passes."""

    gpus: list
    mig_applied: str | None = None  # the mig.config value last acted on
    mig_pending_since: float | None = None
    paused: list = field(default_factory=list)
    plugin_key: tuple | None = None  # (label value, MIG layout) the plugin loaded its config for
    plugin_config: dict | None = None
    advertised: set = field(default_factory=set)
    lease_renewed: float = 0.0
    rendered: tuple | None = None  # (MIG layout, the nvidia-smi double's state of it)


@dataclass
class Shared:
    """What the memory-sharing device plugins (HAMi's, gpushare's) advertise on one node."""

    devices: dict = field(default_factory=dict)  # resource -> [(device ID, health, what Allocate names)]
    status: dict = field(default_factory=dict)  # resources the plugin patches into the node's status itself


class Controller:
    def __init__(self, cluster: Cluster, hardware: dict[str, Node], namespace: str, nodes_dir: Path | None = None):
        self.cluster, self.hardware, self.default_namespace = cluster, hardware, namespace
        self.state = {name: NodeState(mig_parted.initial(node)) for name, node in hardware.items()}
        self.reported_errors: set = set()
        self.dra_published: set = set()  # nodes whose ResourceSlice the DRA stand-in published
        self.nodes_dir = nodes_dir
        self.dra_plugins = {}  # real-kubelet node -> its DRA kubelet plugin (dra_kubelet_plugin.py), while it runs
        # Nodes with a real kubelet: their device plugin talks gRPC to it from NODES_DIR/<node>/.
        self.plugins = {}
        if any(node.kubelet for node in hardware.values()):
            from .kubelet_plugin import NodePlugins  # grpcio is needed only for these nodes

            if nodes_dir is None:
                raise ValueError("nodes with a real kubelet need the folder of their device-plugins sockets")
            self.plugins = {
                name: NodePlugins(name, nodes_dir / name, log) for name, node in hardware.items() if node.kubelet
            }

    def stop(self) -> None:
        for plugins in self.plugins.values():
            plugins.close()
        for plugin in self.dra_plugins.values():
            plugin.stop()

    def error_once(self, message: str) -> None:
        if message not in self.reported_errors:
            self.reported_errors.add(message)
            log(message)

    def register(self) -> None:
        existing = self.cluster.nodes()
        for name in self.hardware:
            if name not in existing and name not in self.plugins:  # a real kubelet registers its node
                self.cluster.register(name)
                log(f"registered node {name}")

    def reconcile(self) -> None:
        policy = self.cluster.cluster_policy()
        spec = (policy or {}).get("spec") or {}
        namespace = self.cluster.operator_namespace(self.default_namespace)
        nodes = self.cluster.nodes()
        daemonsets = self.cluster.daemon_sets()
        dra = dra_plugin.kubelet_plugin(daemonsets)
        # Read only where the DRA driver runs or ran: a cluster without it costs no call.
        slices = self.cluster.resource_slices(dra_plugin.DRIVER) if dra is not None or self.dra_published else {}
        for name, hardware in self.hardware.items():
            node = nodes.get(name)
            if node is None and name in self.plugins:
                self.error_once(f"{name}: waiting for its kubelet to register the node")
                continue
            if node is None:
                self.cluster.register(name)
                log(f"registered node {name} again (it had been deleted)")
                continue
            self.reconcile_node(hardware, node, policy, spec, namespace, daemonsets)
            self.dra_driver(hardware, self.state[name], node, dra, slices.get(name))
        if policy:
            self.report_operator(policy, spec, namespace)

    def reconcile_node(self, hardware: Node, node: dict, policy, spec: dict, namespace: str, daemonsets: list) -> None:
        state = self.state[hardware.name]
        labels = dict(node["metadata"].get("labels") or {})
        annotations = node["metadata"].get("annotations") or {}
        wanted = dict(labels)
        if hardware.name not in self.plugins and time.monotonic() - state.lease_renewed > 10:
            self.cluster.renew_lease(hardware.name)
            state.lease_renewed = time.monotonic()
        if policy:
            self.operator_labels(hardware, wanted)
            if enabled(spec, "migManager") and hardware.mig_capable:
                self.mig_manager(hardware, state, wanted, annotations, spec, namespace)
        # The operator's DaemonSets select nodes by these labels: `false` (set for HAMi or gpushare)
        # keeps NVIDIA's device plugin off the node while GFD, with the same config, still runs.
        plugin_on = (
            bool(policy)
            and enabled(spec, "devicePlugin")
            and wanted.get("nvidia.com/gpu.deploy.device-plugin") == "true"
        )
        gfd_on = (
            bool(policy)
            and enabled(spec, "gfd")
            and wanted.get("nvidia.com/gpu.deploy.gpu-feature-discovery") == "true"
        )
        config = self.plugin_config(hardware, state, wanted, spec, namespace) if plugin_on or gfd_on else None
        gfd = {}
        if config is not None and gfd_on:
            gfd = device_plugin.gfd_labels(hardware, state.gpus, config)
        for key in [key for key in wanted if is_gfd_label(key)]:
            if key not in gfd:
                del wanted[key]
        wanted |= gfd
        if wanted != labels:
            self.cluster.patch_labels(hardware.name, {key: wanted.get(key) for key in {*labels, *wanted}})
        shared = self.sharing(hardware, state, wanted, annotations, daemonsets)
        # gpu-operator's TransformDevicePlugin: with spec.cdi.enabled (the CRD's default) the plugin gets
        # DEVICE_LIST_STRATEGY=cdi-annotations,cdi-cri; without it, the config's strategy (envvar by default).
        cdi = plugin_on and enabled(spec, "cdi")
        self.advertise(hardware, state, node, config if plugin_on else None, annotations, shared, cdi)

    def operator_labels(self, hardware: Node, labels: dict) -> None:
        """What the operator puts on a GPU node (NFD saw PCI vendor 10de): the deploy switches."""
        labels.setdefault("feature.node.kubernetes.io/pci-10de.present", "true")
        labels.setdefault("nvidia.com/gpu.present", "true")
        for operand in DEPLOY_LABELS:
            labels.setdefault(f"nvidia.com/gpu.deploy.{operand}", "true")

    def mig_manager(self, hardware, state: NodeState, labels: dict, annotations: dict, spec, namespace) -> None:
        """mig-manager's reconfigure: pending (operands paused), then success or failed."""
        migspec = spec.get("migManager") or {}
        if MIG_CONFIG not in labels:  # the operator's default for MIG-capable nodes
            labels[MIG_CONFIG] = (migspec.get("config") or {}).get("default") or "all-disabled"
        wanted = labels[MIG_CONFIG]
        if wanted == state.mig_applied and state.mig_pending_since is None:
            return
        if state.mig_pending_since is None:
            state.mig_pending_since = time.monotonic()
            labels[MIG_STATE] = "pending"
            for operand in PAUSED_BY_MIG_MANAGER:
                if labels.get(f"nvidia.com/gpu.deploy.{operand}") == "true":
                    labels[f"nvidia.com/gpu.deploy.{operand}"] = "paused-for-mig-change"
                    state.paused.append(operand)
            log(f"{hardware.name}: mig-manager applying {wanted}")
            return
        if time.monotonic() - state.mig_pending_since < 1:
            return  # the reconfiguration takes a while
        name = (migspec.get("config") or {}).get("name") or "default-mig-parted-config"
        data = self.cluster.configmap_data(namespace, name)
        try:
            if FAULT + "mig-manager-fail" in annotations:
                raise mig_parted.MigConfigError(annotations[FAULT + "mig-manager-fail"] or "injected failure")
            if data is None or "config.yaml" not in data:
                raise mig_parted.MigConfigError(f"ConfigMap {namespace}/{name} with key config.yaml not found")
            state.gpus = mig_parted.apply(yaml.safe_load(data["config.yaml"]), wanted, hardware, state.gpus)
        except (mig_parted.MigConfigError, yaml.YAMLError) as error:
            labels[MIG_STATE] = "failed"
            log(f"{hardware.name}: mig-manager failed to apply {wanted}: {error}")
        else:
            labels[MIG_STATE] = "success"
            log(f"{hardware.name}: mig-manager applied {wanted}")
        for operand in state.paused:
            labels[f"nvidia.com/gpu.deploy.{operand}"] = "true"
        state.paused, state.mig_applied, state.mig_pending_since = [], wanted, None

    def plugin_config(self, hardware: Node, state: NodeState, labels: dict, spec: dict, namespace: str):
        """The config the device plugin runs with. Its config-manager reloads only when the node's
        label changes (or the plugin restarts after a MIG change), not when the ConfigMap does."""
        plugin = spec.get("devicePlugin") or {}
        source = plugin.get("config") or {}
        key = labels.get(PLUGIN_CONFIG) or source.get("default") or ""
        layout = tuple(state.gpus)
        if state.plugin_key == (key, layout) and state.plugin_config is not None:
            return state.plugin_config
        strategy = (spec.get("mig") or {}).get("strategy") or "single"
        config: dict = {"version": "v1", "flags": {"migStrategy": strategy}}
        if source.get("name"):
            data = self.cluster.configmap_data(namespace, source["name"])
            if data is None or (key not in data and not (key == "" and len(data) == 1)):
                self.error_once(
                    f"{hardware.name}: device plugin: no config {key!r} in ConfigMap "
                    f"{namespace}/{source['name']}; keeps its previous config"
                )
                return state.plugin_config
            loaded = yaml.safe_load(data[key] if key in data else next(iter(data.values()))) or {}
            loaded.setdefault("flags", {}).setdefault("migStrategy", strategy)
            config = loaded
        state.plugin_key, state.plugin_config = (key, layout), config
        log(f"{hardware.name}: device plugin (re)started with config {key or 'default'}")
        return config

    def rendered(self, hardware: Node, state: NodeState) -> dict:
        """The GPUs as the nvidia-smi double holds them (their UUIDs), for the current MIG layout."""
        layout = tuple(state.gpus)
        if state.rendered is None or state.rendered[0] != layout:
            state.rendered = (layout, gpu_state.render(hardware, state.gpus))
        return state.rendered[1]

    def sharing(self, hardware: Node, state: NodeState, labels: dict, annotations: dict, daemonsets: list) -> Shared:
        """HAMi's and gpushare's device plugins: each runs where its DaemonSet selects the node."""
        shared = Shared()
        hami = sharing_plugins.hami_daemonset(daemonsets)
        gpushare = sharing_plugins.gpushare_daemonset(daemonsets)
        hami_on = hami is not None and sharing_plugins.runs_on(hami, labels)
        gpushare_on = gpushare is not None and sharing_plugins.runs_on(gpushare, labels)
        if not (hami_on or gpushare_on):
            return shared
        unhealthy = unhealthy_gpus(hardware, annotations)
        try:
            rendered = self.rendered(hardware, state)["gpus"]
            # Both plugins count whole GPUs (HAMi's hami-core mode; gpushare knows no MIG).
            whole = [(gpu.index, rendered[gpu.index]["uuid"]) for gpu in state.gpus if not gpu.mig_enabled]
            if hami_on:
                settings = sharing_plugins.hami_settings(hami, hardware.name, self.cluster.configmap_data)
                shared.devices |= sharing_plugins.hami_devices(whole, settings, unhealthy)
                register = sharing_plugins.hami_register(hardware, whole, settings, unhealthy)
                if annotations.get(sharing_plugins.HAMI_REGISTER) != register:
                    self.cluster.patch_annotations(hardware.name, {sharing_plugins.HAMI_REGISTER: register})
                    log(f"{hardware.name}: HAMi device plugin registered {len(whole)} GPUs ({settings})")
            if gpushare_on:
                unit = sharing_plugins.gpushare_unit(gpushare)
                shared.devices |= sharing_plugins.gpushare_devices(hardware, whole, unit, unhealthy)
                shared.status[sharing_plugins.GPUSHARE_COUNT] = len(whole)
        except (sharing_plugins.SharingError, gpu_state.StateError) as error:
            self.error_once(f"{hardware.name}: memory-sharing device plugin: {error}")
        return shared

    def dra_driver(self, hardware: Node, state: NodeState, node: dict, daemonset, existing) -> None:
        """NVIDIA's DRA driver where its kubelet plugin's DaemonSet selects the node: the node's ResourceSlice,
        published anew when the GPUs change, deleted when the plugin no longer runs there."""
        labels = node["metadata"].get("labels") or {}
        annotations = node["metadata"].get("annotations") or {}
        if daemonset is None or not dra_plugin.runs_on(daemonset, labels):
            if existing is not None and hardware.name in self.dra_published:
                self.cluster.delete_resource_slice(existing["metadata"]["name"])
                log(f"{hardware.name}: DRA kubelet plugin gone, its ResourceSlice deleted")
            self.dra_published.discard(hardware.name)
            if hardware.name in self.dra_plugins:
                self.dra_plugins.pop(hardware.name).stop()
            return
        if labels.get("nvidia.com/gpu.deploy.device-plugin") == "true":
            # The chart's validation.yaml: the driver cannot share a node with NVIDIA's device plugin.
            self.error_once(f"{hardware.name}: the DRA driver and NVIDIA's device plugin both run on the node")
        try:
            rendered = self.rendered(hardware, state)
        except gpu_state.StateError as error:
            self.error_once(f"{hardware.name}: DRA kubelet plugin: {error}")
            return
        lost = int(annotations.get(FAULT + "lost-gpus", "0") or 0)
        wanted = dra_plugin.devices(hardware, rendered, gpu_state.mig_instances, lost)
        if hardware.name in self.plugins:
            self.serve_dra(hardware, wanted)
        self.dra_published.add(hardware.name)
        if existing is not None and existing["spec"].get("devices") == wanted:
            return
        generation = int(((existing or {}).get("spec") or {}).get("pool", {}).get("generation") or 0) + 1
        self.cluster.publish_resource_slice(dra_plugin.resource_slice(hardware.name, wanted, generation), existing)
        log(f"{hardware.name}: DRA kubelet plugin published {len(wanted)} devices (generation {generation})")

    def serve_dra(self, hardware: Node, devices: list) -> None:
        """A real kubelet: the DRA kubelet plugin answers its gRPC calls (serve() writes the GPUs' state the pods
        read, as for the device plugin)."""
        from .dra_kubelet_plugin import DraNodePlugin  # grpcio, as for the device plugin

        plugin = self.dra_plugins.get(hardware.name)
        if plugin is None:
            plugin = DraNodePlugin(hardware.name, self.nodes_dir / hardware.name, self.cluster.resource_claim, log)
            plugin.start()
            self.dra_plugins[hardware.name] = plugin
        plugin.set_devices(devices)

    def advertise(self, hardware: Node, state: NodeState, node: dict, config, annotations: dict, shared, cdi) -> None:
        if hardware.name in self.plugins:
            self.serve(hardware, state, node, config, annotations, shared, cdi)
            return
        self.write_status(hardware, state, node, config, annotations, shared)

    def merge(self, hardware: Node, devices: dict, shared: Shared) -> dict:
        both = sorted(set(devices) & set(shared.devices))
        if both:  # both plugins would serve the same socket; the kubelet keeps the last registered
            self.error_once(f"{hardware.name}: NVIDIA's device plugin and a memory-sharing one both serve {both}")
        return {**devices, **shared.devices}

    def serve(self, hardware: Node, state: NodeState, node: dict, config, annotations: dict, shared, cdi) -> None:
        """A real kubelet: the plugins' devices go to it over gRPC, the GPUs' state to the pods. CDI: NVIDIA's
        plugin names its devices as CDI devices (HAMi's and gpushare's name them by environment variables)."""
        devices = {}
        try:
            rendered = self.rendered(hardware, state)
            self.plugins[hardware.name].write_state(pod_view(rendered, annotations))
            if config is not None:
                devices = gpu_state.plugin_devices(
                    hardware, state.gpus, rendered, config, unhealthy_gpus(hardware, annotations)
                )
        except (device_plugin.PluginError, gpu_state.StateError) as error:
            self.error_once(f"{hardware.name}: device plugin: {error}")
        cdi_resources = set(devices) - set(shared.devices) if cdi else set()
        self.plugins[hardware.name].update(self.merge(hardware, devices, shared), cdi_resources)
        # gpushare's plugin writes its GPU count into the node's status itself (patchGPUCount).
        status = node.get("status") or {}
        stale = {
            name: str(value)
            for name, value in shared.status.items()
            if (status.get("capacity") or {}).get(name) != str(value)
            or (status.get("allocatable") or {}).get(name) != str(value)
        }
        if stale:
            self.cluster.patch_status(hardware.name, {"capacity": stale, "allocatable": stale})
            log(f"{hardware.name}: patched {stale} into the node's status")

    def write_status(self, hardware: Node, state: NodeState, node: dict, config, annotations: dict, shared) -> None:
        """The kubelet's view of the plugins' devices: capacity and allocatable per resource. A
        resource the plugin stopped advertising stays at 0, as the kubelet keeps it."""
        capacity, allocatable = {}, {}
        if config is not None:
            try:
                capacity, allocatable = device_plugin.advertised(
                    hardware, state.gpus, config, unhealthy_gpus(hardware, annotations)
                )
            except device_plugin.PluginError as error:
                self.error_once(f"{hardware.name}: device plugin: {error}")
        self.merge(hardware, capacity, shared)
        for resource, listed in shared.devices.items():
            capacity[resource] = len(listed)
            allocatable[resource] = sum(1 for _id, health, _what in listed if health == sharing_plugins.HEALTHY)
        status = node.get("status") or {}
        for name in state.advertised | {key for key in status.get("capacity", {}) if key.startswith("nvidia.com/")}:
            capacity.setdefault(name, 0)
            allocatable.setdefault(name, 0)
        state.advertised |= set(capacity)
        # gpushare's GPU count is not a device-plugin resource: its plugin patches it, nobody zeroes it.
        capacity |= shared.status
        allocatable |= shared.status
        wanted_capacity = {**status.get("capacity", {}), **{k: str(v) for k, v in capacity.items()}}
        wanted_allocatable = {**status.get("allocatable", {}), **{k: str(v) for k, v in allocatable.items()}}
        if wanted_capacity != status.get("capacity") or wanted_allocatable != status.get("allocatable"):
            self.cluster.patch_status(hardware.name, {"capacity": wanted_capacity, "allocatable": wanted_allocatable})
            log(f"{hardware.name}: advertises {capacity} (allocatable {allocatable})")

    def report_operator(self, policy: dict, spec: dict, namespace: str) -> None:
        """The ClusterPolicy status as gpu-operator's controller writes it."""
        never = {
            item.strip()
            for item in (policy["metadata"].get("annotations") or {}).get(FAULT + "operand-never-ready", "").split(",")
            if item.strip()
        }
        not_ready = [state for key, state, default in OPERANDS if enabled(spec, key, default) and state in never]
        status = policy.get("status") or {}
        if not_ready:
            state = "notReady"
            message = f"ClusterPolicy is not ready, states not ready: [{' '.join(not_ready)}]"
            conditions = [("Ready", "False", "OperandNotReady", message), ("Error", "True", "OperandNotReady", message)]
        else:
            state = "ready"
            message = "ClusterPolicy is ready as all resources have been successfully reconciled"
            conditions = [("Ready", "True", "Reconciled", message), ("Error", "False", "Ready", "")]
        previous = {item["type"]: item for item in status.get("conditions") or []}
        wanted = []
        for kind, value, reason, text in conditions:
            old = previous.get(kind) or {}
            changed = old.get("status") != value
            wanted.append(
                {
                    "type": kind,
                    "status": value,
                    "reason": reason,
                    "message": text,
                    "lastTransitionTime": now() if changed else old["lastTransitionTime"],
                }
            )
        if status.get("state") != state or status.get("namespace") != namespace or status.get("conditions") != wanted:
            self.cluster.patch_cluster_policy_status(
                policy["metadata"]["name"], {"state": state, "namespace": namespace, "conditions": wanted}
            )
            log(f"ClusterPolicy {policy['metadata']['name']}: {state} {message}")
