# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The day-2 playbooks' decisions: the node a run may be for, an earlier host's Node and password, and what
change_node changes on a node."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils import day2

GROUPS = {
    "all": ["cp-1", "cp-2", "gpu-l4-1", "gpu-l4-2", "cpu-1", "gpu-spare"],
    "rke2_servers": ["cp-1", "cp-2"],
    "rke2_agents": ["gpu-l4-1", "gpu-l4-2", "cpu-1"],
    "gpu_nodes": ["gpu-l4-1", "gpu-l4-2", "cp-2", "gpu-spare"],
}


def test_password_secret_is_named_as_rke2_names_it():
    assert day2.password_secret_name("GPU-L4-1") == "gpu-l4-1.node-password.rke2"


@pytest.mark.parametrize("operation", ["add", "replace", "remove"])
@pytest.mark.parametrize("node", ["gpu-l4-1", "cpu-1"])
def test_agents_may_be_added_replaced_and_removed(operation, node):
    assert day2.target_problems(operation, node, GROUPS) == []


def test_a_gpu_node_may_be_changed_be_it_agent_or_server():
    assert day2.target_problems("change", "gpu-l4-2", GROUPS) == []
    assert day2.target_problems("change", "cp-2", GROUPS) == []


@pytest.mark.parametrize("node", [None, "", "  "])
def test_unset_names_the_variable_and_an_example(node):
    (problem,) = day2.target_problems("add", node, GROUPS)
    assert problem == (
        "gpuops_node: not set: add_node.yml needs to know which node to add to the cluster; valid: the inventory "
        "name of a host of rke2_agents (not of rke2_servers), e.g. -e gpuops_node=gpu-l4-1"
    )


def test_more_than_one_host_is_refused():
    (problem,) = day2.target_problems("remove", ["gpu-l4-1", "gpu-l4-2"], GROUPS)
    assert problem.startswith("gpuops_node: ['gpu-l4-1', 'gpu-l4-2'] is not one host name: a run is for one node")


@pytest.mark.parametrize("pattern", ["gpu-l4-*", "gpu-l4-1,gpu-l4-2", "gpu_nodes:!cp-2", "~gpu.*"])
def test_a_host_pattern_is_refused(pattern):
    (problem,) = day2.target_problems("change", pattern, GROUPS)
    assert problem.startswith(f"{pattern}: gpuops_node: a host pattern, not a host name: a run is for one node; ")
    assert "e.g. -e gpuops_node=gpu-l4-1" in problem


def test_a_host_outside_the_inventory_gets_the_nearest_names():
    (problem,) = day2.target_problems("add", "gpu-l4-3", GROUPS)
    assert problem.startswith("gpu-l4-3: gpuops_node: not in the inventory (did you mean gpu-l4-1, gpu-l4-2?)")
    assert "add it to the inventory's rke2_agents (and gpu_nodes for a GPU node) first" in problem
    (problem,) = day2.target_problems("remove", "nowhere", GROUPS)
    assert problem.startswith("nowhere: gpuops_node: not in the inventory; valid:")


@pytest.mark.parametrize("operation", ["add", "replace", "remove"])
def test_a_server_is_refused_where_only_agents_are_handled(operation):
    (problem,) = day2.target_problems(operation, "cp-1", GROUPS)
    assert problem.startswith(f"cp-1: gpuops_node: in rke2_servers: {operation}_node.yml handles agents only")
    assert "valid: the inventory name of a host of rke2_agents (not of rke2_servers)" in problem


def test_a_host_outside_rke2_is_refused():
    (problem,) = day2.target_problems("add", "gpu-spare", GROUPS)
    assert problem.startswith("gpu-spare: gpuops_node: not in rke2_agents; valid:")
    (problem,) = day2.target_problems("change", "gpu-spare", GROUPS)
    assert "in neither rke2_servers nor rke2_agents, so not a node of the cluster" in problem


