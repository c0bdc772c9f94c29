# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every object the gpu_sharing role sends, computed from a real plan of the example inventory's intent."""

import pathlib
import re

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.gpu_sharing import gpu_sharing_mig_failures
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_sharing import (
    capacity_differences,
    configmap_data,
    describe_differences,
    mig_failure_messages,
    mig_states,
    node_changes,
    stale_keys,
)

ROLE = pathlib.Path(__file__).resolve().parents[4] / "roles" / "gpu_sharing"
L4 = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4}
H100 = {"gpuops_gpu_product": "NVIDIA H100 80GB HBM3", "gpuops_gpu_count": 8}
# ConfigMap data keys (k8s.io/apimachinery validation.IsConfigMapKey).
CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def plan(l4_sharing=None, manager="host", h100_config="all-1g.10gb"):
    nodes = {
        "gpu-l4-1": {"gpuops_mig_strategy": "single", "gpuops_mig_manager": manager, **L4, **(l4_sharing or {})},
        "gpu-h100-1": {
            "gpuops_mig_strategy": "single",
            "gpuops_mig_manager": manager,
            **H100,
            "gpuops_mig_config": h100_config,
        },
    }
    result = plan_cluster(nodes)
    return result.capacity, result.manifests(yaml.safe_dump)


def node(name, labels=None, allocatable=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "status": {"allocatable": allocatable or {}}}


def test_device_plugin_configmap_is_valid_for_the_api():
    capacity, manifests = plan({"gpuops_mps": {"replicas": 4}})
    configmap = manifests["device_plugin_configmap"]
    assert configmap["apiVersion"] == "v1" and configmap["kind"] == "ConfigMap"
    assert configmap["metadata"]["namespace"] == "gpu-operator"
    assert configmap["metadata"]["name"] == "gpuops-device-plugin-config"
    key = capacity["nodes"]["gpu-l4-1"]["labels"]["nvidia.com/device-plugin.config"]
    assert key.startswith("mps-")
    assert set(configmap["data"]) == {"default", key}
    assert all(CONFIGMAP_KEY.match(name) and isinstance(text, str) for name, text in configmap["data"].items())
    assert yaml.safe_load(configmap["data"][key])["sharing"]["mps"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 4}
    ]


def test_first_run_labels_every_node_and_second_run_sends_nothing():
    capacity, _manifests = plan({"gpuops_time_slicing": {"replicas": 4}})
    key = capacity["nodes"]["gpu-l4-1"]["labels"]["nvidia.com/device-plugin.config"]
    nodes = [node("gpu-l4-1"), node("gpu-h100-1"), node("cp-1")]
    assert node_changes(capacity, nodes) == {
        "missing": [],
        "patches": [
            {"name": "gpu-h100-1", "labels": {"nvidia.com/device-plugin.config": "default"}},
            {"name": "gpu-l4-1", "labels": {"nvidia.com/device-plugin.config": key}},
        ],
    }
    labelled = [
        node("gpu-l4-1", {"nvidia.com/device-plugin.config": key}),
        node("gpu-h100-1", {"nvidia.com/device-plugin.config": "default"}),
    ]
    assert node_changes(capacity, labelled) == {"missing": [], "patches": []}


def test_a_changed_replicas_value_is_a_new_label_value():
    old, _manifests = plan({"gpuops_time_slicing": {"replicas": 4}})
    new, _manifests = plan({"gpuops_time_slicing": {"replicas": 5}})
    old_key = old["nodes"]["gpu-l4-1"]["labels"]["nvidia.com/device-plugin.config"]
    new_key = new["nodes"]["gpu-l4-1"]["labels"]["nvidia.com/device-plugin.config"]
    assert old_key != new_key
    nodes = [
        node("gpu-l4-1", {"nvidia.com/device-plugin.config": old_key}),
        node("gpu-h100-1", {"nvidia.com/device-plugin.config": "default"}),
    ]
    assert node_changes(new, nodes)["patches"] == [
        {"name": "gpu-l4-1", "labels": {"nvidia.com/device-plugin.config": new_key}}
    ]


