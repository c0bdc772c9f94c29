# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's DRA kubelet plugin (tests/doubles/gpu_node/dra_plugin.py): what it publishes for a node,
and how it compares with the plan's prediction (plugin_utils/_plan/dra.py) through the validation's comparison
(module_utils/_validation/dra_slices.py). The stand-in does not use the plan's code: the two agree only where both
follow the driver the same way."""

import pathlib

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.dra_slices import node_differences
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import predict_node_devices
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import dra_plugin, gpu_state, hardware
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.mig_parted import Gpu
from ansible_collections.gpuops.cluster.tests.unit.harness.dra_objects import KUBELET_PLUGIN

REPO = pathlib.Path(__file__).resolve().parents[3]
LGIP = REPO / "tests/fixtures/nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"
A100 = hardware.Node(
    "gpu-a100-1", "NVIDIA A100-SXM4-80GB", 4, 81920, (8, 0), "0x20b210de", hardware.parse_lgip(LGIP.read_text())
)
L4 = hardware.Node("gpu-l4-1", "NVIDIA L4", 2, 23034, (8, 9), "0x27b810de")


def published(node, gpus, lost=0):
    return dra_plugin.devices(node, gpu_state.render(node, gpus), gpu_state.mig_instances, lost)


def test_whole_gpus_are_published_with_what_nvml_reports():
    devices = published(L4, [Gpu(0), Gpu(1)])

    assert [device["name"] for device in devices] == ["gpu-0", "gpu-1"]
    attributes = devices[0]["attributes"]
    assert attributes["type"] == {"string": "gpu"}
    assert attributes["architecture"] == {"string": "Ada Lovelace"}
    assert attributes["cudaComputeCapability"] == {"version": "8.9.0"}
    # The double's driver 535.183.01, through semver: leading zeros dropped.
    assert attributes["driverVersion"] == {"version": "535.183.1"}
    assert attributes["uuid"]["string"].startswith("GPU-")
    assert devices[0]["capacity"] == {"memory": {"value": "23034Mi"}}


def test_mig_devices_carry_the_gpu_instance_profile_placement_and_slices():
    gpus = [Gpu(0, True, ("3g.40gb", "3g.40gb")), Gpu(1), Gpu(2, True, ()), Gpu(3)]
    devices = published(A100, gpus)

    # GPU 2 is in MIG mode with no MIG device: it publishes nothing.
    assert [device["name"] for device in devices] == ["gpu-0-mig-3g40gb-9-0", "gpu-0-mig-3g40gb-9-4", "gpu-1", "gpu-3"]
    mig = devices[0]
    assert mig["attributes"]["profile"] == {"string": "3g.40gb"}
    assert mig["attributes"]["parentUUID"] == {"string": gpu_state.render(A100, gpus)["gpus"][0]["uuid"]}
    assert mig["attributes"]["uuid"]["string"].startswith("MIG-")
    assert {key: mig["capacity"][key] for key in ("memory", "memorySlice0", "memorySlice3")} == {
        "memory": {"value": "40192Mi"},
        "memorySlice0": {"value": "1"},
        "memorySlice3": {"value": "1"},
    }
    assert "memorySlice4" not in mig["capacity"]
    assert "memorySlice3" not in devices[1]["capacity"]


def test_what_it_publishes_is_what_the_plan_predicts_for_the_same_layout():
    gpus = [Gpu(0, True, ("3g.40gb", "3g.40gb")), Gpu(1), Gpu(2, True, ("1g.10gb",) * 7), Gpu(3)]
    layouts = [
        GpuLayout.of(True, {"3g.40gb": 2}),
        GpuLayout.of(False),
        GpuLayout.of(True, {"1g.10gb": 7}),
        GpuLayout.of(False),
    ]
    planned = predict_node_devices(find_product(A100.product), layouts)

    assert node_differences(A100.name, planned, published(A100, gpus)) == []


def test_a_lost_gpu_is_no_longer_published_and_the_comparison_names_it():
    planned = predict_node_devices(find_product(L4.product), [GpuLayout.of(False)] * 2)

    assert node_differences(L4.name, planned, published(L4, [Gpu(0), Gpu(1)], lost=1)) == [
        "gpu-l4-1: GPU 1 is not published; planned gpu-{minor}"
    ]


def test_the_kubelet_plugin_runs_where_its_daemonset_selects_the_node():
    assert dra_plugin.kubelet_plugin([KUBELET_PLUGIN]) is KUBELET_PLUGIN
    labels = {"gpuops.cluster/gpu-allocation": "dra", "nvidia.com/gpu.present": "true"}
    assert dra_plugin.runs_on(KUBELET_PLUGIN, labels)
    assert not dra_plugin.runs_on(KUBELET_PLUGIN, {"gpuops.cluster/gpu-allocation": "dra"})
    assert not dra_plugin.runs_on(KUBELET_PLUGIN, {"nvidia.com/gpu.present": "true"})
    without_gpus = {**KUBELET_PLUGIN, "spec": {"template": {**KUBELET_PLUGIN["spec"]["template"], "spec": {}}}}
    assert dra_plugin.kubelet_plugin([without_gpus]) is None
