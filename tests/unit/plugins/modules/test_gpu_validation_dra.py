# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_validation on a plan with a node that offers its GPUs through DRA, against an in-memory API
(fake_kubernetes) whose ResourceSlices the GPU node stand-in's DRA kubelet plugin writes
(tests/doubles/gpu_node/dra_plugin.py): the dra check, its failure naming node and GPU, the pod checks through
claims pinned to published devices, and the input checks."""

import pathlib
from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import kube, runner
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.dra_claims import SHARED_CLAIM_PODS
from ansible_collections.gpuops.cluster.plugins.modules import gpu_validation
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import dra_plugin, gpu_state, hardware
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.mig_parted import Gpu
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_kubernetes import FakeCluster, FakeNode
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.test_gpu_validation import Exited, FakeTime

L4 = "NVIDIA L4"
INTENT = {"gpuops_gpu_product": L4, "rke2_version": "v1.36.3+rke2r1", "nvidia_driver_branch": "580"}
PLAN = plan_cluster(
    {
        "gpu-l4-1": {**INTENT, "gpuops_gpu_count": 1},
        "gpu-dra-1": {**INTENT, "gpuops_gpu_count": 2, "gpuops_gpu_allocation": "dra"},
    }
)
DRA_NODE = hardware.Node("gpu-dra-1", L4, 2, 23034, (8, 9), "0x27b810de")
LGIP = pathlib.Path(__file__).resolve().parents[4] / "tests/fixtures/nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"


def published(lost=0, node=DRA_NODE, gpus=None):
    state = gpu_state.render(node, list(gpus or (Gpu(0), Gpu(1))))
    devices = dra_plugin.devices(node, state, gpu_state.mig_instances, lost)
    return [dra_plugin.resource_slice(node.name, devices, 1)]


def uuids(slices, kind="gpu"):
    return [
        device["attributes"]["uuid"]["string"]
        for item in slices
        for device in item["spec"]["devices"]
        if device["attributes"]["type"]["string"] == kind
    ]


@pytest.fixture
def cluster():
    l4 = FakeNode("gpu-l4-1", {"cpu": "8", "nvidia.com/gpu": "1"}, {"nvidia.com/gpu": [(L4, "GPU-l4-0", None, None)]})
    # The DRA node advertises no device-plugin resource.
    return FakeCluster([l4, FakeNode("gpu-dra-1", {"cpu": "8"}, {})])


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(runner, "time", fake)
    return fake


def run_module(cluster, slices, args=None, check_mode=False, plan=PLAN):
    warnings = []

    def leave(module, **result):
        raise Exited({**result, "warnings": warnings})

    resource = cluster.resource
    resource.slices = list(slices)
    module_args = {"plan": plan.capacity, "dra": plan.dra, "kubeconfig": "/nonexistent", **(args or {})}
    with (
        patch_module_args({**module_args, "_ansible_check_mode": check_mode}),
        patch.object(
            gpu_validation, "connect", lambda module: kube.KubeApi(cluster.core, cluster.batch, None, resource)
        ),
        patch.object(AnsibleModule, "exit_json", leave),
        patch.object(AnsibleModule, "fail_json", lambda module, **r: leave(module, failed=True, **r)),
        patch.object(AnsibleModule, "warn", lambda module, text: warnings.append(text)),
        pytest.raises(Exited) as exited,
    ):
        gpu_validation.main()
    return exited.value.args[0], resource


def test_a_dra_node_published_as_planned_passes_every_check(cluster):
    slices = published()
    result, resource = run_module(cluster, slices)

    assert not result.get("failed"), result.get("msg")
    assert result["warnings"] == []
    on_dra = [item for item in result["results"] if item["node"] == "gpu-dra-1"]
    assert [(item["check"], item["resource"], item["passed"]) for item in on_dra] == [
        ("capacity", "nvidia.com/*", True),
        ("dra", "gpu.nvidia.com", True),
        ("smoke", "gpu.nvidia.com", True),
        ("cuda", "gpu.nvidia.com", True),
        ("sharing", "gpu.nvidia.com", True),
    ]
    (dra,) = [item for item in on_dra if item["check"] == "dra"]
    assert dra["reason"] == "2 devices published as planned"
    assert dra["devices"] == ["gpu-0", "gpu-1"]
    # One list of the driver's slices for the whole run.
    assert [call for call in resource.calls if isinstance(call, str)] == ["spec.driver=gpu.nvidia.com"]
    assert '<testsuite name="dra"' in result["junit_xml"]


def test_the_smoke_pod_claims_one_published_gpu_by_uuid_and_sees_exactly_it(cluster):
    slices = published()
    result, resource = run_module(cluster, slices, {"checks": ["smoke"]})

    (smoke,) = [item for item in result["results"] if item["node"] == "gpu-dra-1"]
    first = uuids(slices)[0]
    assert smoke["passed"] and smoke["devices"] == [first]
    assert smoke["reason"] == f"sees one GPU and no MIG device of NVIDIA L4, {first}"
    (job,) = [
        job
        for job in cluster.created_jobs
        if job["metadata"]["annotations"]["gpuops.cluster/validation-node"] == "gpu-dra-1"
    ]
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": job["metadata"]["name"]}]
    assert pod["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    created = [call for call in resource.calls if call[0] == "create"]
    assert created == [("create", "ResourceClaimTemplate", job["metadata"]["name"])]
    # Removed with the run's Jobs and pods: nothing is left behind.
    assert resource.objects == {}


def test_the_claim_template_pins_the_device_with_a_cel_selector(cluster):
    slices = published()
    captured = []
    create = cluster.resource.create_namespaced_resource_claim_template

    def keep(namespace, body):
        captured.append(body)
        return create(namespace, body)

    cluster.resource.create_namespaced_resource_claim_template = keep
    run_module(cluster, slices, {"checks": ["smoke"]})

    (template,) = captured
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {
        "deviceClassName": "gpu.nvidia.com",
        "allocationMode": "ExactCount",
        "count": 1,
        "selectors": [{"cel": {"expression": f'device.attributes["gpu.nvidia.com"].uuid == "{uuids(slices)[0]}"'}}],
    }


def test_a_pod_that_sees_another_device_than_its_claim_fails(cluster):
    slices = published()
    other = uuids(slices)[1]
    cluster.nodes["gpu-dra-1"].run = lambda command, seen: (0, f"GPU 0: NVIDIA L4 (UUID: {other})\n")

    result, _resource = run_module(cluster, slices, {"checks": ["smoke"]})

    assert result["failed"]
    assert f"found device {other}" in result["msg"]


def test_the_sharing_pods_share_one_claim_and_one_gpu(cluster):
    slices = published()
    result, resource = run_module(cluster, slices, {"checks": ["sharing"]})

    (sharing,) = [item for item in result["results"] if item["node"] == "gpu-dra-1"]
    assert sharing["passed"], sharing["reason"]
    assert sharing["devices"] == [uuids(slices)[0]]
    assert sharing["reason"].startswith(f"{SHARED_CLAIM_PODS} pods shared 1 devices, {SHARED_CLAIM_PODS} per device")
    claims = [call for call in resource.calls if call[0] == "create"]
    assert len(claims) == 1 and claims[0][1] == "ResourceClaim"
    jobs = [
        job
        for job in cluster.created_jobs
        if job["metadata"]["annotations"]["gpuops.cluster/validation-node"] == "gpu-dra-1"
    ]
    assert len(jobs) == SHARED_CLAIM_PODS
    assert {job["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimName"] for job in jobs} == {claims[0][2]}


def test_a_node_that_publishes_nothing_fails_its_pod_checks_without_a_pod(cluster):
    result, _resource = run_module(cluster, [], {"checks": ["smoke", "sharing"]})

    assert result["failed"]
    failed = [item for item in result["results"] if item["node"] == "gpu-dra-1"]
    assert [item["check"] for item in failed] == ["smoke", "sharing"]
    assert all("gpu-dra-1 publishes no device of DeviceClass gpu.nvidia.com" in item["reason"] for item in failed)
    assert not [
        job
        for job in cluster.created_jobs
        if job["metadata"]["annotations"]["gpuops.cluster/validation-node"] == "gpu-dra-1"
    ]


def test_mig_devices_are_claimed_through_their_own_device_class():
    a100 = hardware.Node(
        "gpu-dra-1",
        "NVIDIA A100-SXM4-80GB",
        1,
        81920,
        (8, 0),
        "0x20b210de",
        hardware.parse_lgip(LGIP.read_text()),
    )
    plan = plan_cluster(
        {
            "gpu-dra-1": {
                **INTENT,
                "gpuops_gpu_product": a100.product,
                "gpuops_gpu_count": 1,
                "gpuops_gpu_allocation": "dra",
                "gpuops_mig_config": "all-3g.40gb",
            }
        }
    )
    slices = published(node=a100, gpus=[Gpu(0, True, ("3g.40gb", "3g.40gb"))])
    cluster = FakeCluster([FakeNode("gpu-dra-1", {"cpu": "8"}, {})])

    result, _resource = run_module(cluster, slices, {"checks": ["smoke"]}, plan=plan)

    (smoke,) = result["results"]
    assert (smoke["resource"], smoke["passed"]) == ("mig.nvidia.com", True), smoke["reason"]
    assert smoke["devices"] == [uuids(slices, "mig")[0]]


def test_a_dra_node_whose_slices_differ_fails_naming_the_node_and_gpu(cluster):
    result, _resource = run_module(cluster, published(lost=1))

    assert result["failed"]
    assert "gpu-dra-1 dra gpu.nvidia.com: gpu-dra-1: GPU 1 is not published; planned gpu-{minor}" in result["msg"]
    assert result["summary"]["failed"] == 1


def test_a_dra_node_without_the_plans_dra_fails_before_any_call(cluster):
    result, resource = run_module(cluster, published(), {"dra": {}})

    assert result["failed"]
    assert "plan.nodes.gpu-dra-1.gpu_allocation: dra, but the DRA plan (option dra" in result["msg"]
    assert cluster.calls == [] and resource.calls == []


def test_check_mode_says_what_the_dra_checks_do_without_a_call(cluster):
    result, resource = run_module(cluster, published(), check_mode=True)

    on_dra = {item["check"]: item for item in result["planned"] if item["node"] == "gpu-dra-1"}
    assert on_dra["dra"]["summary"] == (
        "dra on gpu-dra-1: its ResourceSlices of gpu.nvidia.com compared with the plan's 2 devices, no pod"
    )
    assert on_dra["smoke"]["summary"] == (
        "smoke on gpu-dra-1, gpu.nvidia.com: 1 pod(s), each asking a claim for one device of DeviceClass "
        "gpu.nvidia.com and expecting one GPU and no MIG device of NVIDIA L4"
    )
    assert len(on_dra["sharing"]["pods"]) == SHARED_CLAIM_PODS
    assert resource.calls == [] and cluster.calls == []
