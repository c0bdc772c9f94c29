# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_memory_sharing role sends, from contract-shaped plans (capacity.json's memory_sharing,
resources and labels) and Node objects as the API returns them."""

import json

from ansible_collections.gpuops.cluster.plugins.plugin_utils.memory_sharing import (
    MARKER_ANNOTATION,
    backends_in_use,
    capacity_differences,
    gpushare_objects,
    hami_node_config,
    hami_values,
    node_changes,
    object_keys,
)

DEPLOY = "nvidia.com/gpu.deploy.device-plugin"


def hami_node(count=4, split=10, memory_scaling=1, core_scaling=1, mib=23034):
    return {
        "gpu_count": count,
        "memory_sharing": {
            "backend": "hami",
            "split": split,
            "memory_scaling": memory_scaling,
            "core_scaling": core_scaling,
            "scheduler_accounts": {"nvidia.com/gpumem": mib * count, "nvidia.com/gpucores": 100 * core_scaling * count},
        },
        "resources": {"nvidia.com/gpu": count * split},
        "labels": {"gpu": "on", DEPLOY: "false", "nvidia.com/gpu.product": "NVIDIA-L4"},
    }


def gpushare_node(count=1, gib=16):
    return {
        "gpu_count": count,
        "memory_sharing": {"backend": "gpushare", "scheduler_accounts": {}},
        "resources": {"aliyun.com/gpu-mem": gib, "aliyun.com/gpu-count": count},
        "labels": {"gpushare": "true", DEPLOY: "false"},
    }


def plain_node(count=8):
    return {
        "gpu_count": count,
        "memory_sharing": None,
        "resources": {"nvidia.com/gpu": count},
        "labels": {"nvidia.com/device-plugin.config": "default"},
    }


def node(name, labels=None, annotations=None, allocatable=None):
    return {
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "status": {"allocatable": allocatable or {}},
    }


def capacity(**nodes):
    return {"nodes": {host.replace("_", "-"): entry for host, entry in nodes.items()}}


def test_backends_in_use_lists_each_backend_once():
    plan = capacity(l4_1=hami_node(), l4_2=hami_node(), rtx_1=gpushare_node(), h100_1=plain_node())
    assert backends_in_use(plan) == ["gpushare", "hami"]
    assert backends_in_use(capacity(h100_1=plain_node())) == []


def test_first_run_labels_each_memory_shared_node_for_its_backend_and_leaves_other_nodes_alone():
    plan = capacity(l4_1=hami_node(), rtx_1=gpushare_node(), h100_1=plain_node())
    nodes = [node("l4-1"), node("rtx-1"), node("h100-1", {"nvidia.com/device-plugin.config": "default"})]
    assert node_changes(plan, nodes) == {
        "missing": [],
        "patches": [
            {"name": "l4-1", "labels": {DEPLOY: "false", "gpu": "on"}, "annotations": {MARKER_ANNOTATION: "hami"}},
            {
                "name": "rtx-1",
                "labels": {DEPLOY: "false", "gpushare": "true"},
                "annotations": {MARKER_ANNOTATION: "gpushare"},
            },
        ],
    }


def test_second_run_sends_nothing():
    plan = capacity(l4_1=hami_node(), rtx_1=gpushare_node())
    nodes = [
        node("l4-1", {"gpu": "on", DEPLOY: "false"}, {MARKER_ANNOTATION: "hami"}),
        node("rtx-1", {"gpushare": "true", DEPLOY: "false"}, {MARKER_ANNOTATION: "gpushare"}),
    ]
    assert node_changes(plan, nodes) == {"missing": [], "patches": []}


def test_a_node_moved_from_gpushare_to_hami_loses_gpushare_label_in_the_same_patch():
    nodes = [node("rtx-1", {"gpushare": "true", DEPLOY: "false"}, {MARKER_ANNOTATION: "gpushare"})]
    assert node_changes(capacity(rtx_1=hami_node(count=1)), nodes)["patches"] == [
        {"name": "rtx-1", "labels": {"gpu": "on", "gpushare": None}, "annotations": {MARKER_ANNOTATION: "hami"}}
    ]


def test_a_node_no_longer_shared_loses_only_the_labels_the_role_set():
    plan = capacity(l4_1=plain_node(4))
    labelled = node("l4-1", {"gpu": "on", DEPLOY: "false", "team": "ml"}, {MARKER_ANNOTATION: "hami"})
    assert node_changes(plan, [labelled])["patches"] == [
        {"name": "l4-1", "labels": {DEPLOY: None, "gpu": None}, "annotations": {MARKER_ANNOTATION: None}}
    ]
    # Labelled by hand (no annotation): not the role's to remove.
    by_hand = node("l4-1", {"gpu": "on", DEPLOY: "false"})
    assert node_changes(plan, [by_hand])["patches"] == []


def test_a_node_moved_from_memory_sharing_to_dra_keeps_the_device_plugin_off():
    """The plan's DRA node still has NVIDIA's device plugin off (plugin_utils/_plan/dra.py node_labels): only the
    backend's own label and the marker go."""
    dra_node = {
        "gpu_count": 4,
        "memory_sharing": None,
        "gpu_allocation": "dra",
        "resources": {},
        "labels": {"gpuops.cluster/gpu-allocation": "dra", DEPLOY: "false"},
    }
    labelled = node("l4-1", {"gpu": "on", DEPLOY: "false"}, {MARKER_ANNOTATION: "hami"})
    assert node_changes(capacity(l4_1=dra_node), [labelled])["patches"] == [
        {"name": "l4-1", "labels": {"gpu": None}, "annotations": {MARKER_ANNOTATION: None}}
    ]


