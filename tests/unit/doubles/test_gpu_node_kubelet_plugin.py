# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's device plugin for real kubelets: the v1beta1 messages, the devices it
advertises (the ids the real plugin uses, the UUIDs the nvidia-smi double shows) and the gRPC
conversation with a kubelet played here by a Registration server on a unix socket."""

import json
import os
import pathlib
import subprocess
import threading
from concurrent import futures

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
pytest.importorskip("google.protobuf")
grpc = pytest.importorskip("grpc")
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import (  # noqa: E402
    deviceplugin_api,
    gpu_state,
    hardware,
    kubelet_plugin,
    mig_parted,
)

messages = deviceplugin_api.messages
REPO = pathlib.Path(__file__).resolve().parents[3]
DOUBLE = REPO / "tests/doubles/nvidia_smi/nvidia-smi"
LGIP = REPO / "tests/fixtures/nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"
TIME_SLICING = {
    "flags": {"migStrategy": "none"},
    "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
}
MIG_LAYOUT = {
    "mig-configs": {"mixed": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "1g.10gb": 2}}]}
}


def node(name="gpu-l4-1", product="NVIDIA L4", count=2, profiles=None) -> hardware.Node:
    return hardware.Node(name, product, count, 23034, (8, 9), "0x27b810de", profiles or {}, kubelet=True)


def a100(count=1) -> hardware.Node:
    profiles = hardware.parse_lgip(LGIP.read_text())
    return hardware.Node("gpu-a100-1", "NVIDIA A100-SXM4-80GB", count, 81920, (8, 0), "0x20b210de", profiles, True)


def test_messages_round_trip_with_map_fields():
    response = messages["AllocateResponse"](
        container_responses=[
            messages["ContainerAllocateResponse"](
                envs={"NVIDIA_VISIBLE_DEVICES": "GPU-1"},
                mounts=[messages["Mount"](host_path="/a", container_path="/b")],
            )
        ]
    )
    parsed = messages["AllocateResponse"].FromString(response.SerializeToString())
    assert parsed.container_responses[0].envs["NVIDIA_VISIBLE_DEVICES"] == "GPU-1"
    assert parsed.container_responses[0].mounts[0].container_path == "/b"
    # Field numbers as in api.proto: RegisterRequest.resource_name is 3, Device.health is 2.
    assert messages["RegisterRequest"].DESCRIPTOR.fields_by_name["resource_name"].number == 3
    assert messages["Device"].DESCRIPTOR.fields_by_name["health"].number == 2


def test_time_slicing_replicas_carry_the_gpu_uuid_and_unhealthy_gpus_are_sent_unhealthy():
    l4 = node()
    gpus = mig_parted.initial(l4)
    state = gpu_state.render(l4, gpus)
    devices = gpu_state.plugin_devices(l4, gpus, state, TIME_SLICING, unhealthy={1})
    first, second = state["gpus"][0]["uuid"], state["gpus"][1]["uuid"]
    assert devices == {
        "nvidia.com/gpu": [
            (f"{first}::0", "Healthy", first),
            (f"{first}::1", "Healthy", first),
            (f"{second}::0", "Unhealthy", second),
            (f"{second}::1", "Unhealthy", second),
        ]
    }


def test_mig_devices_are_the_ones_the_nvidia_smi_double_lists(tmp_path):
    gpu = a100()
    gpus = mig_parted.apply(MIG_LAYOUT, "mixed", gpu, mig_parted.initial(gpu))
    state = gpu_state.render(gpu, gpus)
    devices = gpu_state.plugin_devices(gpu, gpus, state, {"flags": {"migStrategy": "mixed"}}, set())
    assert sorted(devices) == ["nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"]
    (tmp_path / "state.json").write_text(json.dumps(state))
    environment = {**os.environ, "NVSMI_DOUBLE_STATE": str(tmp_path / "state.json")}
    listed = subprocess.run([str(DOUBLE), "-L"], capture_output=True, text=True, env=environment, check=True).stdout
    for resource, entries in devices.items():
        for device_id, _health, uuid in entries:
            assert device_id == uuid and f"MIG {resource.rsplit('-', 1)[1]}" in listed.split(uuid)[0].splitlines()[-1]


def test_the_same_layout_renders_the_same_uuids():
    gpu = a100(count=2)
    gpus = mig_parted.apply(MIG_LAYOUT, "mixed", gpu, mig_parted.initial(gpu))
    assert gpu_state.render(gpu, gpus) == gpu_state.render(gpu, list(gpus))


def test_preferred_allocation_spreads_replicas_over_the_least_shared_gpus():
    physical = {f"{gpu}::{n}": gpu for gpu in ("GPU-a", "GPU-b") for n in range(2)}
    # GPU-a has one replica in use already (only GPU-a::1 is still available).
    assert kubelet_plugin.preferred(["GPU-a::1", "GPU-b::0", "GPU-b::1"], [], 1, physical) == ["GPU-b::0"]
    assert kubelet_plugin.preferred(["GPU-a::0", "GPU-a::1", "GPU-b::0", "GPU-b::1"], [], 2, physical) == [
        "GPU-a::0",
        "GPU-b::0",
    ]
    assert kubelet_plugin.preferred(["GPU-1", "GPU-2", "GPU-3"], ["GPU-3"], 2, {}) == ["GPU-3", "GPU-1"]


class FakeKubelet:
    """The kubelet's Registration service on kubelet.sock; dials back each plugin that registers."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder, self.requests = folder, []
        self.registered = threading.Event()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handler = grpc.unary_unary_rpc_method_handler(
            self.register, messages["RegisterRequest"].FromString, messages["Empty"].SerializeToString
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("v1beta1.Registration", {"Register": handler}),)
        )
        self.server.add_insecure_port(f"unix:{folder / 'kubelet.sock'}")
        self.server.start()

    def register(self, request, _context):
        self.requests.append(request)
        self.registered.set()
        return messages["Empty"]()

    def dial(self, endpoint: str):
        channel = grpc.insecure_channel(f"unix:{self.folder / endpoint}")

        def method(name, request_type, response_type, stream=False):
            kind = channel.unary_stream if stream else channel.unary_unary
            return kind(
                f"/v1beta1.DevicePlugin/{name}",
                request_serializer=request_type.SerializeToString,
                response_deserializer=response_type.FromString,
            )

        return channel, method

    def stop(self):
        self.server.stop(None).wait(5)


