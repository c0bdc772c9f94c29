# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuops_gpu_allocation dra in the plan: what a DRA node is planned as, and what the DRA driver refuses, each named
by host and variable (plugin_utils/_plan/dra_intent.py, dra_gates.py)."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_sharing import node_changes

VERSIONS = {"rke2_version": "v1.36.3+rke2r1", "nvidia_driver_branch": "580"}
H100_DRA = {
    "gpuops_gpu_product": "NVIDIA H100 80GB HBM3",
    "gpuops_gpu_count": 2,
    "gpuops_mig_config": "all-3g.40gb",
    "gpuops_gpu_allocation": "dra",
    **VERSIONS,
}
L40S_MPS = {"gpuops_gpu_product": "NVIDIA L40S", "gpuops_gpu_count": 4, "gpuops_mps": {"replicas": 4}, **VERSIONS}
L4_DRA = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 1, "gpuops_gpu_allocation": "dra", **VERSIONS}


def errors_of(**hosts):
    with pytest.raises(IntentErrors) as caught:
        plan_cluster(hosts)
    return {(error.host, error.variable): error.message for error in caught.value.errors}


def test_a_dra_node_advertises_no_resource_and_its_devices_go_to_dra_json():
    plan = plan_cluster({"h100-1": H100_DRA, "l40s-1": L40S_MPS})

    node = plan.capacity["nodes"]["h100-1"]
    assert node["gpu_allocation"] == "dra"
    assert node["resources"] == {}
    assert node["labels"] == {
        "gpuops.cluster/gpu-allocation": "dra",
        "nvidia.com/gpu.deploy.device-plugin": "false",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "false",
    }
    assert plan.capacity["nodes"]["l40s-1"]["gpu_allocation"] == "device_plugin"
    # Only the device plugin's node counts in the totals.
    assert plan.capacity["totals"] == {"nvidia.com/gpu": 16}
    dra = plan.dra
    assert list(dra["nodes"]) == ["h100-1"]
    assert [device["name"] for device in dra["nodes"]["h100-1"]["devices"]] == [
        "gpu-{minor}-mig-3g40gb-9-0",
        "gpu-{minor}-mig-3g40gb-9-4",
    ] * 2
    assert "h100-1  NVIDIA H100 80GB HBM3" in plan.table and "DRA: 4 devices" in plan.table


def test_the_plan_writes_dra_json_beside_capacity_json():
    plan = plan_cluster({"l4-1": L4_DRA})

    files = plan.files(str, lambda document: document)
    assert files["dra.json"]["nodes"]["l4-1"]["devices"][0]["name"] == "gpu-{minor}"
    # No device-plugin config key selects a DRA node.
    assert list(plan.device_plugin_configmap["data"]) == ["default"]


def test_dra_nodes_lift_the_cluster_wide_mig_strategy_limit_of_mps():
    """MPS on an L40S node and MIG on H100 nodes: refused while the device plugin serves both (MPS under mixed), and
    planned when the H100 nodes offer their GPUs through DRA, where each claim chooses."""
    mixed = {"gpuops_mig_strategy": "mixed"}
    plugin_h100 = {**H100_DRA, "gpuops_gpu_allocation": "device_plugin", "gpuops_mig_config": "all-balanced"}
    assert ("l40s-1", "gpuops_mps") in errors_of(**{"h100-1": plugin_h100 | mixed, "l40s-1": L40S_MPS | mixed})

    plan = plan_cluster({"h100-1": H100_DRA | {"gpuops_mig_config": "all-balanced"}, "l40s-1": L40S_MPS})
    assert plan.capacity["nodes"]["l40s-1"]["resources"] == {"nvidia.com/gpu": 16}


@pytest.mark.parametrize(
    ("extra", "variable", "message"),
    [
        ({"gpuops_time_slicing": {"replicas": 4}}, "gpuops_time_slicing", "each\nResourceClaim chooses its sharing"),
        ({"gpuops_mps": {"replicas": 2}}, "gpuops_mps", "each\nResourceClaim chooses its sharing"),
        ({"gpuops_memory_sharing": {"backend": "hami"}}, "gpuops_memory_sharing", "a node offers its GPUs one way"),
        ({"rke2_version": "v1.33.5+rke2r1"}, "rke2_version", "from Kubernetes 1.34.2 on"),
        ({"rke2_version": "v1.34.1+rke2r1"}, "rke2_version", "choose v1.34.2+rke2r1 or later"),
        ({"nvidia_driver_branch": "550"}, "nvidia_driver_branch", "branch 550 is too old"),
        ({"gpuops_gpu_allocation": "plugin"}, "gpuops_gpu_allocation", "valid: device_plugin, dra"),
    ],
)
def test_what_a_dra_node_cannot_have_is_refused_naming_host_and_variable(extra, variable, message):
    errors = errors_of(**{"l4-1": L4_DRA | extra})

    assert message.replace("\n", " ") in errors[("l4-1", variable)]


