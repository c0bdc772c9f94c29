# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NVIDIA device plugin towards a real kubelet: one gRPC server per resource on a unix socket in
the node's device-plugins folder (in the host folder bind-mounted at the node's /var/lib/kubelet),
registered with the kubelet's kubelet.sock, as k8s-device-plugin's internal/plugin does:
- socket `nvidia-<resource without nvidia.com/>.sock`, Register(version v1beta1, endpoint, resource);
- ListAndWatch sends the whole device list at once and again whenever it changes (health included);
- GetPreferredAllocation: replicas spread over the GPUs with the fewest replicas in use
  (distributedAlloc), other devices in device order;
- Allocate, envvar strategy: env NVIDIA_VISIBLE_DEVICES = the GPU or MIG UUIDs behind the requested ids
  (replicas name their GPU), and, as no NVIDIA runtime injects a driver here, the node's GPU state mounted
  read-only for the nvidia-smi double in the container;
- Allocate, CDI (the GPU Operator's cdi.enabled sets DEVICE_LIST_STRATEGY=cdi-annotations,cdi-cri): no
  environment and no mount, only the CDI devices `k8s.device-plugin.nvidia.com/gpu=<UUID>`, in the response's
  cdi_devices and as a `cdi.k8s.io/nvidia-device-plugin_<id>` annotation (internal/plugin/server.go
  updateResponseForCDI); the plugin writes their specification to the node's /var/run/cdi
  (`k8s.device-plugin.nvidia.com-gpu.json`, internal/cdi/cdi.go), and the node's containerd injects them. Where
  the real specification injects each device's /dev/nvidiaN and the driver's files, this one gives each device
  an environment variable NVSMI_DOUBLE_VISIBLE_<UUID> (the nvidia-smi double shows those devices) and mounts
  the GPU state for any of them: a pod sees a GPU only if containerd applied the specification.
When kubelet.sock is created anew (the kubelet restarted and emptied the folder) every server is
started again and registers again.
HAMi's plugin is served the same way (its server.go: socket `nvidia-gpu.sock`, preferred allocation
available; Allocate here names the GPU of the replica instead of reading the HAMi scheduler's pod
annotations). gpushare's `aliyun.com/gpu-mem` (gpushare-device-plugin pkg/gpu/nvidia): socket
`aliyungpushare.sock`, registered without options; Allocate names the GPU (its index) of the fake
devices given, with the ALIYUN_COM_GPU_MEM_* variables its allocate.go sets.
"""

import hashlib
import json
import os
import tempfile
import threading
import uuid
from concurrent import futures
from pathlib import Path

import grpc

from .deviceplugin_api import DEVICE_PLUGIN_SERVICE, KUBELET_SOCKET, REGISTER, VERSION, messages

# Where the node container sees the node's GPU state (see tests/harness/kubelet_node.py), and where
# the nvidia-smi double in a pod reads it.
NODE_STATE_DIR = "/var/lib/gpuops-gpu-node"
POD_STATE_DIR = "/var/lib/nvidia-smi-double"
GPUSHARE_MEMORY = "aliyun.com/gpu-mem"  # gpushare-device-plugin pkg/gpu/nvidia/const.go resourceName
# k8s-device-plugin: cmd/nvidia-device-plugin/plugin-manager.go (cdi.WithVendor), internal/cdi/cdi.go (the spec's
# file in /var/run/cdi), the operator's CDI_ANNOTATION_PREFIX and the plugin's annotation name.
CDI_KIND = "k8s.device-plugin.nvidia.com/gpu"
CDI_SPEC_FILE = "k8s.device-plugin.nvidia.com-gpu.json"
CDI_ANNOTATION = "cdi.k8s.io/nvidia-device-plugin_"
VISIBLE_PREFIX = "NVSMI_DOUBLE_VISIBLE_"
POD_ENVS = {"NVSMI_DOUBLE_STATE": f"{POD_STATE_DIR}/state.json", "NVSMI_DOUBLE_LOG": "/tmp/nvidia-smi-double-calls.log"}


def visible_variable(device_uuid: str) -> str:
    return VISIBLE_PREFIX + device_uuid.replace("-", "_")


def cdi_spec(uuids: list[str], kind: str = CDI_KIND, names: dict | None = None) -> dict:
    """The CDI specification of KIND whose devices show the GPU and MIG UUIDS; NAMES gives a device's name by its
    UUID (default: the UUID)."""
    names = names or {}
    return {
        "cdiVersion": "0.5.0",
        "kind": kind,
        "devices": [
            {"name": names.get(uuid, uuid), "containerEdits": {"env": [f"{visible_variable(uuid)}={uuid}"]}}
            for uuid in sorted(uuids)
        ],
        "containerEdits": {
            "env": [f"{name}={value}" for name, value in POD_ENVS.items()],
            "mounts": [
                {
                    "hostPath": NODE_STATE_DIR,
                    "containerPath": POD_STATE_DIR,
                    "options": ["ro", "nosuid", "nodev", "rbind"],
                }
            ],
        },
    }


def socket_name(resource: str) -> str:
    if resource == GPUSHARE_MEMORY:
        return "aliyungpushare.sock"  # const.go serverSock
    return "nvidia-" + resource.split("/", 1)[-1] + ".sock"


def preferred_allocation(resource: str) -> bool:
    """gpushare's server.go registers and answers GetDevicePluginOptions without options."""
    return resource != GPUSHARE_MEMORY