def test_sharing_off_moves_the_node_back_to_the_default_key_and_prunes_the_old_one():
    shared, shared_manifests = plan({"gpuops_mps": {"replicas": 4}})
    plain, plain_manifests = plan()
    old_key = shared["nodes"]["gpu-l4-1"]["labels"]["nvidia.com/device-plugin.config"]
    nodes = [node("gpu-l4-1", {"nvidia.com/device-plugin.config": old_key}), node("gpu-h100-1")]
    assert node_changes(plain, nodes)["patches"][1] == {
        "name": "gpu-l4-1",
        "labels": {"nvidia.com/device-plugin.config": "default"},
    }
    existing = shared_manifests["device_plugin_configmap"]["data"]
    kept = configmap_data(plain_manifests["device_plugin_configmap"]["data"], existing, nodes, plain["nodes"])
    assert set(kept) == {"default"}
    assert stale_keys(existing, kept) == [old_key]
    assert plain["nodes"]["gpu-l4-1"]["resources"] == {"nvidia.com/gpu": 4}


def test_a_key_a_node_outside_the_plan_selects_is_kept():
    _capacity, manifests = plan()
    existing = {"default": "version: v1\n", "time-slicing-0badc0de": "x", "time-slicing-deadbeef": "y"}
    nodes = [
        node("gpu-l4-1", {"nvidia.com/device-plugin.config": "time-slicing-0badc0de"}),
        node("gpu-old-1", {"nvidia.com/device-plugin.config": "time-slicing-deadbeef"}),
    ]
    kept = configmap_data(manifests["device_plugin_configmap"]["data"], existing, nodes, ["gpu-l4-1", "gpu-h100-1"])
    assert set(kept) == {"default", "time-slicing-deadbeef"}
    assert kept["time-slicing-deadbeef"] == "y"
    assert kept["default"] == manifests["device_plugin_configmap"]["data"]["default"]
    assert stale_keys(existing, kept) == ["time-slicing-0badc0de"]


def test_nodes_of_the_plan_missing_from_the_cluster_are_named():
    capacity, _manifests = plan()
    assert node_changes(capacity, [node("gpu-l4-1")])["missing"] == ["gpu-h100-1"]


def test_mig_through_the_operator_labels_the_config_and_resets_its_state():
    capacity, manifests = plan(manager="operator")
    assert capacity["nodes"]["gpu-h100-1"]["labels"]["nvidia.com/mig.config"] == "all-1g.10gb"
    assert "nvidia.com/mig.config" not in capacity["nodes"]["gpu-l4-1"]["labels"]
    mig_configmap = manifests["mig_parted_configmap"]
    assert mig_configmap["metadata"]["name"] == "gpuops-mig-parted-config"
    assert "all-1g.10gb" in yaml.safe_load(mig_configmap["data"]["config.yaml"])["mig-configs"]
    # A node that had another config and a state for it: the state goes in the same patch (merge-patch null).
    nodes = [
        node("gpu-l4-1", {"nvidia.com/device-plugin.config": "default"}),
        node(
            "gpu-h100-1",
            {
                "nvidia.com/device-plugin.config": "default",
                "nvidia.com/mig.config": "all-disabled",
                "nvidia.com/mig.config.state": "success",
            },
        ),
    ]
    assert node_changes(capacity, nodes)["patches"] == [
        {
            "name": "gpu-h100-1",
            "labels": {"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.config.state": None},
        }
    ]
    # The previous config's state is never read as the new one's.
    assert mig_states(capacity, nodes) == {"waiting": ["gpu-h100-1"], "success": [], "failed": []}


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (None, {"waiting": ["gpu-h100-1"], "success": [], "failed": []}),
        ("pending", {"waiting": ["gpu-h100-1"], "success": [], "failed": []}),
        ("rebooting", {"waiting": ["gpu-h100-1"], "success": [], "failed": []}),
        ("success", {"waiting": [], "success": ["gpu-h100-1"], "failed": []}),
        ("failed", {"waiting": [], "success": [], "failed": ["gpu-h100-1"]}),
    ],
)
def test_mig_states(state, expected):
    capacity, _manifests = plan(manager="operator")
    labels = {"nvidia.com/mig.config": "all-1g.10gb"}
    if state:
        labels["nvidia.com/mig.config.state"] = state
    assert mig_states(capacity, [node("gpu-l4-1"), node("gpu-h100-1", labels)]) == expected