def test_compute_instance_profiles_on_a_dra_node_are_refused_at_its_mig_config():
    configs = {
        "version": "v1",
        "mig-configs": {
            "ci": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 1, "2c.3g.40gb": 1}}]
        },
    }
    errors = errors_of(**{"h100-1": H100_DRA | {"gpuops_mig_config": "ci", "gpuops_mig_configs": configs}})

    assert (
        "the DRA driver knows only MIG devices that fill their GPU instance" in errors[("h100-1", "gpuops_mig_config")]
    )


def test_mig_placed_by_the_operators_mig_manager_is_refused_on_a_dra_node():
    errors = errors_of(**{"h100-1": H100_DRA | {"gpuops_mig_manager": "operator"}})

    assert "a DRA device's name carries its placement" in errors[("h100-1", "gpuops_mig_manager")]


def test_dynamic_mig_is_refused_on_mig_capable_dra_nodes_and_its_conflict_with_the_mig_role_named():
    gates = {"gpuops_dra_feature_gates": {"DynamicMIG": True}}
    errors = errors_of(**{"h100-1": H100_DRA | gates})

    message = errors[("h100-1", "gpuops_dra_feature_gates.DynamicMIG")]
    assert "destroys at start the MIG devices it did not create" in message
    # Without MIG-capable GPUs, the driver publishes the whole GPUs as always.
    assert plan_cluster({"l4-1": L4_DRA | gates}).dra["kubernetes_feature_gates"] == {}


@pytest.mark.parametrize(
    ("gates", "path", "message"),
    [
        ({"MPSSuport": True}, "gpuops_dra_feature_gates.MPSSuport", "not a gate of the DRA driver v0.5.0"),
        ({"MPSSupport": "yes"}, "gpuops_dra_feature_gates.MPSSupport", "must be true or false"),
        (
            {"DynamicMIG": True, "MPSSupport": True},
            "gpuops_dra_feature_gates.DynamicMIG",
            "cannot be on together with MPSSupport",
        ),
        ({"DeviceMetadata": True}, "gpuops_dra_feature_gates.DeviceMetadata", "needs PassthroughSupport on too"),
        ({"DRAListTypeAttributes": True}, "gpuops_dra_feature_gates.DRAListTypeAttributes", "Kubernetes 1.35 does"),
        (["MPSSupport"], "gpuops_dra_feature_gates", "must be a mapping"),
    ],
)
def test_driver_gates_are_checked_as_the_driver_checks_them(gates, path, message):
    node = L4_DRA | {"gpuops_dra_feature_gates": gates, "rke2_version": "v1.35.4+rke2r1"}

    assert message in errors_of(**{"l4-1": node})[("l4-1", path)]


def test_the_kubernetes_gates_follow_the_minor_each_dra_node_runs():
    gates = {"gpuops_dra_feature_gates": {"ConsumableShares": True, "TimeSlicingSettings": True}}
    on_1_35 = plan_cluster({"l4-1": L4_DRA | gates | {"rke2_version": "v1.35.4+rke2r1"}}).dra
    on_1_36 = plan_cluster({"l4-1": L4_DRA | gates}).dra

    needed = {"DRAConsumableCapacity": True}
    assert on_1_35["kubernetes_feature_gates"] == {"kube-apiserver": needed, "kube-scheduler": needed}
    # On by default from 1.36 (kube_features.go): nothing to set.
    assert on_1_36["kubernetes_feature_gates"] == {}
    assert on_1_36["feature_gates"] == {"ConsumableShares": True, "TimeSlicingSettings": True}


def test_driver_gates_must_be_one_map_for_the_cluster():
    first = L4_DRA | {"gpuops_dra_feature_gates": {"TimeSlicingSettings": True}}
    second = L4_DRA | {"gpuops_dra_feature_gates": {"MPSSupport": True}}

    errors = errors_of(**{"l4-1": first, "l4-2": second, "l4-3": L4_DRA})
    assert "must be the same on every GPU node" in errors[("l4-2", "gpuops_dra_feature_gates")]
    assert ("l4-3", "gpuops_dra_feature_gates") not in errors


def test_the_version_minimums_apply_to_dra_nodes_only():
    old = {"rke2_version": "v1.33.5+rke2r1", "nvidia_driver_branch": "550"}

    plan = plan_cluster({"l40s-1": L40S_MPS | old, "l4-1": L4_DRA})
    assert plan.capacity["nodes"]["l40s-1"]["gpu_allocation"] == "device_plugin"


def test_a_node_that_moves_to_dra_loses_its_device_plugin_config_label():
    capacity = plan_cluster({"l4-1": L4_DRA}).capacity
    node = {"metadata": {"name": "l4-1", "labels": {"nvidia.com/device-plugin.config": "time-slicing-0a1b2c3d"}}}

    (patch,) = node_changes(capacity, [node])["patches"]
    assert patch["labels"]["nvidia.com/device-plugin.config"] is None
