# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in playing HAMi's and gpushare's device plugins from their objects in the
cluster (fixtures: chart hami-2.10.0 rendered, gpushare's device-plugin-ds.yaml), on an in-memory
cluster: where they run, the settings they read, what they advertise and annotate, and NVIDIA's
device plugin leaving the nodes whose deploy label is `false`."""

import copy
import json
import pathlib

import pytest
import yaml

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import controller, gpu_state, hardware, mig_parted

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
HAMI_OBJECTS = json.loads((FIXTURES / "hami-2.10.0-device-plugin.json").read_text())
GPUSHARE_DS = json.loads((FIXTURES / "gpushare-device-plugin-ds.json").read_text())[0]
L4 = hardware.Node("gpu-l4-1", "NVIDIA L4", 4, 23034, (8, 9), "0x27b810de")
REGISTER = "hami.io/node-nvidia-register"


class FakeCluster:
    """The calls the stand-in makes, on dicts; ConfigMaps and DaemonSets as `kubectl apply` left them."""

    def __init__(self, objects=()) -> None:
        self.node_objects: dict = {}
        self.policy = {"metadata": {"name": "cluster-policy", "annotations": {}}, "status": {}, "spec": {}}
        self.configmaps: dict = {}
        self.daemonsets: list = []
        for item in copy.deepcopy(list(objects)):
            self.apply(item)

    def apply(self, item: dict) -> None:
        if item["kind"] == "ConfigMap":
            self.configmaps[(item["metadata"]["namespace"], item["metadata"]["name"])] = item["data"]
        else:
            self.daemonsets.append(item)

    def nodes(self):
        return self.node_objects

    def register(self, name):
        self.node_objects[name] = {"metadata": {"name": name, "labels": {}, "annotations": {}}, "status": {}}

    def renew_lease(self, name):
        pass

    def patch_labels(self, name, labels):
        self._merge(self.node_objects[name]["metadata"]["labels"], labels)

    def patch_annotations(self, name, annotations):
        self._merge(self.node_objects[name]["metadata"]["annotations"], annotations)

    def patch_status(self, name, status):
        current = self.node_objects[name]["status"]
        for key, value in status.items():
            current[key] = {**current.get(key, {}), **value} if isinstance(value, dict) else value

    @staticmethod
    def _merge(current, patch):
        for key, value in patch.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value

    def cluster_policy(self):
        return self.policy

    def patch_cluster_policy_status(self, name, status):
        self.policy["status"] = status

    def operator_namespace(self, default):
        return default

    def configmap_data(self, namespace, name):
        return self.configmaps.get((namespace, name))

    def daemon_sets(self):
        return self.daemonsets


def started(cluster: FakeCluster, labels: dict, passes: int = 2):
    stand_in = controller.Controller(cluster, {L4.name: L4}, "gpu-operator")
    stand_in.register()
    node = cluster.node_objects[L4.name]
    node["metadata"]["labels"].update(labels)

    def run(count=passes):
        for _round in range(count):
            stand_in.reconcile()

    run()
    return stand_in, node, run


def uuids() -> list[str]:
    return [gpu["uuid"] for gpu in gpu_state.render(L4, mig_parted.initial(L4))["gpus"]]


HAMI_NODE = {"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"}
GPUSHARE_NODE = {"gpushare": "true", "nvidia.com/gpu.deploy.device-plugin": "false"}


def test_hami_advertises_split_replicas_and_registers_its_gpus_for_its_scheduler():
    cluster = FakeCluster(HAMI_OBJECTS)
    _stand_in, node, _run = started(cluster, HAMI_NODE)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "40"  # 4 GPUs x deviceSplitCount 10
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "40"
    # register.go + device.MarshalNodeDevices: Go's json, zero values (index 0, numa 0) left out.
    first, second = uuids()[:2]
    text = node["metadata"]["annotations"][REGISTER]
    assert text.startswith(
        f'[{{"id":"{first}","count":10,"devmem":23034,"devcore":100,"type":"NVIDIA L4","mode":"hami-core",'
        f'"health":true}},{{"id":"{second}","index":1,"count":10,'
    )
    assert [(device.get("index", 0), device["devmem"]) for device in json.loads(text)] == [(i, 23034) for i in range(4)]
    # GFD still runs on the node and labels the whole GPUs; NVIDIA's plugin does not run.
    labels = node["metadata"]["labels"]
    assert (labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.replicas"]) == ("4", "1")
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "false"


def test_hami_reads_its_config_file_and_lets_the_nodes_own_nodeconfig_entry_win():
    objects = copy.deepcopy(HAMI_OBJECTS)
    device_config = next(item for item in objects if item["metadata"]["name"] == "hami-scheduler-device")
    nvidia = yaml.safe_load(device_config["data"]["device-config.yaml"])
    nvidia["nvidia"]["deviceSplitCount"] = 5
    device_config["data"]["device-config.yaml"] = yaml.safe_dump(nvidia)
    cluster = FakeCluster(objects)
    _stand_in, node, run = started(cluster, HAMI_NODE)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "20"
    # The chart's example entry names another node: it changes nothing here.
    node_config = {"nodeconfig": [
        {"name": "your-node-name", "devicesplitcount": 3},
        {"name": "gpu-l4-1", "devicesplitcount": 4, "devicememoryscaling": 1.5, "devicecorescaling": 0}]}  # fmt: skip
    cluster.configmaps[("kube-system", "hami-device-plugin")]["config.json"] = json.dumps(node_config)
    run()
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "16"
    registered = json.loads(node["metadata"]["annotations"][REGISTER])
    # devmem int32(23034 * 1.5); a devicecorescaling of 0 leaves the file's 1 (100 cores).
    assert {(device["count"], device["devmem"], device["devcore"]) for device in registered} == {(4, 34551, 100)}


def test_hami_runs_only_where_its_daemonset_selects_and_nvidia_stops_on_deploy_false():
    cluster = FakeCluster(HAMI_OBJECTS)
    _stand_in, node, run = started(cluster, {"nvidia.com/gpu.deploy.device-plugin": "false"})
    # No gpu=on: HAMi does not run; deploy label false: NVIDIA's plugin does not either.
    assert REGISTER not in node["metadata"]["annotations"]
    assert node["status"].get("capacity", {}).get("nvidia.com/gpu", "0") == "0"
    assert node["metadata"]["labels"]["nvidia.com/gpu.count"] == "4"  # GFD runs still
    node["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] = "true"
    run()
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "4"  # NVIDIA's plugin: whole GPUs
    cluster.daemonsets.clear()
    node["metadata"]["labels"].update(HAMI_NODE)
    run()
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "0"  # neither plugin: the kubelet keeps 0


def test_hami_without_its_config_file_advertises_nothing_and_says_why(capsys):
    objects = [item for item in HAMI_OBJECTS if item["metadata"]["name"] != "hami-scheduler-device"]
    _stand_in, node, _run = started(FakeCluster(objects), HAMI_NODE)
    assert node["status"].get("capacity", {}).get("nvidia.com/gpu", "0") == "0"
    assert "config file /device-config.yaml not found" in capsys.readouterr().err


def test_unhealthy_gpus_leave_hamis_allocatable_and_are_registered_unhealthy():
    cluster = FakeCluster(HAMI_OBJECTS)
    _stand_in, node, run = started(cluster, HAMI_NODE)
    node["metadata"]["annotations"]["gpuops.test/unhealthy-gpus"] = "1"
    run()
    assert (node["status"]["capacity"]["nvidia.com/gpu"], node["status"]["allocatable"]["nvidia.com/gpu"]) == (
        "40",
        "30",
    )
    assert [device.get("health", False) for device in json.loads(node["metadata"]["annotations"][REGISTER])] == [
        True,
        True,
        True,
        False,
    ]


def test_gpushare_advertises_gib_per_gpu_and_patches_the_gpu_count():
    cluster = FakeCluster([GPUSHARE_DS])
    _stand_in, node, run = started(cluster, GPUSHARE_NODE)
    status = node["status"]
    # --memory-unit=GiB: 23034 MiB // 1024 = 22 fake devices per GPU, 4 GPUs.
    assert (status["capacity"]["aliyun.com/gpu-mem"], status["allocatable"]["aliyun.com/gpu-mem"]) == ("88", "88")
    assert (status["capacity"]["aliyun.com/gpu-count"], status["allocatable"]["aliyun.com/gpu-count"]) == ("4", "4")
    assert status.get("capacity", {}).get("nvidia.com/gpu", "0") == "0"
    node["metadata"]["annotations"]["gpuops.test/unhealthy-gpus"] = "2"
    run()
    assert (status["capacity"]["aliyun.com/gpu-mem"], status["allocatable"]["aliyun.com/gpu-mem"]) == ("88", "44")
    # The DaemonSet is deleted: gpu-mem drops to 0 as the kubelet keeps it; the patched count stays.
    cluster.daemonsets.clear()
    run()
    assert (status["capacity"]["aliyun.com/gpu-mem"], status["capacity"]["aliyun.com/gpu-count"]) == ("0", "4")


def test_gpushare_in_mib_counts_every_mib():
    daemonset = copy.deepcopy(GPUSHARE_DS)
    command = daemonset["spec"]["template"]["spec"]["containers"][0]["command"]
    command[command.index("--memory-unit=GiB")] = "--memory-unit=MiB"
    _stand_in, node, _run = started(FakeCluster([daemonset]), GPUSHARE_NODE)
    assert node["status"]["capacity"]["aliyun.com/gpu-mem"] == str(4 * 23034)


def test_gpushare_needs_its_node_label():
    _stand_in, node, _run = started(FakeCluster([GPUSHARE_DS]), {"gpushare": "false"})
    assert "aliyun.com/gpu-mem" not in node["status"].get("capacity", {})
    assert "aliyun.com/gpu-count" not in node["status"].get("capacity", {})


def test_nvidia_and_hami_on_one_node_is_reported_and_hamis_devices_are_served(capsys):
    cluster = FakeCluster(HAMI_OBJECTS)
    _stand_in, node, _run = started(cluster, {"gpu": "on"})  # the deploy label stays true
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "40"
    assert "NVIDIA's device plugin and a memory-sharing one both serve ['nvidia.com/gpu']" in capsys.readouterr().err
