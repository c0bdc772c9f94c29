# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the dra_driver role sends, from plans the real planner writes (cluster_plan over an inventory with a DRA
node) and Node and ResourceSlice objects as the API returns them."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils.dra_driver import (
    node_changes,
    release_state,
    release_values,
    unpublished,
)

ALLOCATION = "gpuops.cluster/gpu-allocation"
DEPLOY = "nvidia.com/gpu.deploy.device-plugin"
GFD = "nvidia.com/gpu.deploy.gpu-feature-discovery"


def _intent(**extra):
    return {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 2, "nvidia_driver_branch": "580", **extra}


@pytest.fixture(scope="module")
def plan():
    """Two L4 nodes, one of them offering its GPUs through DRA with a driver gate on."""
    return plan_cluster(
        {
            "gpu-dra-1": _intent(gpuops_gpu_allocation="dra", gpuops_dra_feature_gates={"TimeSlicingSettings": True}),
            "gpu-l4-1": _intent(),
        }
    )


def node(name, labels=None):
    return {"metadata": {"name": name, "labels": dict(labels or {})}}


def device_slice(pool, names, generation=1, driver="gpu.nvidia.com"):
    return {
        "spec": {
            "driver": driver,
            "nodeName": pool,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1},
            "devices": [{"name": name} for name in names],
        }
    }


def test_the_values_confine_the_kubelet_plugin_to_dra_nodes_and_carry_the_plans_gates(plan):
    values = release_values(plan.dra)

    assert values == {
        "nvidiaDriverRoot": "/",
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "featureGates": plan.dra["feature_gates"],
        "kubeletPlugin": {"nodeSelector": {ALLOCATION: "dra"}},
    }
    assert values["featureGates"]["TimeSlicingSettings"] is True


def test_user_values_are_merged_last_key_by_key(plan):
    values = release_values(plan.dra, {"image": {"repository": "mirror/dra"}, "kubeletPlugin": {"tolerations": []}})

    assert values["image"] == {"repository": "mirror/dra"}
    assert values["kubeletPlugin"] == {"nodeSelector": {ALLOCATION: "dra"}, "tolerations": []}
    assert "image" not in release_values(plan.dra)


@pytest.mark.parametrize(
    ("requested", "with_dra_nodes", "state"),
    [
        ("auto", True, "present"),
        ("auto", False, "absent"),
        ("present", False, "present"),
        ("absent", False, "absent"),
    ],
)
def test_the_release_follows_the_plan_unless_told(plan, requested, with_dra_nodes, state):
    dra = plan.dra if with_dra_nodes else {**plan.dra, "nodes": {}}

    assert release_state(dra, requested) == {"state": state, "stuck": None}


def test_removing_the_driver_of_dra_nodes_is_refused_naming_them(plan):
    found = release_state(plan.dra, "absent")

    assert found["stuck"] == "dra_driver_state is absent but the plan offers the GPUs of gpu-dra-1 through DRA"


def test_only_the_dra_node_is_labelled_and_a_second_run_sends_nothing(plan):
    nodes = [node("gpu-dra-1", {GFD: "true"}), node("gpu-l4-1")]

    changes = node_changes(plan.capacity, nodes)

    assert changes == {
        "missing": [],
        "patches": [{"name": "gpu-dra-1", "labels": {DEPLOY: "false", GFD: "false", ALLOCATION: "dra"}}],
    }
    labelled = [node("gpu-dra-1", {DEPLOY: "false", GFD: "false", ALLOCATION: "dra"}), node("gpu-l4-1")]
    assert node_changes(plan.capacity, labelled) == {"missing": [], "patches": []}


def test_a_node_the_plan_no_longer_makes_a_dra_node_loses_the_labels(plan):
    nodes = [node("gpu-l4-1", {DEPLOY: "false", GFD: "false", ALLOCATION: "dra", "other": "kept"})]

    changes = node_changes(plan.capacity, nodes)

    assert changes["patches"] == [{"name": "gpu-l4-1", "labels": {DEPLOY: None, GFD: None, ALLOCATION: None}}]


def test_a_former_dra_node_now_shared_by_memory_keeps_the_device_plugin_off():
    memory_shared = plan_cluster({"gpu-hami-1": _intent(gpuops_memory_sharing={"backend": "hami", "split": 2})})
    nodes = [node("gpu-hami-1", {DEPLOY: "false", GFD: "false", ALLOCATION: "dra"})]

    changes = node_changes(memory_shared.capacity, nodes)

    assert changes["patches"] == [{"name": "gpu-hami-1", "labels": {GFD: None, ALLOCATION: None}}]


def test_nodes_never_labelled_for_dra_are_left_alone(plan):
    assert node_changes(plan.capacity, [node("gpu-l4-1", {DEPLOY: "false"}), node("cpu-1")])["patches"] == []


def test_a_dra_node_missing_from_the_cluster_is_named_with_its_node_name(plan):
    changes = node_changes(plan.capacity, [node("gpu-l4-1")], {"gpu-dra-1": "dra-node-a"})

    assert changes["missing"] == ["gpu-dra-1 (node dra-node-a)"]


def test_unpublished_names_nodes_short_of_their_devices_in_the_newest_generation(plan):
    planned = len(plan.dra["nodes"]["gpu-dra-1"]["devices"])
    assert planned == 2

    assert unpublished(plan.dra, []) == ["gpu-dra-1: 0 of 2 devices published by gpu.nvidia.com"]
    old_and_new = [device_slice("gpu-dra-1", ["gpu-0", "gpu-1"], 1), device_slice("gpu-dra-1", ["gpu-0"], 2)]
    assert unpublished(plan.dra, old_and_new) == ["gpu-dra-1: 1 of 2 devices published by gpu.nvidia.com"]
    other_driver = [device_slice("gpu-dra-1", ["gpu-0", "gpu-1"], driver="compute-domain.nvidia.com")]
    assert unpublished(plan.dra, other_driver) == ["gpu-dra-1: 0 of 2 devices published by gpu.nvidia.com"]
    assert unpublished(plan.dra, [device_slice("gpu-dra-1", ["gpu-0", "gpu-1"])]) == []


def test_unpublished_reads_the_pool_under_the_kubernetes_node_name(plan):
    published = [device_slice("dra-node-a", ["gpu-0", "gpu-1"])]

    assert unpublished(plan.dra, published, {"gpu-dra-1": "dra-node-a"}) == []
    assert unpublished(plan.dra, published) == ["gpu-dra-1: 0 of 2 devices published by gpu.nvidia.com"]
