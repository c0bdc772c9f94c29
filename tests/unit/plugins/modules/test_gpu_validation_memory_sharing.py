# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_validation on nodes that share GPUs by memory (HAMi, gpushare), against the in-memory API: the pods it
creates, the reports, and check mode."""

import json

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import runner
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_kubernetes import FakeCluster, FakeNode
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.test_gpu_validation import (
    FakeTime,
    left_behind,
    run_module,
)

L4 = "NVIDIA L4"


def hami_node(allocatable="20"):
    # HAMi's device plugin: 10 devices per GPU; its scheduler fills one GPU first (binpack), as `replicas` here.
    devices = [(L4, f"GPU-hami-{index}", None, None) for index in range(2)]
    return FakeNode("gpu-hami-1", {"nvidia.com/gpu": allocatable}, {"nvidia.com/gpu": devices},
                    replicas={"nvidia.com/gpu": 10})  # fmt: skip


def gpushare_node(per_device=22, allocatable=None):
    # gpushare's extender puts a pod on the fullest GPU it fits (binpack): PER_DEVICE pods land on one GPU.
    devices = [(L4, f"GPU-share-{index}", None, None) for index in range(2)]
    allocatable = allocatable or {"aliyun.com/gpu-mem": "44", "aliyun.com/gpu-count": "2"}
    return FakeNode("gpu-share-1", allocatable, {"aliyun.com/gpu-mem": devices},
                    replicas={"aliyun.com/gpu-mem": per_device})  # fmt: skip


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(runner, "time", fake)
    return fake


def plan():
    return {"nodes": {"gpu-hami-1": plans.hami(count=2, split=10), "gpu-share-1": plans.gpushare(count=2)}}


def jobs_of(cluster, node, check):
    return [
        job
        for job in cluster.created_jobs
        if job["metadata"]["annotations"]["gpuops.cluster/validation-node"] == node
        and job["metadata"]["labels"]["gpuops.cluster/validation-check"] == check
    ]


def pod(job):
    return job["spec"]["template"]["spec"]


def test_memory_shared_nodes_pass_every_check(clock):
    cluster = FakeCluster([hami_node(), gpushare_node()])

    result = run_module(cluster, {"plan": plan(), "sharing_max_pods": 32})

    assert not result.get("failed"), result.get("msg")
    found = {(item["check"], item["node"]): item for item in result["results"]}
    assert found[("capacity", "gpu-share-1")]["resource"] == "aliyun.com/*, nvidia.com/*"
    assert found[("capacity", "gpu-share-1")]["reason"] == (
        "allocatable equals the plan: aliyun.com/gpu-count=2, aliyun.com/gpu-mem=44"
    )
    assert found[("smoke", "gpu-share-1")]["resource"] == "aliyun.com/gpu-mem"
    assert found[("sharing", "gpu-hami-1")]["reason"] == (
        "20 pods shared 2 devices, 10 per device (HAMi, nvidia.com/gpumem 2303 MiB per pod)"
    )
    assert found[("sharing", "gpu-share-1")]["reason"] == (
        "22 pods shared 1 devices, 22 per device (gpushare, aliyun.com/gpu-mem 1 GiB per pod)"
    )
    assert found[("sharing", "gpu-share-1")]["devices"] == ["GPU-share-0"]
    assert left_behind(cluster) == []
    # The reports carry the memory-shared nodes' checks.
    report = json.loads(result["report"])
    assert {(item["check"], item["resource"]) for item in report["results"] if item["node"] == "gpu-share-1"} == {
        ("capacity", "aliyun.com/*, nvidia.com/*"),
        ("smoke", "aliyun.com/gpu-mem"),
        ("cuda", "aliyun.com/gpu-mem"),
        ("sharing", "aliyun.com/gpu-mem"),
    }
    assert 'name="gpu-share-1 aliyun.com/gpu-mem"' in result["junit_xml"]


def test_the_pods_ask_what_each_sharing_scheduler_reads(clock):
    cluster = FakeCluster([hami_node(), gpushare_node()])

    result = run_module(cluster, {"plan": plan(), "checks": ["smoke", "sharing"], "sharing_max_pods": 4})

    assert not result.get("failed"), result.get("msg")
    (hami_smoke,) = jobs_of(cluster, "gpu-hami-1", "smoke")
    hami_sharing = jobs_of(cluster, "gpu-hami-1", "sharing")
    assert pod(hami_smoke)["schedulerName"] == "hami-scheduler"
    assert pod(hami_smoke)["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert len(hami_sharing) == 4
    assert {json.dumps(pod(job)["containers"][0]["resources"]["limits"]) for job in hami_sharing} == {
        '{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "2303"}'
    }
    (share_smoke,) = jobs_of(cluster, "gpu-share-1", "smoke")
    share_sharing = jobs_of(cluster, "gpu-share-1", "sharing")
    assert pod(share_smoke)["containers"][0]["resources"]["limits"] == {"aliyun.com/gpu-mem": "1"}
    assert "schedulerName" not in pod(share_smoke)
    # 22 GiB per L4 among 4 pods: 5 GiB each.
    assert [pod(job)["containers"][0]["resources"]["limits"] for job in share_sharing] == [
        {"aliyun.com/gpu-mem": "5"}
    ] * 4


def test_gpushare_pods_spread_over_gpus_fail_the_sharing_check(clock):
    cluster = FakeCluster([hami_node(), gpushare_node(per_device=2)])

    result = run_module(cluster, {"plan": plan(), "checks": ["sharing"], "sharing_max_pods": 4})

    assert result["failed"] is True
    assert (
        "gpu-share-1 sharing aliyun.com/gpu-mem: expected each device shared by 4 pods, found GPU-share-0 by 2, "
        "GPU-share-1 by 2" in result["msg"]
    )
    assert left_behind(cluster) == []


@pytest.mark.parametrize(
    ("hami_allocatable", "share_allocatable", "message"),
    [
        # NVIDIA's device plugin instead of HAMi's: one unit per GPU.
        ("2", None, "gpu-hami-1 capacity nvidia.com/*: nvidia.com/gpu expected 20, found 2"),
        (
            "20",
            {"aliyun.com/gpu-mem": "44", "nvidia.com/gpu": "2"},
            "gpu-share-1 capacity aliyun.com/*, nvidia.com/*: aliyun.com/gpu-count expected 2, found none; "
            "nvidia.com/gpu not planned, found 2",
        ),
    ],
)
def test_capacity_of_memory_shared_nodes_fails_on_any_difference(clock, hami_allocatable, share_allocatable, message):
    cluster = FakeCluster([hami_node(hami_allocatable), gpushare_node(allocatable=share_allocatable)])

    result = run_module(cluster, {"plan": plan(), "checks": ["capacity"]})

    assert result["failed"] is True and message in result["msg"]


def test_check_mode_shows_the_memory_shares_and_the_scheduler():
    cluster = FakeCluster([hami_node(), gpushare_node()])

    result = run_module(
        cluster,
        {"plan": plan(), "sharing_max_pods": 8, "hami_scheduler_name": "", "hami_request_gpumem": False},
        check_mode=True,
    )

    assert cluster.created_jobs == [] and cluster.calls == []
    sharing = {entry["node"]: entry for entry in result["planned"] if entry["check"] == "sharing"}
    assert sharing["gpu-hami-1"]["limits"] == {"nvidia.com/gpu": "1"}
    assert sharing["gpu-hami-1"]["scheduler_name"] == "default-scheduler"
    assert "ran 8 of the 20 pods" in sharing["gpu-hami-1"]["note"]
    assert sharing["gpu-share-1"]["limits"] == {"aliyun.com/gpu-mem": "2"}
    assert "each asking aliyun.com/gpu-mem: 2 and expecting one GPU" in sharing["gpu-share-1"]["summary"]
    assert len(sharing["gpu-share-1"]["pods"]) == 8


def test_check_mode_on_hami_names_its_scheduler_and_memory_share():
    cluster = FakeCluster([hami_node(), gpushare_node()])

    result = run_module(cluster, {"plan": plan()}, check_mode=True)

    sharing = {entry["node"]: entry for entry in result["planned"] if entry["check"] == "sharing"}
    assert sharing["gpu-hami-1"]["limits"] == {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "2303"}
    assert sharing["gpu-hami-1"]["scheduler_name"] == "hami-scheduler"
