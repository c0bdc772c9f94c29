# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_validation on a plan with a node that offers its GPUs through DRA, against an in-memory API
(fake_kubernetes) whose ResourceSlices the GPU node stand-in's DRA kubelet plugin writes
(tests/doubles/gpu_node/dra_plugin.py): the dra check, its failure naming node and GPU, and the input checks."""

from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import kube, runner
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


class FakeResource:
    """resource.k8s.io/v1 ResourceSlices, listed by driver as the module asks."""

    def __init__(self, slices):
        self.slices, self.calls = slices, []

    def list_resource_slice(self, field_selector=""):
        self.calls.append(field_selector)
        driver = field_selector.removeprefix("spec.driver=")
        return {"items": [item for item in self.slices if item["spec"]["driver"] == driver]}


def published(lost=0):
    state = gpu_state.render(DRA_NODE, [Gpu(0), Gpu(1)])
    devices = dra_plugin.devices(DRA_NODE, state, gpu_state.mig_instances, lost)
    return [dra_plugin.resource_slice(DRA_NODE.name, devices, 1)]


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


def run_module(cluster, slices, args=None, check_mode=False):
    warnings = []

    def leave(module, **result):
        raise Exited({**result, "warnings": warnings})

    resource = FakeResource(slices)
    module_args = {"plan": PLAN.capacity, "dra": PLAN.dra, "kubeconfig": "/nonexistent", **(args or {})}
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


def test_a_dra_node_published_as_planned_passes_and_the_missing_pod_checks_are_said(cluster):
    result, resource = run_module(cluster, published())

    assert not result.get("failed"), result.get("msg")
    (dra,) = [item for item in result["results"] if item["check"] == "dra"]
    assert (dra["node"], dra["resource"], dra["passed"]) == ("gpu-dra-1", "gpu.nvidia.com", True)
    assert dra["reason"] == "2 devices published as planned"
    assert dra["devices"] == ["gpu-0", "gpu-1"]
    # One list of the driver's slices for every DRA node.
    assert resource.calls == ["spec.driver=gpu.nvidia.com"]
    # No pod asks for a device-plugin resource on the DRA node.
    assert {item["node"] for item in result["results"] if item["check"] == "smoke"} == {"gpu-l4-1"}
    assert result["warnings"] == [
        "gpu-dra-1: offers its GPUs through DRA: only its published devices are compared with the plan (check dra); "
        "the pod checks of a DRA node (a pod per device class through a ResourceClaimTemplate, shared claims) are "
        "not in this version"
    ]
    assert '<testsuite name="dra"' in result["junit_xml"]


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


def test_check_mode_says_what_the_dra_check_compares(cluster):
    result, resource = run_module(cluster, published(), check_mode=True)

    (entry,) = [item for item in result["planned"] if item["check"] == "dra"]
    assert entry["summary"] == (
        "dra on gpu-dra-1: its ResourceSlices of gpu.nvidia.com compared with the plan's 2 devices, no pod"
    )
    assert resource.calls == []
