# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nodes that share GPUs by memory (HAMi, gpushare): which pods each check runs, what they ask for, and how
their results and the node's allocatable are judged."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import checks, evaluate, manifests
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.outcome import Outcome
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_kubernetes import listing

SETTINGS = plans.SETTINGS
L4 = "NVIDIA L4"


def one_node(plan):
    return checks.targets({"nodes": {"gpu-1": plan}})


def pod_spec(probe, settings=SETTINGS):
    return manifests.job_manifest("0123abcd", probe, "gpu-validation", settings)["spec"]["template"]


def seen(uuid, name=L4):
    return Outcome(True, "terminated (Completed)", 0, listing([(name, uuid, [])]))


# Which pods


def test_hami_smoke_and_cuda_ask_one_split_device():
    target_list = one_node(plans.hami(split=10))

    (smoke,) = checks.smoke_probes(target_list)
    (cuda,) = checks.cuda_probes(target_list)

    assert (smoke.expect.resource, smoke.expect.kind, smoke.expect.backend) == ("nvidia.com/gpu", "gpu", "hami")
    assert cuda.expect.resource == "nvidia.com/gpu"
    assert smoke.expect.describe() == "one GPU and no MIG device of NVIDIA L4"


def test_hami_sharing_runs_split_pods_per_gpu_with_an_even_memory_share():
    (group,) = checks.sharing_groups(one_node(plans.hami(count=2, split=10)), 32)

    # 2 GPUs x 10 devices; an L4 has 23034 MiB (catalog), each of 10 pods gets 2303 of it.
    assert (group.expect.replicas, len(group.probes), group.capped) == (10, 20, False)
    assert (group.expect.slice_resource, group.expect.slice_size) == ("nvidia.com/gpumem", 2303)
    assert "HAMi" in group.expect.sharing


def test_hami_memory_scaling_grows_the_share_and_the_cap_cuts_the_pods():
    (group,) = checks.sharing_groups(one_node(plans.hami(count=4, split=10, memory_scaling=2)), 32)

    assert group.expect.slice_size == 23034 * 2 // 10
    assert (len(group.probes), group.wanted, group.capped) == (32, 40, True)
    assert "no device is shared by more than 10 pods" in checks.capped_note(group)


def test_without_scheduler_accounts_hami_reads_the_gpu_memory_from_the_catalog():
    plan = plans.hami(count=1, split=4, memory_scaling=1.5)
    plan["memory_sharing"] = {
        key: value for key, value in plan["memory_sharing"].items() if key != "scheduler_accounts"
    }

    (group,) = checks.sharing_groups(one_node(plan), 32)

    assert group.expect.slice_size == int(23034 * 1.5) // 4


def test_gpushare_smoke_asks_one_gib_and_never_the_gpu_count():
    target_list = one_node(plans.gpushare(count=2))

    (smoke,) = checks.smoke_probes(target_list)
    (cuda,) = checks.cuda_probes(target_list)

    assert (smoke.expect.resource, smoke.expect.backend) == ("aliyun.com/gpu-mem", "gpushare")
    assert cuda.expect.resource == "aliyun.com/gpu-mem"


@pytest.mark.parametrize(("max_pods", "pods", "gib"), [(32, 22, 1), (4, 4, 5), (3, 3, 7)])
def test_gpushare_sharing_splits_one_gpu_among_up_to_max_pods(max_pods, pods, gib):
    # An L4 counts 22 GiB for gpushare (23034 MiB // 1024).
    (group,) = checks.sharing_groups(one_node(plans.gpushare(count=2)), max_pods)

    assert (len(group.probes), group.expect.replicas, group.expect.slice_size) == (pods, pods, gib)
    assert pods * gib <= 22 and not group.capped


