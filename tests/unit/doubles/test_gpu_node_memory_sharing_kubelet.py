# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""HAMi's and gpushare's device plugins as the GPU node stand-in serves them to a real kubelet: the
sockets and registrations of their servers, their device ids, what Allocate gives the container,
and the gpushare GPU count the stand-in patches into the node's status (the kubelet does not)."""

import json
import pathlib

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
pytest.importorskip("google.protobuf")
grpc = pytest.importorskip("grpc")
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import (  # noqa: E402
    controller,
    deviceplugin_api,
    hardware,
    kubelet_plugin,
)
from ansible_collections.gpuops.cluster.tests.unit.doubles.test_gpu_node_kubelet_plugin import (  # noqa: E402
    FakeKubelet,
    RecordingPlugins,
)

messages = deviceplugin_api.messages
FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "harness/fixtures"
HAMI_OBJECTS = json.loads((FIXTURES / "hami-2.10.0-device-plugin.json").read_text())
GPUSHARE_DS = json.loads((FIXTURES / "gpushare-device-plugin-ds.json").read_text())[0]


def allocate(method, ids):
    call = method("Allocate", messages["AllocateRequest"], messages["AllocateResponse"])
    request = messages["AllocateRequest"](container_requests=[messages["ContainerAllocateRequest"](devices_ids=ids)])
    return call(request, timeout=5).container_responses[0]


def options(method):
    call = method("GetDevicePluginOptions", messages["Empty"], messages["DevicePluginOptions"])
    return call(messages["Empty"](), timeout=5)


def test_hami_and_gpushare_servers_register_and_allocate_their_gpu(tmp_path):
    folder = tmp_path / "kubelet/device-plugins"
    folder.mkdir(parents=True)
    kubelet = FakeKubelet(folder)
    plugins = kubelet_plugin.NodePlugins("gpu-l4-1", tmp_path, lambda message: None)
    hami = [(f"GPU-{gpu}-{n}", "Healthy", f"GPU-{gpu}") for gpu in "ab" for n in range(3)]
    gpushare = [(f"GPU-{gpu}-_-{n}", "Healthy", str(index)) for index, gpu in enumerate("ab") for n in range(22)]
    try:
        plugins.update({"nvidia.com/gpu": hami, "aliyun.com/gpu-mem": gpushare})
        for _round in range(50):
            if len(kubelet.requests) == 2:
                break
            kubelet.registered.wait(0.1)
        registered = {request.resource_name: request for request in kubelet.requests}
        assert (registered["nvidia.com/gpu"].endpoint, registered["aliyun.com/gpu-mem"].endpoint) == (
            "nvidia-gpu.sock",  # HAMi's getPluginSocketPath: nvidia-<resource name>
            "aliyungpushare.sock",  # gpushare's const.go serverSock
        )
        assert registered["nvidia.com/gpu"].options.get_preferred_allocation_available
        assert not registered["aliyun.com/gpu-mem"].options.get_preferred_allocation_available

        channel, method = kubelet.dial("nvidia-gpu.sock")
        assert allocate(method, ["GPU-b-2"]).envs["NVIDIA_VISIBLE_DEVICES"] == "GPU-b"
        channel.close()

        channel, method = kubelet.dial("aliyungpushare.sock")
        assert not options(method).get_preferred_allocation_available
        envs = allocate(method, ["GPU-b-_-0", "GPU-b-_-7", "GPU-b-_-9"]).envs
        assert {key: envs[key] for key in envs if key != "NVSMI_DOUBLE_LOG"} == {
            "NVIDIA_VISIBLE_DEVICES": "1",  # allocate.go names the GPU by its index
            "ALIYUN_COM_GPU_MEM_IDX": "1",
            "ALIYUN_COM_GPU_MEM_POD": "3",
            "ALIYUN_COM_GPU_MEM_CONTAINER": "3",
            "ALIYUN_COM_GPU_MEM_DEV": "22",
            "NVSMI_DOUBLE_STATE": f"{kubelet_plugin.POD_STATE_DIR}/state.json",
        }
        channel.close()
    finally:
        plugins.close()
        kubelet.stop()


class SharingKubeletCluster:
    """A node the real kubelet registered, labelled for HAMi or gpushare, their objects applied."""

    def __init__(self, labels: dict, objects: list) -> None:
        self.node = {"metadata": {"name": "gpu-l4-1", "labels": dict(labels), "annotations": {}}, "status": {}}
        self.objects, self.status_patches = objects, []

    def nodes(self):
        return {"gpu-l4-1": self.node}

    def register(self, name):
        raise AssertionError("the kubelet registers the node")

    def renew_lease(self, name):
        raise AssertionError("the kubelet renews the lease")

    def patch_status(self, name, status):
        self.status_patches.append(status)
        for key, value in status.items():
            self.node["status"][key] = {**self.node["status"].get(key, {}), **value}

    def patch_labels(self, name, labels):
        self.node["metadata"]["labels"] = {k: v for k, v in labels.items() if v is not None}

    def patch_annotations(self, name, annotations):
        self.node["metadata"]["annotations"].update(annotations)

    def cluster_policy(self):
        return None  # the GPU Operator is not needed by either plugin

    def operator_namespace(self, default):
        return default

    def configmap_data(self, namespace, name):
        for item in self.objects:
            if item["kind"] == "ConfigMap" and item["metadata"]["name"] == name:
                return item["data"]
        return None

    def daemon_sets(self):
        return [item for item in self.objects if item["kind"] == "DaemonSet"]


def run(cluster, tmp_path, passes=2):
    node = hardware.Node("gpu-l4-1", "NVIDIA L4", 2, 23034, (8, 9), "0x27b810de", {}, kubelet=True)
    control = controller.Controller(cluster, {"gpu-l4-1": node}, "gpu-operator", tmp_path)
    recorder = control.plugins["gpu-l4-1"] = RecordingPlugins()
    for _round in range(passes):
        control.reconcile()
    return recorder


def test_a_kubelet_node_gets_hamis_replicas_over_grpc_and_no_status_writes(tmp_path):
    cluster = SharingKubeletCluster({"gpu": "on"}, HAMI_OBJECTS)
    recorder = run(cluster, tmp_path)
    first, second = (gpu["uuid"] for gpu in recorder.states[-1]["gpus"])
    # rm/devices.go GetPluginDevices: <UUID>-<n> for n < deviceSplitCount (10 in the chart).
    assert recorder.updates[-1] == {
        "nvidia.com/gpu": [(f"{uuid}-{n}", "Healthy", uuid) for uuid in (first, second) for n in range(10)]
    }
    assert cluster.status_patches == []
    assert [
        device["id"]
        for device in json.loads(cluster.node["metadata"]["annotations"][controller.sharing_plugins.HAMI_REGISTER])
    ] == [first, second]


def test_a_kubelet_node_gets_gpushares_memory_over_grpc_and_its_gpu_count_patched(tmp_path):
    cluster = SharingKubeletCluster({"gpushare": "true"}, [GPUSHARE_DS])
    recorder = run(cluster, tmp_path)
    first, second = (gpu["uuid"] for gpu in recorder.states[-1]["gpus"])
    assert recorder.updates[-1] == {
        "aliyun.com/gpu-mem": [
            (f"{uuid}-_-{n}", "Healthy", str(i)) for i, uuid in enumerate((first, second)) for n in range(22)
        ]
    }
    # Patched once (patchGPUCount), not again while it holds.
    assert cluster.status_patches == [
        {"capacity": {"aliyun.com/gpu-count": "2"}, "allocatable": {"aliyun.com/gpu-count": "2"}}
    ]
