# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA's DRA driver's kubelet plugin towards a real kubelet, as its cmd/gpu-kubelet-plugin does through
k8s.io/dynamic-resource-allocation's kubeletplugin helper:

- registration: a gRPC server on `plugins_registry/gpu.nvidia.com-reg.sock` in the node's kubelet folder, which the
  kubelet's plugin watcher finds; GetInfo answers type DRAPlugin, name gpu.nvidia.com, the endpoint
  `/var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock` as the kubelet sees it, and the service version v1.DRAPlugin;
- the DRA service on that endpoint: NodePrepareResources reads each claim from the API, takes the allocation results
  of driver gpu.nvidia.com in the node's pool, writes one transient CDI specification per claim in the node's
  /var/run/cdi (`k8s.gpu.nvidia.com-claim_<claim UID>.yaml`, kind k8s.gpu.nvidia.com/claim, a device
  `<claim UID>-<device name>` per allocated device: the driver's cdi.go CreateClaimSpecFile, GetClaimDeviceName),
  and answers each device with its CDI id `k8s.gpu.nvidia.com/claim=<claim UID>-<device name>`, which the kubelet
  hands to containerd; NodeUnprepareResources deletes the claim's specification.

As for the device plugin (kubelet_plugin.py), a device's container edits are the nvidia-smi double's: the variable
NVSMI_DOUBLE_VISIBLE_<UUID> of the GPU or MIG device and the node's GPU state mounted read-only, where the real
specification injects /dev/nvidia* and the driver's files. Not played: sharing settings (GpuConfig), MPS, health,
checkpoints across restarts.
"""

import json
import os
import threading
from concurrent import futures
from pathlib import Path

import grpc

from .dra_api import (
    DRA_SERVICE,
    PLUGIN_TYPE,
    REGISTRATION_SERVICE,
    SUPPORTED_VERSION,
    dra,
    registration,
)
from .dra_plugin import DRIVER
from .kubelet_plugin import cdi_spec, short_alias

CDI_VENDOR = "k8s." + DRIVER
CDI_KIND = CDI_VENDOR + "/claim"
# The endpoint as the kubelet sees it: the node's /var/lib/kubelet is its kubelet/ folder.
KUBELET_ENDPOINT = f"/var/lib/kubelet/plugins/{DRIVER}/dra.sock"


def cdi_device_name(claim_uid: str, device: str) -> str:
    return f"{claim_uid}-{device}"


def spec_file_name(claim_uid: str) -> str:
    """cdiapi.GenerateTransientSpecName(vendor, class, claimUID), written as YAML."""
    return f"{CDI_VENDOR}-claim_{claim_uid}.yaml"


def allocated(claim: dict, node: str) -> list:
    """The allocation results of the claim that are this driver's devices in NODE's pool."""
    results = ((((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or []
    return [result for result in results if result.get("driver") == DRIVER and result.get("pool") == node]


def _unary(method, messages: dict, request: str, response: str | None = None):
    """A unary handler of METHOD taking message REQUEST, answering RESPONSE (default: REQUEST's <name>Response,
    the DRA service's names: NodePrepareResources takes NodePrepareResourcesRequest)."""
    if response is None:
        request, response = request + "Request", request + "Response"
    return grpc.unary_unary_rpc_method_handler(
        method,
        request_deserializer=messages[request].FromString,
        response_serializer=messages[response].SerializeToString,
    )


class DraNodePlugin:
    """The kubelet plugin of one real-kubelet node. READ_CLAIM(namespace, name) returns a ResourceClaim as the API
    does; devices go in with set_devices as the published ResourceSlice holds them."""

    def __init__(self, node: str, node_dir: Path, read_claim, log) -> None:
        self.node, self.read_claim = node, read_claim
        self.log = lambda message: log(f"{node}: DRA kubelet plugin: {message}")
        self.registry_dir = node_dir / "kubelet" / "plugins_registry"
        self.plugin_dir = node_dir / "kubelet" / "plugins" / DRIVER
        self.cdi_dir = node_dir / "cdi"
        self.uuids: dict[str, str] = {}  # device name -> GPU or MIG UUID
        self.lock = threading.Lock()
        self.servers: list = []
        self.sockets: list = []
        self.aliases: list = []  # short_alias links in /tmp, removed with the sockets

    def set_devices(self, devices: list) -> None:
        with self.lock:
            self.uuids = {device["name"]: device["attributes"]["uuid"]["string"] for device in devices}

    def start(self) -> None:
        dra_handlers = {
            "NodePrepareResources": _unary(self.prepare, dra, "NodePrepareResources"),
            "NodeUnprepareResources": _unary(self.unprepare, dra, "NodeUnprepareResources"),
        }
        registration_handlers = {
            "GetInfo": _unary(self.info, registration, "InfoRequest", "PluginInfo"),
            "NotifyRegistrationStatus": _unary(
                self.notified, registration, "RegistrationStatus", "RegistrationStatusResponse"
            ),
        }
        # The DRA service first: the kubelet dials the endpoint as soon as it has read the registration.
        for folder, name, service, handlers in (
            (self.plugin_dir, "dra.sock", DRA_SERVICE, dra_handlers),
            (self.registry_dir, f"{DRIVER}-reg.sock", REGISTRATION_SERVICE, registration_handlers),
        ):
            folder.mkdir(parents=True, exist_ok=True)
            alias = short_alias(folder)
            if alias != folder:
                self.aliases.append(alias)
            path = alias / name
            path.unlink(missing_ok=True)
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
            server.add_insecure_port(f"unix:{path}")
            server.start()
            self.servers.append(server)
            self.sockets.append(folder / name)
        self.log("serving; registration socket written")

    def stop(self) -> None:
        for server in self.servers:
            server.stop(grace=None)
        for path in [*self.sockets, *self.aliases]:
            path.unlink(missing_ok=True)
        self.servers, self.sockets, self.aliases = [], [], []

    def info(self, _request, _context):
        return registration["PluginInfo"](
            type=PLUGIN_TYPE, name=DRIVER, endpoint=KUBELET_ENDPOINT, supported_versions=[SUPPORTED_VERSION]
        )

    def notified(self, request, _context):
        state = "registered" if request.plugin_registered else f"not registered: {request.error}"
        self.log(f"the kubelet says the plugin is {state}")
        return registration["RegistrationStatusResponse"]()

    def prepare(self, request, _context):
        response = dra["NodePrepareResourcesResponse"]()
        for claim in request.claims:
            answer = response.claims[claim.uid]
            try:
                devices = self._prepare_claim(claim)
            except (LookupError, OSError, ValueError) as error:
                answer.error = f"prepare claim {claim.namespace}/{claim.name}: {error}"
                self.log(answer.error)
                continue
            answer.devices.extend(devices)
        return response

    def _prepare_claim(self, claim) -> list:
        found = self.read_claim(claim.namespace, claim.name)
        if found is None or found["metadata"].get("uid") != claim.uid:
            raise LookupError(f"ResourceClaim with UID {claim.uid} not found")
        results = allocated(found, self.node)
        with self.lock:
            missing = [result["device"] for result in results if result["device"] not in self.uuids]
            if missing:
                raise LookupError(f"devices {', '.join(missing)} are not this node's")
            uuids = {self.uuids[result["device"]]: cdi_device_name(claim.uid, result["device"]) for result in results}
        self._write_spec(claim.uid, uuids)
        self.log(f"prepared claim {claim.namespace}/{claim.name}: {', '.join(r['device'] for r in results)}")
        return [
            dra["Device"](
                request_names=[result["request"]],
                pool_name=result["pool"],
                device_name=result["device"],
                cdi_device_ids=[f"{CDI_KIND}={cdi_device_name(claim.uid, result['device'])}"],
            )
            for result in results
        ]

    def _write_spec(self, claim_uid: str, names_by_uuid: dict) -> None:
        self.cdi_dir.mkdir(parents=True, exist_ok=True)
        path = self.cdi_dir / spec_file_name(claim_uid)
        partial = path.with_name(path.name + ".partial")
        # JSON is YAML: containerd's CDI cache reads the .yaml file.
        partial.write_text(json.dumps(cdi_spec(list(names_by_uuid), CDI_KIND, names_by_uuid), indent=2) + "\n")
        os.replace(partial, path)

    def unprepare(self, request, _context):
        response = dra["NodeUnprepareResourcesResponse"]()
        for claim in request.claims:
            (self.cdi_dir / spec_file_name(claim.uid)).unlink(missing_ok=True)
            response.claims[claim.uid].error = ""
            self.log(f"unprepared claim {claim.namespace}/{claim.name}")
        return response
