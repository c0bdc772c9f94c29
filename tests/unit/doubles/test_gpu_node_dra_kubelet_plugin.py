# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's DRA kubelet plugin over gRPC (tests/doubles/gpu_node/dra_kubelet_plugin.py), called as
the kubelet calls it (k8s.io/kubelet v0.36.3 pluginregistration/v1 and dra/v1): registration, prepare with the CDI
specification containerd reads, unprepare."""

import json

import pytest

pytest.importorskip("google.protobuf")
grpc = pytest.importorskip("grpc")
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import (  # noqa: E402
    dra_plugin,
    gpu_state,
    hardware,
)
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.dra_api import (  # noqa: E402
    DRA_SERVICE,
    REGISTRATION_SERVICE,
    dra,
    registration,
)
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.dra_kubelet_plugin import DraNodePlugin  # noqa: E402
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.kubelet_plugin import short_alias  # noqa: E402
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.mig_parted import Gpu  # noqa: E402

NODE = hardware.Node("gpu-dra-1", "NVIDIA L4", 2, 23034, (8, 9), "0x27b810de")
UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


def claim(results, uid=UID):
    return {
        "metadata": {"name": "gpu-claim", "namespace": "default", "uid": uid},
        "status": {"allocation": {"devices": {"results": results}}},
    }


@pytest.fixture
def plugin(tmp_path):
    claims = {}
    logged = []
    served = DraNodePlugin(NODE.name, tmp_path / NODE.name, lambda ns, name: claims.get((ns, name)), logged.append)
    state = gpu_state.render(NODE, [Gpu(0), Gpu(1)])
    devices = dra_plugin.devices(NODE, state, gpu_state.mig_instances)
    served.set_devices(devices)
    served.start()
    try:
        yield served, claims, {device["name"]: device["attributes"]["uuid"]["string"] for device in devices}, logged
    finally:
        served.stop()


def call(folder, socket, service, method, request, response_type):
    with grpc.insecure_channel(f"unix:{short_alias(folder) / socket}") as channel:
        stub = channel.unary_unary(
            f"/{service}/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=response_type.FromString,
        )
        return stub(request, timeout=5)


def test_the_kubelet_finds_a_dra_plugin_of_version_v1(plugin):
    served, _claims, _uuids, logged = plugin
    info = call(served.registry_dir, "gpu.nvidia.com-reg.sock", REGISTRATION_SERVICE, "GetInfo",
                registration["InfoRequest"](), registration["PluginInfo"])  # fmt: skip

    assert (info.type, info.name, info.endpoint, list(info.supported_versions)) == (
        "DRAPlugin",
        "gpu.nvidia.com",
        "/var/lib/kubelet/plugins/gpu.nvidia.com/dra.sock",
        ["v1.DRAPlugin"],
    )
    status = registration["RegistrationStatus"](plugin_registered=True)
    call(served.registry_dir, "gpu.nvidia.com-reg.sock", REGISTRATION_SERVICE, "NotifyRegistrationStatus", status,
         registration["RegistrationStatusResponse"])  # fmt: skip
    assert logged[-1] == "gpu-dra-1: DRA kubelet plugin: the kubelet says the plugin is registered"


def prepare(served, uid=UID):
    request = dra["NodePrepareResourcesRequest"](claims=[dra["Claim"](namespace="default", uid=uid, name="gpu-claim")])
    return call(served.plugin_dir, "dra.sock", DRA_SERVICE, "NodePrepareResources", request,
                dra["NodePrepareResourcesResponse"])  # fmt: skip


def test_prepare_names_cdi_devices_whose_specification_shows_exactly_the_allocated_gpu(plugin):
    served, claims, uuids, _logged = plugin
    claims[("default", "gpu-claim")] = claim(
        [
            {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-dra-1", "device": "gpu-1"},
            # Another driver's device in the same claim is not this plugin's to prepare.
            {"request": "nic", "driver": "nic.example.com", "pool": "gpu-dra-1", "device": "nic-0"},
        ]
    )

    answer = prepare(served).claims[UID]
    assert answer.error == ""
    (device,) = answer.devices
    assert (list(device.request_names), device.pool_name, device.device_name, list(device.cdi_device_ids)) == (
        ["gpu"],
        "gpu-dra-1",
        "gpu-1",
        [f"k8s.gpu.nvidia.com/claim={UID}-gpu-1"],
    )
    spec_path = served.cdi_dir / f"k8s.gpu.nvidia.com-claim_{UID}.yaml"
    spec = json.loads(spec_path.read_text())
    assert spec["kind"] == "k8s.gpu.nvidia.com/claim"
    visible = uuids["gpu-1"]
    assert spec["devices"] == [
        {
            "name": f"{UID}-gpu-1",
            "containerEdits": {"env": [f"NVSMI_DOUBLE_VISIBLE_{visible.replace('-', '_')}={visible}"]},
        }
    ]

    request = dra["NodeUnprepareResourcesRequest"](
        claims=[dra["Claim"](namespace="default", uid=UID, name="gpu-claim")]
    )
    call(served.plugin_dir, "dra.sock", DRA_SERVICE, "NodeUnprepareResources", request,
         dra["NodeUnprepareResourcesResponse"])  # fmt: skip
    assert not spec_path.exists()


def test_a_claim_that_is_gone_or_names_another_nodes_device_is_an_error_of_that_claim(plugin):
    served, claims, _uuids, _logged = plugin
    assert "ResourceClaim with UID" in prepare(served).claims[UID].error

    claims[("default", "gpu-claim")] = claim(
        [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-dra-1", "device": "gpu-7"}]
    )
    assert "devices gpu-7 are not this node's" in prepare(served).claims[UID].error
    assert not served.cdi_dir.exists() or not list(served.cdi_dir.glob("*.yaml"))