def allocate_request(*device_ids):
    """An AllocateRequest of one container asking for DEVICE_IDS."""
    return messages["AllocateRequest"](
        container_requests=[messages["ContainerAllocateRequest"](devices_ids=device_ids)]
    )


def test_registers_streams_changes_allocates_and_registers_again_after_a_kubelet_restart(tmp_path):
    folder = tmp_path / "kubelet/device-plugins"
    folder.mkdir(parents=True)
    kubelet = FakeKubelet(folder)
    plugins = kubelet_plugin.NodePlugins("gpu-l4-1", tmp_path, lambda message: None)
    devices = [("GPU-a::0", "Healthy", "GPU-a"), ("GPU-a::1", "Healthy", "GPU-a")]
    try:
        plugins.update({"nvidia.com/gpu": devices})
        assert kubelet.registered.wait(5)
        request = kubelet.requests[0]
        assert (request.version, request.endpoint, request.resource_name) == (
            "v1beta1",
            "nvidia-gpu.sock",
            "nvidia.com/gpu",
        )
        channel, method = kubelet.dial(request.endpoint)
        stream = method("ListAndWatch", messages["Empty"], messages["ListAndWatchResponse"], stream=True)(
            messages["Empty"](), timeout=10
        )
        first = next(stream)
        assert [(d.ID, d.health) for d in first.devices] == [("GPU-a::0", "Healthy"), ("GPU-a::1", "Healthy")]
        plugins.update({"nvidia.com/gpu": [(d, "Unhealthy", u) for d, _h, u in devices]})
        assert {d.health for d in next(stream).devices} == {"Unhealthy"}
        allocate = method("Allocate", messages["AllocateRequest"], messages["AllocateResponse"])
        answer = allocate(
            allocate_request("GPU-a::1"),
            timeout=5,
        )
        container = answer.container_responses[0]
        assert container.envs["NVIDIA_VISIBLE_DEVICES"] == "GPU-a"
        assert [(m.host_path, m.container_path, m.read_only) for m in container.mounts] == [
            (kubelet_plugin.NODE_STATE_DIR, kubelet_plugin.POD_STATE_DIR, True)
        ]
        with pytest.raises(grpc.RpcError) as refused:
            allocate(
                allocate_request("GPU-x"),
                timeout=5,
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        stream.cancel()
        channel.close()

        # A restarted kubelet empties the folder and listens on a new kubelet.sock.
        kubelet.stop()
        for path in folder.iterdir():
            path.unlink()
        kubelet = FakeKubelet(folder)
        plugins.update({"nvidia.com/gpu": devices})
        assert kubelet.registered.wait(5) and (folder / "nvidia-gpu.sock").exists()
        # A resource that is no longer advertised: its server stops, its socket goes.
        plugins.update({})
        assert not (folder / "nvidia-gpu.sock").exists()
    finally:
        plugins.close()
        kubelet.stop()


def test_with_cdi_allocate_names_cdi_devices_whose_specification_the_plugin_writes(tmp_path):
    folder = tmp_path / "kubelet/device-plugins"
    folder.mkdir(parents=True)
    kubelet = FakeKubelet(folder)
    plugins = kubelet_plugin.NodePlugins("gpu-a100-1", tmp_path, lambda message: None)
    devices = [("MIG-a", "Healthy", "MIG-a"), ("MIG-b", "Healthy", "MIG-b")]
    spec_file = tmp_path / "cdi" / kubelet_plugin.CDI_SPEC_FILE
    try:
        plugins.update({"nvidia.com/gpu": devices}, {"nvidia.com/gpu"})
        assert kubelet.registered.wait(5)
        spec = json.loads(spec_file.read_text())
        assert (spec["kind"], [device["name"] for device in spec["devices"]]) == (
            kubelet_plugin.CDI_KIND,
            ["MIG-a", "MIG-b"],
        )
        assert spec["devices"][1]["containerEdits"]["env"] == ["NVSMI_DOUBLE_VISIBLE_MIG_b=MIG-b"]
        assert spec["containerEdits"]["mounts"][0]["containerPath"] == kubelet_plugin.POD_STATE_DIR
        channel, method = kubelet.dial(kubelet.requests[0].endpoint)
        allocate = method("Allocate", messages["AllocateRequest"], messages["AllocateResponse"])
        answer = allocate(
            allocate_request("MIG-b"),
            timeout=5,
        )
        container = answer.container_responses[0]
        # No environment and no mount: the pod gets its GPU only through containerd's CDI injection.
        assert (dict(container.envs), list(container.mounts)) == ({}, [])
        assert [device.name for device in container.cdi_devices] == ["k8s.device-plugin.nvidia.com/gpu=MIG-b"]
        [(key, value)] = container.annotations.items()
        assert key.startswith("cdi.k8s.io/nvidia-device-plugin_") and value == "k8s.device-plugin.nvidia.com/gpu=MIG-b"
        channel.close()
        # CDI turned off: the specification goes, Allocate names the devices by environment again.
        plugins.update({"nvidia.com/gpu": devices})
        assert not spec_file.exists()
    finally:
        plugins.close()
        kubelet.stop()


def test_a_deep_folder_gets_a_short_alias_for_its_sockets(tmp_path):
    deep = tmp_path / ("x" * 60) / "kubelet/device-plugins"
    deep.mkdir(parents=True)
    plugins = kubelet_plugin.NodePlugins("n", deep.parents[1], lambda message: None)
    plugins.update({"nvidia.com/gpu": [("GPU-a", "Healthy", "GPU-a")]})
    assert plugins.folder.is_symlink() and plugins.folder.resolve() == deep and len(str(plugins.folder)) < 60
    assert (deep / "nvidia-gpu.sock").is_socket()
    plugins.close()
    assert not plugins.folder.exists() and not (deep / "nvidia-gpu.sock").exists()


def test_the_gpu_state_file_is_rewritten_only_when_it_changes(tmp_path):
    plugins = kubelet_plugin.NodePlugins("n", tmp_path, lambda message: None)
    plugins.write_state({"gpus": []})
    written = (tmp_path / "gpu/state.json").stat().st_ino
    plugins.write_state({"gpus": []})
    assert (tmp_path / "gpu/state.json").stat().st_ino == written
    plugins.write_state({"gpus": [1]})
    assert (tmp_path / "gpu/state.json").stat().st_ino != written


class RecordingPlugins:
    def __init__(self) -> None:
        self.updates, self.states = [], []

    def update(self, devices, cdi_resources=frozenset()):
        self.updates.append(devices)
        self.cdi_resources = cdi_resources

    def write_state(self, state):
        self.states.append(state)

    def stop(self):
        pass

    def close(self):
        pass


class KubeletCluster:
    """A cluster whose node the real kubelet registered: the controller may only label it."""

    def __init__(self) -> None:
        self.node = {"metadata": {"name": "gpu-l4-1", "labels": {}, "annotations": {}}, "status": {"capacity": {}}}
        self.policy = {
            "metadata": {"name": "cluster-policy", "annotations": {}},
            "status": {},
            "spec": {"devicePlugin": {"config": {"name": "plugin", "default": "ts"}}},
        }
        self.calls = []

    def nodes(self):
        return {"gpu-l4-1": self.node}

    def register(self, name):
        self.calls.append(("register", name))

    def renew_lease(self, name):
        self.calls.append(("renew_lease", name))

    def patch_status(self, name, status):
        self.calls.append(("patch_status", name))

    def patch_labels(self, name, labels):
        self.node["metadata"]["labels"] = {k: v for k, v in labels.items() if v is not None}

    def cluster_policy(self):
        return self.policy

    def operator_namespace(self, default):
        return default

    def configmap_data(self, namespace, name):
        return {"ts": "version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n"}

    def daemon_sets(self):
        return []  # no memory-sharing device plugin is installed

    def patch_annotations(self, name, annotations):
        raise AssertionError("no memory-sharing device plugin runs here")

    def patch_cluster_policy_status(self, name, status):
        self.policy["status"] = status


def test_a_real_kubelet_node_gets_its_devices_over_grpc_and_no_status_writes(tmp_path):
    from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import controller

    cluster = KubeletCluster()
    control = controller.Controller(cluster, {"gpu-l4-1": node(count=1)}, "gpu-operator", tmp_path)
    recorder = control.plugins["gpu-l4-1"] = RecordingPlugins()
    control.register()
    control.reconcile()
    control.reconcile()
    assert cluster.calls == []  # no Node created, no lease, no nodes/status: the kubelet owns them
    uuid = recorder.states[-1]["gpus"][0]["uuid"]
    assert recorder.updates[-1] == {
        "nvidia.com/gpu": [(f"{uuid}::0", "Healthy", uuid), (f"{uuid}::1", "Healthy", uuid)]
    }
    assert cluster.node["metadata"]["labels"]["nvidia.com/gpu.replicas"] == "2"
    # The ClusterPolicy's cdi.enabled defaults to true (its CRD): NVIDIA's plugin names CDI devices.
    assert recorder.cdi_resources == {"nvidia.com/gpu"}
    cluster.policy["spec"]["cdi"] = {"enabled": False}
    control.reconcile()
    assert recorder.cdi_resources == set()
    cluster.node["metadata"]["annotations"]["gpuops.test/unhealthy-gpus"] = "1"
    control.reconcile()
    assert {health for _id, health, _uuid in recorder.updates[-1]["nvidia.com/gpu"]} == {"Unhealthy"}
