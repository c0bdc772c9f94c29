# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Verdicts from what the pods reported: smoke on recorded `nvidia-smi -L` outputs, CUDA, sharing, capacity."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import checks, evaluate
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import (
    DeviceExpectation,
    products_match,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.outcome import Outcome, pod_outcome
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans


def gpu(product, resource="nvidia.com/gpu", replicas=1):
    return DeviceExpectation(resource, "gpu", None, product, replicas, "none", 1)


def mig(product, profile, resource=None):
    return DeviceExpectation(resource or f"nvidia.com/mig-{profile}", "mig", profile, product, 1, "none", 1)


def done(message, exit_code=0, started="2026-01-01T00:00:01Z", finished="2026-01-01T00:00:11Z"):
    return Outcome(True, "terminated (Completed)", exit_code, message, started, finished)


def first_lines(text, count):
    return "\n".join(text.splitlines()[:count]) + "\n"


def test_one_whole_gpu_passes(seed_fixture):
    verdict = evaluate.smoke(gpu("Tesla T4"), done(seed_fixture("nvidia-smi/tesla-t4-seed001-L.txt")))

    assert verdict.passed, verdict.reason
    assert verdict.devices == ["GPU-491287c9-bc95-b926-a488-9503064e72a1"]


def test_two_gpus_for_one_unit_fail(seed_fixture):
    message = seed_fixture("nvidia-smi/gtx-1080ti-1060-seed002-L-2gpus.txt")

    verdict = evaluate.smoke(gpu("NVIDIA GeForce GTX 1080 Ti"), done(message))

    assert not verdict.passed
    assert verdict.reason.startswith(
        "expected one GPU and no MIG device of NVIDIA GeForce GTX 1080 Ti, found 2 GPU lines"
    )
    assert "product NVIDIA GeForce GTX 1060" in verdict.reason


def test_the_wrong_product_fails(seed_fixture):
    verdict = evaluate.smoke(gpu("NVIDIA L4"), done(seed_fixture("nvidia-smi/tesla-t4-seed001-L.txt")))

    assert not verdict.passed and "product Tesla T4" in verdict.reason


def test_a_product_outside_the_catalog_matches_by_normalized_name(seed_fixture):
    message = seed_fixture("nvidia-smi/rtx-3080ti-laptop-seed002-L.txt")

    assert evaluate.smoke(gpu("NVIDIA-GeForce-RTX-3080-Ti-Laptop-GPU"), done(message)).passed


def test_one_mig_device_of_the_profile_passes(seed_fixture):
    # The GPU line and its first MIG device: what a container with one MIG device sees.
    message = first_lines(seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-L-mig-7x1g10gb.txt"), 2)

    verdict = evaluate.smoke(mig("NVIDIA A100 80GB PCIe", "1g.10gb"), done(message))

    assert verdict.passed, verdict.reason
    assert verdict.devices == ["MIG-5a6ef5fb-e69b-5021-a35e-ad1781308f59"]


def test_mig_strategy_single_expects_the_profile_under_nvidia_com_gpu(seed_fixture):
    message = first_lines(seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-L-mig-7x1g10gb.txt"), 2)
    (probe,) = checks.smoke_probes(checks.targets({"nodes": {"a": plans.mig_single()}}))

    verdict = evaluate.smoke(probe.expect, done(message))

    # The node plan is an A100 SXM4 80GB; the recording is of an A100 80GB PCIe.
    assert not verdict.passed
    assert verdict.reason.startswith("expected one MIG 1g.10gb device of NVIDIA A100-SXM4-80GB, found product")


@pytest.mark.parametrize(
    ("fixture", "found"),
    [
        ("a100-80gb-pcie-seed004-L-mig-7x1g10gb.txt", "MIG devices ['1g.10gb', '1g.10gb', '1g.10gb'"),
        ("a100-80gb-pcie-seed004-L-mig-mixed.txt", "MIG devices ['3g.40gb', '2g.20gb', '1g.10gb']"),
    ],
)
def test_more_than_one_mig_device_fails(seed_fixture, fixture, found):
    verdict = evaluate.smoke(mig("NVIDIA A100 80GB PCIe", "1g.10gb"), done(seed_fixture(f"nvidia-smi/{fixture}")))

    assert not verdict.passed and found in verdict.reason


def test_a_whole_gpu_resource_that_shows_mig_devices_fails(seed_fixture):
    message = seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-L-mig-mixed.txt")

    verdict = evaluate.smoke(gpu("NVIDIA A100 80GB PCIe"), done(message))

    assert not verdict.passed and "3 MIG devices" in verdict.reason


def test_the_wrong_mig_profile_fails(seed_fixture):
    message = first_lines(seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-L-mig-mixed.txt"), 2)

    verdict = evaluate.smoke(mig("NVIDIA A100 80GB PCIe", "1g.10gb"), done(message))

    assert not verdict.passed and "MIG devices ['3g.40gb']" in verdict.reason


def test_a_failed_command_fails_with_its_exit_code_and_last_lines():
    message = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"

    verdict = evaluate.smoke(gpu("NVIDIA L4"), done(message, exit_code=9))

    assert not verdict.passed
    assert verdict.reason == f"exit code 9, '{message.strip()}'"


def test_published_in_container_listing_of_one_mig_device(published_nvsmi_dir):
    path = published_nvsmi_dir / "gb200" / "nvidia-smi-L-in-container-1-mig-device.txt"
    if not path.is_file():
        pytest.skip(f"{path} is not published here")

    verdict = evaluate.smoke(mig("NVIDIA GB200", "1g.24gb"), done(path.read_text(encoding="utf-8")))

    assert verdict.passed, verdict.reason


def test_products_match_the_catalog_forms():
    assert products_match("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB")
    assert products_match("Tesla T4", "Tesla T4")
    assert not products_match("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe")


VECTOR_ADD = (
    "[Vector addition of 50000 elements]\nCopy input data from the host memory to the CUDA device\n"
    "CUDA kernel launch with 196 blocks of 256 threads\nCopy output data from the CUDA device to the host memory\n"
    "Test PASSED\nDone\n"
)


def test_cuda_passes_on_exit_0_and_test_passed():
    assert evaluate.cuda(done(VECTOR_ADD)).passed


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (done(VECTOR_ADD.replace("Test PASSED\n", "")), "exit code 0 but no 'Test PASSED'"),
        (
            done("Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n", 1),
            "exit code 1, 'Failed to allocate device vector A (error code no CUDA-capable device is detected)!'",
        ),
    ],
)
def test_cuda_fails(outcome, reason):
    verdict = evaluate.cuda(outcome)

    assert not verdict.passed and verdict.reason.startswith(reason)


def sharing_group(replicas=2, devices=2, cap=32):
    plan = plans.time_sliced(replicas=replicas)
    plan = dict(plan, resources={"nvidia.com/gpu": replicas * devices})
    (group,) = checks.sharing_groups(checks.targets({"nodes": {"gpu-l4-1": plan}}), cap)
    return group


def l4(uuid):
    return done(f"GPU 0: NVIDIA L4 (UUID: {uuid})\n")


def test_sharing_passes_when_each_device_is_seen_replicas_times():
    group = sharing_group(replicas=2, devices=2)

    verdict = evaluate.sharing(group, [l4("GPU-a"), l4("GPU-b"), l4("GPU-a"), l4("GPU-b")])

    assert verdict.passed, verdict.reason
    assert verdict.reason == "4 pods shared 2 devices, 2 per device (time-slicing)"
    assert verdict.devices == ["GPU-a", "GPU-b"]


def test_sharing_fails_naming_the_uuids_and_counts():
    group = sharing_group(replicas=2, devices=2)

    verdict = evaluate.sharing(group, [l4("GPU-a"), l4("GPU-a"), l4("GPU-a"), l4("GPU-b")])

    assert not verdict.passed
    assert verdict.reason == "expected each device shared by 2 pods, found GPU-a by 3, GPU-b by 1"


def test_sharing_says_when_the_pods_did_not_overlap():
    group = sharing_group(replicas=2, devices=1)
    early = done("GPU 0: NVIDIA L4 (UUID: GPU-a)\n", started="2026-01-01T00:00:01Z", finished="2026-01-01T00:00:02Z")
    late = done("GPU 0: NVIDIA L4 (UUID: GPU-b)\n", started="2026-01-01T00:00:05Z", finished="2026-01-01T00:00:06Z")

    verdict = evaluate.sharing(group, [early, late])

    assert not verdict.passed and "raise sharing_hold_seconds" in verdict.reason


def test_sharing_fails_when_a_pod_fails_or_never_ran():
    group = sharing_group(replicas=2, devices=1)
    pending = Outcome(False, "not scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")

    verdict = evaluate.sharing(group, [l4("GPU-a"), pending])

    assert not verdict.passed
    assert verdict.reason.startswith("1 of 2 pods failed: pod 1: not scheduled (Unschedulable)")


def test_pods_that_failed_alike_are_named_once_as_ranges():
    group = sharing_group(replicas=4, devices=2)
    pending = Outcome(False, "not scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")

    verdict = evaluate.sharing(group, [l4("GPU-a")] * 3 + [pending] * 4 + [l4("GPU-b")])

    assert verdict.reason == f"4 of 8 pods failed: pods 3-6: {pending.state}"


def test_a_bound_pod_without_container_names_its_node():
    outcome = pod_outcome({"spec": {"nodeName": "gpu-l4-1"}, "status": {"phase": "Pending"}})

    assert outcome.state == "scheduled on gpu-l4-1, but its kubelet reported no container (pod Pending)"


def test_a_capped_sharing_check_only_checks_the_upper_bound():
    group = sharing_group(replicas=4, devices=4, cap=6)

    verdict = evaluate.sharing(group, [l4("GPU-a")] * 4 + [l4("GPU-b")] * 2)
    too_many = evaluate.sharing(group, [l4("GPU-a")] * 5 + [l4("GPU-b")])

    assert verdict.passed and "ran 6 of the 16 pods the node advertises" in verdict.reason
    assert not too_many.passed and "GPU-a by 5" in too_many.reason


def test_capacity_equal_passes():
    verdict = evaluate.capacity({"nvidia.com/gpu": 16}, {"cpu": "8", "nvidia.com/gpu": "16", "memory": "1Gi"})

    assert verdict.passed and verdict.reason == "allocatable equals the plan: nvidia.com/gpu=16"


@pytest.mark.parametrize(
    ("allocatable", "reason"),
    [
        ({"nvidia.com/gpu": "15"}, "nvidia.com/gpu expected 16, found 15"),
        ({}, "nvidia.com/gpu expected 16, found none"),
        (
            {"nvidia.com/gpu": "16", "nvidia.com/gpu.shared": "4"},
            "nvidia.com/gpu.shared not planned, found 4",
        ),
    ],
)
def test_capacity_differences_fail(allocatable, reason):
    verdict = evaluate.capacity({"nvidia.com/gpu": 16}, allocatable)

    assert not verdict.passed and verdict.reason == reason


def test_a_resource_left_at_zero_is_not_extra():
    assert evaluate.capacity({"nvidia.com/gpu": 4}, {"nvidia.com/gpu": "4", "nvidia.com/mig-1g.10gb": "0"}).passed


def pod(status):
    return {"metadata": {"name": "p"}, "status": status}


def test_pod_outcome_reads_the_terminated_state():
    outcome = pod_outcome(
        pod({"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 2, "message": "m"}}}]})
    )

    assert (outcome.finished, outcome.exit_code, outcome.message) == (True, 2, "m")


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (
            {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                    }
                ],
            },
            "not scheduled (Unschedulable): 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        ),
        (
            {
                "phase": "Pending",
                "containerStatuses": [
                    {"state": {"waiting": {"reason": "ErrImageNeverPull", "message": "image is not present"}}}
                ],
            },
            "container waiting (ErrImageNeverPull: image is not present)",
        ),
        (
            {"phase": "Running", "containerStatuses": [{"state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]},
            "still running since 2026-01-01T00:00:00Z",
        ),
    ],
)
def test_pod_outcome_of_an_unfinished_pod_says_why(status, state):
    outcome = pod_outcome(pod(status))

    assert not outcome.finished and outcome.state == state


def test_a_pod_stopped_by_its_deadline_is_finished_with_the_reason():
    outcome = pod_outcome(pod({"phase": "Failed", "reason": "DeadlineExceeded", "message": "Pod was active too long"}))

    assert outcome.finished and outcome.exit_code is None
    assert evaluate.smoke(gpu("NVIDIA L4"), outcome).reason == (
        "pod Failed without a container result: DeadlineExceeded: Pod was active too long"
    )