def gpushare_envs(physical: list[str], pod_request: int, devices: list) -> dict:
    """allocate.go: the GPU by index, the units asked by the pod and container, the GPU's units.
    (The real plugin finds the GPU in the pod annotation the scheduler extender wrote; here it is
    the GPU most of the given fake devices belong to.)"""
    index = max(dict.fromkeys(physical), key=physical.count)
    per_gpu = sum(1 for _id, _health, what in devices if what == index)
    return {
        "NVIDIA_VISIBLE_DEVICES": index,
        "ALIYUN_COM_GPU_MEM_IDX": index,
        "ALIYUN_COM_GPU_MEM_POD": str(pod_request),
        "ALIYUN_COM_GPU_MEM_CONTAINER": str(len(physical)),
        "ALIYUN_COM_GPU_MEM_DEV": str(per_gpu),
    }


def preferred(available: list[str], must_include: list[str], size: int, physical: dict) -> list[str]:
    """k8s-device-plugin's choice: replicas from the GPUs least shared so far, else device order."""
    chosen = list(must_include)
    candidates = [device for device in available if device not in chosen]
    if not any("::" in device for device in candidates):
        return (chosen + candidates)[:size]
    free_of = {}
    for device in available:
        free_of[physical.get(device, device)] = free_of.get(physical.get(device, device), 0) + 1
    used = {uuid: 0 for uuid in free_of}
    for device in chosen:
        used[physical.get(device, device)] = used.get(physical.get(device, device), 0) + 1
    while len(chosen) < size and candidates:
        # Fewest taken in this request, then most replicas still free on that GPU.
        best = min(candidates, key=lambda d: (used[physical.get(d, d)], -free_of[physical.get(d, d)], d))
        chosen.append(best)
        candidates.remove(best)
        used[physical.get(best, best)] += 1
    return chosen