def test_a_gpushare_gpu_of_one_gib_cannot_be_shared():
    plan = plans.gpushare(count=1)
    plan["resources"] = {"aliyun.com/gpu-mem": 1, "aliyun.com/gpu-count": 1}

    assert checks.sharing_groups(one_node(plan), 32) == []


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"backend": "vgpu"}, "memory_sharing: must be null or a mapping whose backend is one of hami, gpushare"),
        ({"backend": "hami", "split": 0}, "memory_sharing.split: must be a whole number of 1 or more, got 0"),
        ({"backend": "hami", "split": 2.5}, "memory_sharing.split: must be a whole number of 1 or more, got 2.5"),
    ],
)
def test_a_bad_memory_sharing_entry_is_refused(entry, problem):
    plan = plans.hami()
    plan["memory_sharing"] = entry

    with pytest.raises(ValidationInputError) as raised:
        one_node(plan)

    assert any(problem in line and "plan.nodes.gpu-1" in line for line in raised.value.problems)


def test_a_gpushare_plan_without_its_resources_is_refused():
    plan = plans.gpushare()
    plan["resources"] = {"nvidia.com/gpu": 2}

    with pytest.raises(ValidationInputError, match=r"aliyun\.com/gpu-count, but resources has"):
        one_node(plan)


def test_hami_without_a_known_gpu_memory_is_refused():
    plan = plans.hami()
    plan["gpu_product"] = "NVIDIA Future GPU"
    plan["memory_sharing"].pop("scheduler_accounts")

    with pytest.raises(ValidationInputError, match="the memory of one GPU is unknown"):
        one_node(plan)


# What the pods ask for


def test_hami_pods_go_to_its_scheduler_and_the_sharing_pods_ask_their_memory():
    target_list = one_node(plans.hami(split=10))
    (smoke,) = checks.smoke_probes(target_list)
    (group,) = checks.sharing_groups(target_list, 32)

    smoke_pod, sharing_pod = pod_spec(smoke), pod_spec(group.probes[0])

    assert smoke_pod["spec"]["schedulerName"] == "hami-scheduler"
    assert smoke_pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert sharing_pod["spec"]["schedulerName"] == "hami-scheduler"
    assert sharing_pod["spec"]["containers"][0]["resources"] == {
        "limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "2303"}
    }
    assert sharing_pod["metadata"]["annotations"]["hami.io/gpu-scheduler-policy"] == "binpack"
    assert "hami.io/gpu-scheduler-policy" not in smoke_pod["metadata"]["annotations"]


def test_hami_settings_leave_out_the_scheduler_and_the_memory_share():
    (group,) = checks.sharing_groups(one_node(plans.hami()), 32)
    settings = manifests.PodSettings(**{**SETTINGS.__dict__, "hami_scheduler_name": None, "hami_request_gpumem": False})

    pod = pod_spec(group.probes[0], settings)

    assert "schedulerName" not in pod["spec"]
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_gpushare_pods_ask_gib_of_memory_from_the_default_scheduler():
    target_list = one_node(plans.gpushare())
    (smoke,) = checks.smoke_probes(target_list)
    (group,) = checks.sharing_groups(target_list, 4)

    assert pod_spec(smoke)["spec"]["containers"][0]["resources"] == {"limits": {"aliyun.com/gpu-mem": "1"}}
    assert pod_spec(group.probes[0])["spec"]["containers"][0]["resources"] == {"limits": {"aliyun.com/gpu-mem": "5"}}
    assert "schedulerName" not in pod_spec(group.probes[0])["spec"]


def test_nodes_without_memory_sharing_keep_the_default_scheduler():
    (probe,) = checks.smoke_probes(one_node(plans.whole_gpus()))

    assert "schedulerName" not in pod_spec(probe)["spec"]


# Verdicts


def test_gpushare_pods_on_one_gpu_pass_and_spread_ones_fail():
    (group,) = checks.sharing_groups(one_node(plans.gpushare()), 4)

    together = evaluate.sharing(group, [seen("GPU-a")] * 4)
    spread = evaluate.sharing(group, [seen("GPU-a"), seen("GPU-a"), seen("GPU-b"), seen("GPU-b")])

    assert together.passed and together.reason.startswith("4 pods shared 1 devices, 4 per device (gpushare")
    assert not spread.passed
    assert "expected each device shared by 4 pods, found GPU-a by 2, GPU-b by 2" in spread.reason