def test_a_node_removed_from_the_inventory_is_unlabelled_too():
    labelled = node("old-gpu", {"gpushare": "true", DEPLOY: "false"}, {MARKER_ANNOTATION: "gpushare"})
    assert node_changes(capacity(), [labelled])["patches"] == [
        {"name": "old-gpu", "labels": {DEPLOY: None, "gpushare": None}, "annotations": {MARKER_ANNOTATION: None}}
    ]


def test_kubernetes_node_names_come_from_the_map_and_missing_nodes_are_named_both_ways():
    plan = capacity(l4_1=hami_node(), rtx_1=gpushare_node())
    names = {"l4-1": "l4-1.example.com"}
    changes = node_changes(plan, [node("l4-1.example.com")], names)
    assert changes["missing"] == ["rtx-1"]
    assert [patch["name"] for patch in changes["patches"]] == ["l4-1.example.com"]
    assert node_changes(plan, [node("rtx-1")], names)["missing"] == ["l4-1 (node l4-1.example.com)"]


def test_hami_values_carry_the_plan_and_one_nodeconfig_entry_per_hami_node():
    plan = capacity(l4_1=hami_node(split=4, memory_scaling=1.5), l4_2=hami_node(), rtx_1=gpushare_node())
    values = hami_values(plan, {"l4-2": "l4-2.example.com"})
    plugin = values["devicePlugin"]
    # The two HAMi nodes disagree: HAMi's defaults cluster-wide, each node's own settings in config.json.
    assert (plugin["deviceSplitCount"], plugin["deviceMemoryScaling"], plugin["deviceCoreScaling"]) == (10, 1, 1)
    assert plugin["nvidiaNodeSelector"] == {"gpu": "on"}
    assert plugin["runtimeClassName"] == "nvidia" and plugin["createRuntimeClass"] is False
    assert values["schedulerName"] == "hami-scheduler"
    config = json.loads(plugin["nodeConfiguration"]["config"])
    assert config == {
        "nodeconfig": [
            {
                "name": "l4-1",
                "operatingmode": "hami-core",
                "devicesplitcount": 4,
                "devicememoryscaling": 1.5,
                "devicecorescaling": 1,
                "migstrategy": "none",
            },
            {
                "name": "l4-2.example.com",
                "operatingmode": "hami-core",
                "devicesplitcount": 10,
                "devicememoryscaling": 1,
                "devicecorescaling": 1,
                "migstrategy": "none",
            },
        ]
    }