class ResourceServer:
    """One resource's DevicePlugin service."""

    def __init__(self, resource: str, folder: Path, log) -> None:
        self.resource, self.folder, self.log = resource, folder, log
        self.path = folder / socket_name(resource)
        self.devices: list = []  # (device ID, health, physical UUID)
        self.version = 0
        self.changed = threading.Condition()
        self.stopping = False
        self.server = None
        self.cdi = False  # CDI devices instead of environment variables in Allocate

    def set_devices(self, devices: list, cdi: bool = False) -> None:
        self.cdi = cdi
        with self.changed:
            if devices != self.devices:
                self.devices = list(devices)
                self.version += 1
                self.changed.notify_all()

    def start(self) -> None:
        self.path.unlink(missing_ok=True)
        self.stopping = False
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        unary = grpc.unary_unary_rpc_method_handler
        handlers = {
            "GetDevicePluginOptions": unary(
                self.options, messages["Empty"].FromString, messages["DevicePluginOptions"].SerializeToString
            ),
            "ListAndWatch": grpc.unary_stream_rpc_method_handler(
                self.list_and_watch, messages["Empty"].FromString, messages["ListAndWatchResponse"].SerializeToString
            ),
            "GetPreferredAllocation": unary(
                self.preferred_allocation,
                messages["PreferredAllocationRequest"].FromString,
                messages["PreferredAllocationResponse"].SerializeToString,
            ),
            "Allocate": unary(
                self.allocate, messages["AllocateRequest"].FromString, messages["AllocateResponse"].SerializeToString
            ),
            "PreStartContainer": unary(
                self.pre_start,
                messages["PreStartContainerRequest"].FromString,
                messages["PreStartContainerResponse"].SerializeToString,
            ),
        }
        self.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(DEVICE_PLUGIN_SERVICE, handlers),))
        self.server.add_insecure_port(f"unix:{self.path}")
        self.server.start()

    def register(self) -> None:
        with grpc.insecure_channel(f"unix:{self.folder / KUBELET_SOCKET}") as channel:
            call = channel.unary_unary(
                REGISTER,
                request_serializer=messages["RegisterRequest"].SerializeToString,
                response_deserializer=messages["Empty"].FromString,
            )
            call(
                messages["RegisterRequest"](
                    version=VERSION,
                    endpoint=self.path.name,
                    resource_name=self.resource,
                    options=messages["DevicePluginOptions"](
                        get_preferred_allocation_available=preferred_allocation(self.resource)
                    ),
                ),
                timeout=5,
            )

    def stop(self) -> None:
        with self.changed:
            self.stopping = True
            self.changed.notify_all()
        if self.server is not None:
            self.server.stop(grace=None).wait(5)
            self.server = None
        self.path.unlink(missing_ok=True)

    # ---------------------------------------------------------------- the service

    def options(self, _request, _context):
        return messages["DevicePluginOptions"](get_preferred_allocation_available=preferred_allocation(self.resource))

    def list_and_watch(self, _request, context):
        sent = -1
        while context.is_active():
            with self.changed:
                if self.stopping:
                    return
                if sent == self.version:
                    self.changed.wait(1)
                    continue
                sent, devices = self.version, list(self.devices)
            yield messages["ListAndWatchResponse"](
                devices=[messages["Device"](ID=device_id, health=health) for device_id, health, _uuid in devices]
            )

    def preferred_allocation(self, request, _context):
        physical = {device_id: uuid for device_id, _health, uuid in self.devices}
        responses = [
            messages["ContainerPreferredAllocationResponse"](
                deviceIDs=preferred(
                    list(item.available_deviceIDs), list(item.must_include_deviceIDs), item.allocation_size, physical
                )
            )
            for item in request.container_requests
        ]
        return messages["PreferredAllocationResponse"](container_responses=responses)

    def allocate(self, request, context):
        physical = {device_id: uuid for device_id, _health, uuid in self.devices}
        pod_request = sum(len(item.devices_ids) for item in request.container_requests)
        responses = []
        for item in request.container_requests:
            unknown = [device for device in item.devices_ids if device not in physical]
            if unknown:
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, f"invalid allocation request: unknown device: {unknown[0]}"
                )
            uuids = list(dict.fromkeys(physical[device] for device in item.devices_ids))
            if self.cdi:
                names = [f"{CDI_KIND}={device_uuid}" for device_uuid in uuids]
                # The same line as below (harness checks read it), the strategy after it.
                self.log(f"allocate {self.resource} {list(item.devices_ids)} -> {','.join(uuids)}")
                self.log("  as CDI devices")
                responses.append(
                    messages["ContainerAllocateResponse"](
                        annotations={CDI_ANNOTATION + uuid.uuid4().hex: ",".join(names)},
                        cdi_devices=[messages["CDIDevice"](name=name) for name in names],
                    )
                )
                continue
            envs = {"NVIDIA_VISIBLE_DEVICES": ",".join(uuids)}
            if self.resource == GPUSHARE_MEMORY:
                envs = gpushare_envs([physical[device] for device in item.devices_ids], pod_request, self.devices)
            self.log(f"allocate {self.resource} {list(item.devices_ids)} -> {envs['NVIDIA_VISIBLE_DEVICES']}")
            responses.append(
                messages["ContainerAllocateResponse"](
                    envs={**envs, **POD_ENVS},
                    mounts=[messages["Mount"](container_path=POD_STATE_DIR, host_path=NODE_STATE_DIR, read_only=True)],
                )
            )
        return messages["AllocateResponse"](container_responses=responses)

    def pre_start(self, _request, _context):
        return messages["PreStartContainerResponse"]()