def test_mig_failure_names_node_config_and_the_mig_managers_last_log_lines():
    capacity, _manifests = plan(manager="operator")
    log = ["", "Applying MIG mode change...", "Error creating GPU instance for '1g.10gb': ERROR_IN_USE", ""]
    results = [{"item": {"item": "gpu-h100-1"}, "log_lines": log}]
    assert gpu_sharing_mig_failures(capacity, ["gpu-h100-1"], results, "gpu-operator") == [
        "node gpu-h100-1: MIG config all-1g.10gb failed (nvidia.com/mig.config.state=failed); mig-manager log: "
        "Applying MIG mode change... | Error creating GPU instance for '1g.10gb': ERROR_IN_USE"
    ]
    assert mig_failure_messages(capacity, ["gpu-h100-1"], {}, "gpu-operator") == [
        "node gpu-h100-1: MIG config all-1g.10gb failed (nvidia.com/mig.config.state=failed); no nvidia-mig-manager "
        "pod runs on it in namespace gpu-operator to read the reason from"
    ]
    unreadable = [{"item": {"item": "gpu-h100-1"}, "failed": True, "msg": "no preferred addresses found"}]
    assert gpu_sharing_mig_failures(capacity, ["gpu-h100-1"], unreadable, "gpu-operator")[0].endswith(
        "the log of its nvidia-mig-manager pod could not be read: no preferred addresses found"
    )


def test_capacity_differences_name_node_resource_planned_and_advertised():
    capacity, _manifests = plan({"gpuops_mps": {"replicas": 4, "rename_by_default": True}})
    h100 = capacity["nodes"]["gpu-h100-1"]["resources"]
    good = [
        node("gpu-l4-1", allocatable={"nvidia.com/gpu.shared": "16", "nvidia.com/gpu": "0", "cpu": "8"}),
        node("gpu-h100-1", allocatable={name: str(count) for name, count in h100.items()}),
    ]
    assert capacity_differences(capacity, good) == []
    less = [
        node("gpu-l4-1", allocatable={"nvidia.com/gpu.shared": "13", "nvidia.com/gpu": "4"}),
        node("gpu-h100-1", allocatable={}),
    ]
    assert describe_differences(capacity_differences(capacity, less)) == [
        "gpu-h100-1: nvidia.com/gpu planned 56, advertised 0",
        "gpu-l4-1: nvidia.com/gpu planned 0, advertised 4",
        "gpu-l4-1: nvidia.com/gpu.shared planned 16, advertised 13",
    ]


def test_a_node_moved_to_memory_sharing_loses_its_config_label_and_is_left_to_its_sharing_plugin():
    capacity, _manifests = plan({"gpuops_memory_sharing": {"backend": "hami", "split": 4}})
    assert "nvidia.com/device-plugin.config" not in capacity["nodes"]["gpu-l4-1"]["labels"]
    h100 = capacity["nodes"]["gpu-h100-1"]
    nodes = [
        node("gpu-l4-1", labels={"nvidia.com/device-plugin.config": "time-slicing-f249431b"}, allocatable={}),
        node("gpu-h100-1", labels=h100["labels"], allocatable={k: str(v) for k, v in h100["resources"].items()}),
    ]
    assert node_changes(capacity, nodes)["patches"] == [
        {"name": "gpu-l4-1", "labels": {"nvidia.com/device-plugin.config": None}}
    ]
    # What HAMi's plugin advertises is the gpu_memory_sharing role's to compare.
    assert capacity_differences(capacity, nodes) == []


def test_the_role_sends_node_labels_as_a_merge_patch_and_prunes_by_replacing():
    tasks = {task["name"]: task for task in yaml.safe_load((ROLE / "tasks" / "configure.yml").read_text())}
    label = tasks["Label each GPU node with its device-plugin config and MIG config"]["kubernetes.core.k8s"]
    # A JSON merge patch: a null label value removes the label (RFC 7386), which the state reset relies on.
    assert label["state"] == "patched" and label["merge_type"] == "merge"
    assert label["definition"]["apiVersion"] == "v1" and label["definition"]["kind"] == "Node"
    add = tasks["Add the plan's keys to the device-plugin ConfigMap"]["kubernetes.core.k8s"]
    assert add["state"] == "present" and "force" not in add
    prune = tasks["Prune the device-plugin configs no node selects any more"]["kubernetes.core.k8s"]
    assert prune["force"] is True