def test_hami_values_use_the_nodes_settings_cluster_wide_when_they_agree():
    plan = capacity(l4_1=hami_node(split=5, core_scaling=2.0), l4_2=hami_node(split=5, core_scaling=2))
    plugin = hami_values(plan)["devicePlugin"]
    assert (plugin["deviceSplitCount"], plugin["deviceMemoryScaling"], plugin["deviceCoreScaling"]) == (5, 1, 2)


def test_hami_config_is_the_same_text_for_the_same_plan_so_helm_sees_no_change():
    first = capacity(l4_1=hami_node(memory_scaling=1.0), l4_2=hami_node())
    second = {
        "nodes": dict(reversed(list(capacity(l4_1=hami_node(memory_scaling=1), l4_2=hami_node())["nodes"].items())))
    }
    assert hami_node_config(first) == hami_node_config(second)


def test_user_values_are_merged_last_and_an_empty_runtime_class_sets_none():
    plan = capacity(l4_1=hami_node())
    values = hami_values(
        plan,
        runtime_class="",
        scheduler_name="vgpu",
        user_values={"devicePlugin": {"deviceSplitCount": 3, "extraArgs": ["-v=2"]}, "global": {"imageRegistry": "r"}},
    )
    assert "runtimeClassName" not in values["devicePlugin"]
    assert values["devicePlugin"]["deviceSplitCount"] == 3
    assert values["devicePlugin"]["extraArgs"] == ["-v=2"]
    assert values["devicePlugin"]["nvidiaNodeSelector"] == {"gpu": "on"}
    assert values["global"] == {"imageRegistry": "r"} and values["schedulerName"] == "vgpu"


def test_capacity_matches_when_nodes_advertise_the_plan():
    plan = capacity(l4_1=hami_node(count=4, split=10), rtx_1=gpushare_node(1, 16))
    nodes = [
        node("l4-1", allocatable={"cpu": "8", "nvidia.com/gpu": "40"}),
        node("rtx-1", allocatable={"aliyun.com/gpu-mem": "16", "aliyun.com/gpu-count": "1", "nvidia.com/gpu": "0"}),
    ]
    assert capacity_differences(plan, nodes) == []


def test_capacity_differences_name_node_resource_plan_and_cluster():
    plan = capacity(l4_1=hami_node(count=4, split=10), rtx_1=gpushare_node(1, 16), h100_1=plain_node())
    nodes = [
        # The GPU Operator's device plugin still runs there: whole GPUs, not HAMi's split.
        node("l4-1", allocatable={"nvidia.com/gpu": "4"}),
        # gpushare's plugin has not registered; NVIDIA's still advertises the GPU.
        node("rtx-1", allocatable={"nvidia.com/gpu": "1"}),
        node("h100-1", allocatable={"nvidia.com/gpu": "3"}),
    ]
    assert capacity_differences(plan, nodes) == [
        "l4-1: nvidia.com/gpu planned 40, advertised 4",
        "rtx-1: aliyun.com/gpu-count planned 1, advertised 0",
        "rtx-1: aliyun.com/gpu-mem planned 16, advertised 0",
        "rtx-1: nvidia.com/gpu planned 0, advertised 1",
    ]


def test_gpushare_objects_drop_empty_documents_and_move_the_extender_to_rke2_servers():
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "gpushare-schd-extender", "namespace": "kube-system"},
        "spec": {"template": {"spec": {"nodeSelector": {"node-role.kubernetes.io/master": ""}}}},
    }
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x"}}
    objects = gpushare_objects([None, role, deployment], {"node-role.kubernetes.io/control-plane": "true"})
    assert [obj["kind"] for obj in objects] == ["ClusterRole", "Deployment"]
    assert objects[1]["spec"]["template"]["spec"]["nodeSelector"] == {"node-role.kubernetes.io/control-plane": "true"}
    # The input is not changed, and no selector keeps upstream's.
    assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {"node-role.kubernetes.io/master": ""}
    assert gpushare_objects([deployment])[0] == deployment
    assert object_keys(objects) == [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x"}},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "gpushare-schd-extender", "namespace": "kube-system"},
        },
    ]