def short_alias(folder: Path) -> Path:
    """A unix socket path has at most 107 bytes: a deep folder is reached through a symbolic link
    in /tmp named after it (sockets are bound and dialled through it; the kubelet sees the real one)."""
    if len(str(folder)) <= 60:
        return folder
    alias = Path(tempfile.gettempdir()) / f"gpuops-dp-{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
    if not alias.is_symlink() or alias.readlink() != folder:
        alias.unlink(missing_ok=True)
        alias.symlink_to(folder)
    return alias


class NodePlugins:
    """Every resource server of one real-kubelet node, its GPU state file and its CDI specification.

    node_dir: the node's folder of tests/harness/kubelet_nodes.py: kubelet/device-plugins (the device-plugins
    folder), gpu/ (mounted at NODE_STATE_DIR) and cdi/ (the node's /var/run/cdi)."""

    def __init__(self, node: str, node_dir: Path, log) -> None:
        self.node, self.state_dir, self.cdi_dir = node, node_dir / "gpu", node_dir / "cdi"
        self.real_folder, self.folder = node_dir / "kubelet/device-plugins", None  # folder: see short_alias
        self.cdi_text = None
        self.log = lambda message: log(f"{node}: device plugin: {message}")
        self.servers: dict[str, ResourceServer] = {}
        self.registered: set = set()
        self.kubelet = None  # (inode, ctime) of the kubelet.sock the servers registered with
        self.state_text = None

    def write_state(self, state: dict) -> None:
        text = json.dumps(state, indent=2, sort_keys=True) + "\n"
        if text == self.state_text:
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        partial = self.state_dir / "state.json.partial"
        partial.write_text(text)
        os.replace(partial, self.state_dir / "state.json")
        self.state_text = text

    def write_cdi_spec(self, uuids: list[str]) -> None:
        """The plugin's CDI specification naming UUIDS; none at all without them (CDI off)."""
        path = self.cdi_dir / CDI_SPEC_FILE
        text = json.dumps(cdi_spec(uuids), indent=2) + "\n" if uuids else ""
        if text == self.cdi_text:
            return
        if text:
            self.cdi_dir.mkdir(parents=True, exist_ok=True)
            partial = self.cdi_dir / (CDI_SPEC_FILE + ".partial")
            partial.write_text(text)
            os.replace(partial, path)
        else:
            path.unlink(missing_ok=True)
        self.cdi_text = text

    def update(self, devices: dict, cdi_resources: set = frozenset()) -> None:
        """Serve exactly `devices` (resource -> [(id, health, uuid)]), registering what is not yet; the resources
        in CDI_RESOURCES are allocated as CDI devices."""
        self.write_cdi_spec(sorted({device[2] for name in cdi_resources for device in devices.get(name, [])}))
        if self.folder is None:
            self.folder = short_alias(self.real_folder)
        try:
            stat = (self.folder / KUBELET_SOCKET).stat()
        except FileNotFoundError:
            stat = None
        kubelet = (stat.st_ino, stat.st_ctime) if stat else None
        if kubelet != self.kubelet:
            # A new kubelet emptied the folder: start every server again and register again.
            if self.kubelet is not None:
                self.log("kubelet.sock changed (kubelet restarted): registering again")
            self.stop()
            self.kubelet = kubelet
        for resource in [name for name in self.servers if name not in devices]:
            self.servers.pop(resource).stop()
            self.registered.discard(resource)
            self.log(f"stopped {resource}")
        for resource, listed in devices.items():
            server = self.servers.get(resource)
            if server is None:
                server = self.servers[resource] = ResourceServer(resource, self.folder, self.log)
                server.start()
            server.set_devices(listed, resource in cdi_resources)
            if kubelet is not None and resource not in self.registered:
                try:
                    server.register()
                except grpc.RpcError as error:
                    self.log(f"register {resource} failed, retrying: {error.code().name} {error.details()}")
                    continue
                self.registered.add(resource)
                self.log(f"registered {resource} ({len(listed)} devices) as {server.path.name}")

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()
        self.servers, self.registered = {}, set()

    def close(self) -> None:
        """At the end of the process: the servers, and the folder's alias if it has one."""
        self.stop()
        if self.folder is not None and self.folder != self.real_folder:
            self.folder.unlink(missing_ok=True)