def test_a_gpushare_pod_without_a_gpu_fails_with_its_output():
    # gpushare's device plugin sets NVIDIA_VISIBLE_DEVICES to "no-gpu-has-<n>GiB-to-run" when it finds no
    # assumed pod (pkg/gpu/nvidia/allocate.go, buildErrResponse): nvidia-smi then lists no GPU.
    (group,) = checks.sharing_groups(one_node(plans.gpushare()), 2)
    failed = Outcome(True, "terminated (Error)", 6, "No devices were found\n")

    verdict = evaluate.sharing(group, [seen("GPU-a"), failed])

    assert not verdict.passed and "pod 1: exit code 6, 'No devices were found'" in verdict.reason


def test_hami_pods_shared_split_per_gpu_pass():
    (group,) = checks.sharing_groups(one_node(plans.hami(count=2, split=3)), 32)

    verdict = evaluate.sharing(group, [seen("GPU-a")] * 3 + [seen("GPU-b")] * 3)

    assert verdict.passed and verdict.devices == ["GPU-a", "GPU-b"]


def test_a_hami_pod_that_sees_another_product_fails():
    (group,) = checks.sharing_groups(one_node(plans.hami(count=1, split=2)), 32)

    verdict = evaluate.sharing(group, [seen("GPU-a"), seen("GPU-a", "NVIDIA A10")])

    assert not verdict.passed and "product NVIDIA A10" in verdict.reason


# Capacity


def test_gpushare_capacity_compares_both_aliyun_resources():
    expected = plans.gpushare(count=2)["resources"]

    assert evaluate.capacity(expected, {"cpu": "8", "aliyun.com/gpu-mem": "44", "aliyun.com/gpu-count": "2"}).passed
    missing = evaluate.capacity(expected, {"aliyun.com/gpu-mem": "44"})
    assert missing.reason == "aliyun.com/gpu-count expected 2, found none"


def test_nvidia_device_plugin_left_on_a_gpushare_node_is_extra():
    expected = plans.gpushare(count=2)["resources"]

    verdict = evaluate.capacity(
        expected, {"aliyun.com/gpu-mem": "44", "aliyun.com/gpu-count": "2", "nvidia.com/gpu": "2"}
    )

    assert verdict.reason == "nvidia.com/gpu not planned, found 2"


def test_hami_capacity_counts_the_split_devices():
    expected = plans.hami(count=2, split=10)["resources"]

    assert evaluate.capacity(expected, {"nvidia.com/gpu": "20"}).passed
    # NVIDIA's device plugin instead of HAMi's: one unit per GPU.
    assert evaluate.capacity(expected, {"nvidia.com/gpu": "2"}).reason == "nvidia.com/gpu expected 20, found 2"


def test_a_stray_aliyun_resource_on_an_nvidia_node_is_extra():
    verdict = evaluate.capacity({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": "2", "aliyun.com/gpu-mem": "44"})

    assert verdict.reason == "aliyun.com/gpu-mem not planned, found 44"


@pytest.mark.parametrize(
    ("plan", "scope"),
    [
        (plans.whole_gpus(), "nvidia.com/*"),
        (plans.hami(), "nvidia.com/*"),
        (plans.gpushare(), "aliyun.com/*, nvidia.com/*"),
    ],
)
def test_the_capacity_result_names_the_resources_compared(plan, scope):
    assert evaluate.capacity_scope(plan["resources"]) == scope


# The planner's own entries


def planned_nodes():
    """capacity.json nodes from the collection's planner, for the same intents as plans.hami() and plans.gpushare()."""
    plan_cluster = pytest.importorskip(
        "ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster"
    ).plan_cluster
    pytest.importorskip("ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.memory_sharing")
    intents = {
        "hami": {"gpuops_gpu_product": L4, "gpuops_gpu_count": 2, "gpuops_memory_sharing": {"backend": "hami"}},
        "share": {"gpuops_gpu_product": L4, "gpuops_gpu_count": 2, "gpuops_memory_sharing": {"backend": "gpushare"}},
    }
    return plan_cluster(intents).capacity["nodes"]


def test_the_contract_shaped_entries_are_what_the_planner_writes():
    nodes = planned_nodes()

    assert nodes["hami"] == plans.hami(count=2)
    assert nodes["share"] == plans.gpushare(count=2)
