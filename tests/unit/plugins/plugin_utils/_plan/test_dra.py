# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The devices NVIDIA's DRA driver publishes for a node, as the plan predicts them (plugin_utils/_plan/dra.py).

Names and attributes follow kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin (deviceinfo.go, mig.go);
the minor numbers come from recorded `nvidia-smi -q` outputs.
"""

import re

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import (
    DraPlanError,
    binary_quantity,
    cluster_document,
    device_names,
    node_labels,
    predict_node_devices,
    rfc1123,
)

A100_PCIE = find_product("NVIDIA A100 80GB PCIe")
A100_SXM4_80GB = find_product("NVIDIA A100-SXM4-80GB")
H100 = find_product("NVIDIA H100 80GB HBM3")
L4 = find_product("NVIDIA L4")
OFF = GpuLayout.of(False)


def test_a_gpu_without_mig_is_one_device_with_what_the_catalog_knows():
    (device,) = predict_node_devices(L4, [OFF])

    assert device == {
        "name": "gpu-{minor}",
        "gpu": 0,
        "attributes": {
            "type": {"string": "gpu"},
            "productName": {"string": "NVIDIA L4"},
            "architecture": {"string": "Ada Lovelace"},
            # semver.MustParse("8.9"): the driver publishes a version with a patch of 0.
            "cudaComputeCapability": {"version": "8.9.0"},
        },
        # nvidia-smi's 23034 MiB; NVML's byte count may add less than 1 MiB.
        "capacity": {"memory": {"value": "23034Mi"}},
        "memory_exact": False,
    }


def test_mig_devices_are_named_by_profile_profile_id_and_placement():
    devices = predict_node_devices(A100_PCIE, [GpuLayout.of(True, {"3g.40gb": 2})])

    assert [device["name"] for device in devices] == ["gpu-{minor}-mig-3g40gb-9-0", "gpu-{minor}-mig-3g40gb-9-4"]
    assert [device["placement"] for device in devices] == [{"start": 0, "size": 4}, {"start": 4, "size": 4}]
    assert devices[0]["attributes"]["type"] == {"string": "mig"}
    assert devices[0]["attributes"]["profile"] == {"string": "3g.40gb"}
    assert devices[0]["attributes"]["productName"] == {"string": "NVIDIA A100 80GB PCIe"}
    # The GPU-instance profile's 40192 MiB, exactly.
    assert devices[0]["capacity"] == {"memory": {"value": "40192Mi"}}
    assert devices[0]["memory_exact"] is True


def test_a_media_extension_profile_keeps_its_suffix_as_a_dash():
    devices = predict_node_devices(H100, [GpuLayout.of(True, {"1g.10gb+me": 1, "1g.10gb": 6})])

    names = [device["name"] for device in devices]
    assert names.count("gpu-{minor}-mig-1g10gb-me-20-6") == 1
    plain = sorted(name for name in names if "-me-" not in name)
    assert plain == [f"gpu-{{minor}}-mig-1g10gb-19-{start}" for start in range(6)]


def test_mig_enabled_gpus_publish_only_their_mig_devices_and_none_without_any():
    devices = predict_node_devices(A100_PCIE, [OFF, GpuLayout.of(True), GpuLayout.of(True, {"7g.80gb": 1})])

    assert [(device["gpu"], device["name"]) for device in devices] == [
        (0, "gpu-{minor}"),
        (2, "gpu-{minor}-mig-7g80gb-0-0"),
    ]
    assert devices[1]["capacity"] == {"memory": {"value": "79Gi"}}


def test_compute_instance_profiles_are_refused_naming_the_gpu():
    refused = r"GPU 1: 2c\.3g\.40gb \+ 1c\.3g\.40gb in one 3g\.40gb GPU instance: the DRA driver knows only"
    with pytest.raises(DraPlanError, match=refused):
        predict_node_devices(A100_PCIE, [OFF, GpuLayout.of(True, {"1c.3g.40gb": 1, "2c.3g.40gb": 1})])


def minors(nvidia_smi_q):
    return [int(value) for value in re.findall(r"^\s*Minor Number\s*:\s*(\d+)\s*$", nvidia_smi_q, re.M)]


def test_names_take_the_minor_numbers_a_real_host_reports(published_nvsmi_dir):
    # An A100-SXM4-80GB host whose four GPUs have the minor numbers 3 to 6: the index is not the minor.
    recorded = minors((published_nvsmi_dir / "a100-sxm4-80gb" / "nvidia-smi-a-gls.txt").read_text(encoding="utf-8"))
    assert recorded == [3, 4, 5, 6]

    devices = predict_node_devices(A100_SXM4_80GB, [OFF, OFF, GpuLayout.of(True, {"3g.40gb": 1}), OFF])

    assert device_names(devices, recorded) == ["gpu-3", "gpu-4", "gpu-5-mig-3g40gb-9-0", "gpu-6"]


def test_names_need_a_minor_number_for_every_gpu():
    devices = predict_node_devices(L4, [OFF, OFF])

    with pytest.raises(DraPlanError, match=r"name GPUs \[0, 1\], but minor numbers are given for 1 GPUs"):
        device_names(devices, [8])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("1g10gb+me", "1g10gb-me"),
        ("1G10GB", "1g10gb"),
        ("+gfx+", "gfx"),
        ("4g.95gb.", "4g.95gb"),
    ],
)
def test_rfc1123_as_the_driver_makes_names(name, expected):
    assert rfc1123(name) == expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [(80 << 30, "80Gi"), (23034 << 20, "23034Mi"), (1023, "1023"), (0, "0"), (1 << 70, "1024Ei")],
)
def test_binary_quantity_as_kubernetes_writes_it(count, expected):
    assert binary_quantity(count) == expected


def test_the_cluster_document_names_the_driver_its_gates_and_each_pool():
    devices = predict_node_devices(L4, [OFF])
    gates = {"kube-scheduler": {"DRAConsumableCapacity": True}}
    document = cluster_document({"gpu-node-1": devices}, {"gpu-node-1": "NVIDIA L4"}, {"MPSSupport": True}, gates)

    assert document == {
        "driver": "gpu.nvidia.com",
        "driver_version": "v0.5.0",
        "feature_gates": {"MPSSupport": True},
        "kubernetes_feature_gates": gates,
        "nodes": {"gpu-node-1": {"pool": "gpu-node-1", "product": "NVIDIA L4", "devices": devices}},
    }


def test_a_dra_node_runs_the_drivers_plugin_and_neither_the_device_plugin_nor_gfd():
    assert node_labels() == {
        "gpuops.cluster/gpu-allocation": "dra",
        "nvidia.com/gpu.deploy.device-plugin": "false",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "false",
    }