def test_changing_a_node_without_gpus_is_refused():
    (problem,) = day2.target_problems("change", "cpu-1", GROUPS)
    assert problem.startswith(
        "cpu-1: gpuops_node: not in gpu_nodes: change_node.yml applies a GPU node's MIG layout and GPU sharing"
    )
    assert "e.g. -e gpuops_node=gpu-l4-1" in problem


def test_an_unknown_operation_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown day-2 operation 'upgrade'"):
        day2.target_problems("upgrade", "gpu-l4-1", GROUPS)


def _node(machine_id, ready="True", name="gpu-07"):
    return {
        "metadata": {"name": name},
        "status": {"nodeInfo": {"machineID": machine_id}, "conditions": [{"type": "Ready", "status": ready}]},
    }


def test_the_node_of_this_machine_is_kept():
    for operation in ("add", "replace"):
        decision = day2.earlier_node(operation, "gpu-07", _node("aaa"), "aaa\n", True, True)
        assert decision["problems"] == []
        assert not decision["forget_node"] and not decision["forget_secret"]
        assert decision["reason"] == "the Node gpu-07 is this host (machine id aaa): nothing to forget"


def test_a_failed_machine_is_forgotten_by_replace_only():
    decision = day2.earlier_node("replace", "gpu-07", _node("old", ready="Unknown"), "new", True, False)
    assert decision["problems"] == []
    assert decision["forget_node"] and decision["forget_secret"]
    assert decision["reason"].startswith("the Node gpu-07 belongs to another machine (machine id old; this host: new)")
    (problem,) = day2.earlier_node("add", "gpu-07", _node("old", ready="Unknown"), "new", True, False)["problems"]
    assert problem.startswith("gpu-07: gpuops_node: the Node gpu-07 belongs to another machine")
    assert "valid: playbooks/replace_node.yml -e gpuops_node=gpu-07 when that machine failed" in problem


def test_a_ready_node_of_another_machine_is_not_replaced():
    decision = day2.earlier_node("replace", "gpu-07", _node("old"), "new", True, False)
    assert not decision["forget_node"]
    (problem,) = decision["problems"]
    assert "and it is Ready: that machine still runs" in problem
    assert "stop the old machine first (its Node turns NotReady)" in problem


def test_a_password_without_its_node():
    # Left by an earlier host: replace deletes it, add refuses (RKE2 would refuse the host for ever).
    decision = day2.earlier_node("replace", "gpu-07", None, "new", True, False)
    assert decision["forget_secret"] and not decision["forget_node"] and decision["problems"] == []
    (problem,) = day2.earlier_node("add", "gpu-07", None, "new", True, False)["problems"]
    assert "keeps kube-system/gpu-07.node-password.rke2, the password of an earlier host" in problem
    assert "Node password rejected, duplicate hostname" in problem
    # Made by this host in an earlier run that stopped before its Node registered: it stays.
    for operation in ("add", "replace"):
        decision = day2.earlier_node(operation, "gpu-07", None, "new", True, True)
        assert decision == {
            "forget_node": False,
            "forget_secret": False,
            "problems": [],
            "reason": "no Node gpu-07 yet; kube-system/gpu-07.node-password.rke2 is this host's",
        }


def test_nothing_to_forget_on_a_new_name():
    assert day2.earlier_node("add", "gpu-07", None, "new", False, False) == {
        "forget_node": False,
        "forget_secret": False,
        "problems": [],
        "reason": "no Node gpu-07 yet",
    }


def test_without_machine_ids_nothing_is_decided():
    (problem,) = day2.earlier_node("replace", "gpu-07", _node("old", ready="False"), "", True, False)["problems"]
    assert "cannot tell whether the Node gpu-07 is this host: the host has no /etc/machine-id" in problem
    (problem,) = day2.earlier_node("replace", "gpu-07", _node(""), "new", True, False)["problems"]
    assert "the Node gpu-07 reports none" in problem


