# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's reconcile passes on an in-memory cluster: mig-manager, the device plugin's
config reloads, and the faults its annotations inject."""

import pathlib

import pytest
import yaml

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import controller, hardware

LGIP = pathlib.Path(__file__).resolve().parents[2] / "fixtures/nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"
MIG_CONFIG = {"version": "v1", "mig-configs": {
    "all-disabled": [{"devices": "all", "mig-enabled": False}],
    "all-1g.10gb": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}}  # fmt: skip
PLUGIN_CONFIG = {
    "default": "version: v1\nflags: {migStrategy: single}\n",
    "ts": "version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n",
}


class FakeCluster:
    """The few calls the controller makes, on dicts."""

    def __init__(self) -> None:
        self.node_objects: dict = {}
        self.policy = {"metadata": {"name": "cluster-policy", "annotations": {}}, "status": {}, "spec": {
            "migManager": {"enabled": True, "config": {"name": "mig"}}, "mig": {"strategy": "single"},
            "devicePlugin": {"config": {"name": "plugin", "default": "default"}}}}  # fmt: skip
        self.configmaps = {"mig": {"config.yaml": yaml.safe_dump(MIG_CONFIG)}, "plugin": dict(PLUGIN_CONFIG)}

    def nodes(self):
        return self.node_objects

    def register(self, name):
        self.node_objects[name] = {"metadata": {"name": name, "labels": {}, "annotations": {}}, "status": {}}

    def renew_lease(self, name):
        pass

    def patch_labels(self, name, labels):
        current = self.node_objects[name]["metadata"]["labels"]
        for key, value in labels.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value

    def patch_status(self, name, status):
        self.node_objects[name]["status"].update(status)

    def cluster_policy(self):
        return self.policy

    def patch_cluster_policy_status(self, name, status):
        self.policy["status"] = status

    def operator_namespace(self, default):
        return default

    def configmap_data(self, namespace, name):
        return self.configmaps.get(name)

    def daemon_sets(self):
        return []  # no memory-sharing device plugin is installed

    def patch_annotations(self, name, annotations):
        raise AssertionError("no memory-sharing device plugin runs here")


@pytest.fixture
def setup(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(controller.time, "monotonic", lambda: clock[0])
    nodes = {"gpu-a100-1": hardware.Node("gpu-a100-1", "NVIDIA A100-SXM4-80GB", 8, 81920, (8, 0), "0x20b210de",
                                         hardware.parse_lgip(LGIP.read_text()))}  # fmt: skip
    cluster = FakeCluster()
    stand_in = controller.Controller(cluster, nodes, "gpu-operator")
    stand_in.register()

    def passes(count=1):
        for _round in range(count):
            stand_in.reconcile()
            clock[0] += 1.5

    return cluster, cluster.node_objects["gpu-a100-1"], passes


def test_mig_manager_goes_pending_then_success_and_the_plugin_follows(setup):
    cluster, node, passes = setup
    passes(3)  # the operator's default layout (all-disabled) is applied first
    assert node["metadata"]["labels"]["nvidia.com/mig.config"] == "all-disabled"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    node["metadata"]["labels"]["nvidia.com/mig.config"] = "all-1g.10gb"
    passes()
    labels = node["metadata"]["labels"]
    assert labels["nvidia.com/mig.config.state"] == "pending"
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "paused-for-mig-change"
    passes()
    assert labels["nvidia.com/mig.config.state"] == "success"
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "true"
    passes()
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "56"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    assert cluster.policy["status"]["state"] == "ready"


def test_mig_manager_failure_is_injected_and_does_not_retry(setup):
    _cluster, node, passes = setup
    node["metadata"]["annotations"]["gpuops.test/mig-manager-fail"] = "the GPUs are in use"
    node["metadata"]["labels"]["nvidia.com/mig.config"] = "all-1g.10gb"
    passes(3)
    assert node["metadata"]["labels"]["nvidia.com/mig.config.state"] == "failed"
    del node["metadata"]["annotations"]["gpuops.test/mig-manager-fail"]
    passes(3)  # the label did not change: mig-manager does not try again
    assert node["metadata"]["labels"]["nvidia.com/mig.config.state"] == "failed"


def test_the_plugin_reloads_on_a_label_change_only(setup):
    cluster, node, passes = setup
    passes(3)
    node["metadata"]["labels"]["nvidia.com/device-plugin.config"] = "ts"
    passes()
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "16"
    cluster.configmaps["plugin"]["ts"] = PLUGIN_CONFIG["ts"].replace("replicas: 2", "replicas: 4")
    passes(2)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "16"  # same label: the old config still runs
    node["metadata"]["labels"]["nvidia.com/device-plugin.config"] = "missing"
    passes(2)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "16"  # an unknown key keeps the running config


def test_unhealthy_gpus_and_an_operand_that_never_becomes_ready(setup):
    cluster, node, passes = setup
    passes(3)
    node["metadata"]["annotations"]["gpuops.test/unhealthy-gpus"] = "2"
    cluster.policy["metadata"]["annotations"]["gpuops.test/operand-never-ready"] = "state-device-plugin"
    passes()
    assert (node["status"]["capacity"]["nvidia.com/gpu"], node["status"]["allocatable"]["nvidia.com/gpu"]) == (
        "8",
        "6",
    )
    status = cluster.policy["status"]
    assert status["state"] == "notReady"
    assert {condition["type"]: condition["reason"] for condition in status["conditions"]} == {
        "Ready": "OperandNotReady",
        "Error": "OperandNotReady",
    }
    assert "state-device-plugin" in status["conditions"][0]["message"]


def test_uninstalling_the_operator_removes_labels_and_zeroes_resources(setup):
    cluster, node, passes = setup
    passes(3)
    cluster.policy = None
    passes()
    assert not [key for key in node["metadata"]["labels"] if key.startswith("nvidia.com/gpu.product")]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "0"