L4_TIME_SLICED = {
    "labels": {"nvidia.com/device-plugin.config": "ts-3"},
    "resources": {"nvidia.com/gpu": 6},
}
L4_HAMI = {
    "labels": {"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"},
    "resources": {"nvidia.com/gpu": 4},
    "memory_sharing": {"backend": "hami", "split": 2},
}


def _gpu_node(labels, gpus, annotations=None):
    return {
        "metadata": {"name": "gpu-07", "labels": labels, "annotations": annotations or {}},
        "status": {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "8"}},
    }


def test_a_node_that_carries_its_plan_is_left_alone():
    capacity = {"nodes": {"gpu-07": L4_TIME_SLICED}}
    node = _gpu_node({"nvidia.com/device-plugin.config": "ts-3"}, 6)
    assert day2.node_changes(capacity, "gpu-07", node) == []


def test_a_node_moving_from_hami_to_time_slicing():
    capacity = {"nodes": {"gpu-07": L4_TIME_SLICED}}
    node = _gpu_node(
        {"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"}, 4, {"gpuops.cluster/memory-sharing": "hami"}
    )
    changes = day2.node_changes(capacity, "gpu-07", node)
    assert changes[0].startswith("labels: nvidia.com/device-plugin.config=ts-3")
    assert "capacity: gpu-07: nvidia.com/gpu planned 6, advertised 4" in changes


def test_a_hami_split_change_shows_in_the_capacity():
    capacity = {"nodes": {"gpu-07": {**L4_HAMI, "resources": {"nvidia.com/gpu": 6}}}}
    node = _gpu_node({"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"}, 4)
    changes = day2.node_changes(capacity, "gpu-07", node)
    assert any(change.startswith("capacity: gpu-07: nvidia.com/gpu planned 6, advertised 4") for change in changes)


L4_DRA = {
    "labels": {
        "gpuops.cluster/gpu-allocation": "dra",
        "nvidia.com/gpu.deploy.device-plugin": "false",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "false",
    },
    "resources": {},
    "gpu_allocation": "dra",
}


def test_a_node_moving_to_dra_gets_the_labels_and_stops_advertising():
    capacity = {"nodes": {"gpu-07": L4_DRA}}
    node = _gpu_node({"nvidia.com/device-plugin.config": "ts-3"}, 6)
    changes = day2.node_changes(capacity, "gpu-07", node)
    assert changes[0] == (
        "labels: nvidia.com/device-plugin.config=(removed), gpuops.cluster/gpu-allocation=dra, "
        "nvidia.com/gpu.deploy.device-plugin=false, nvidia.com/gpu.deploy.gpu-feature-discovery=false"
    )
    assert "capacity: gpu-07: nvidia.com/gpu planned 0, advertised 6" in changes


def test_a_node_moving_back_from_dra_loses_the_labels():
    capacity = {"nodes": {"gpu-07": L4_TIME_SLICED}}
    node = _gpu_node(L4_DRA["labels"], 0)
    changes = day2.node_changes(capacity, "gpu-07", node)
    assert changes[0] == (
        "labels: nvidia.com/device-plugin.config=ts-3, gpuops.cluster/gpu-allocation=(removed), "
        "nvidia.com/gpu.deploy.device-plugin=(removed), nvidia.com/gpu.deploy.gpu-feature-discovery=(removed)"
    )


def test_a_mig_change_comes_first():
    capacity = {"nodes": {"gpu-07": L4_TIME_SLICED}}
    node = _gpu_node({"nvidia.com/device-plugin.config": "ts-3"}, 6)
    assert day2.node_changes(capacity, "gpu-07", node, "apply all-1g.10gb") == ["MIG: apply all-1g.10gb"]


def test_a_node_outside_the_plan_or_the_cluster_changes_nothing():
    assert day2.node_changes({"nodes": {}}, "gpu-07", _gpu_node({}, 0)) == []
    assert day2.node_changes({"nodes": {"gpu-07": L4_TIME_SLICED}}, "gpu-07", None) == []
