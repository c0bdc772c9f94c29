# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Capacity and GFD labels against real `kubectl describe node` outputs of the seed documents."""

import re

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan import capacity as capacity_module
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout, node_capacity
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import CapacityError

A100_PCIE = find_product("NVIDIA A100 80GB PCIe")
T4 = find_product("Tesla T4")
OFF = GpuLayout.of(False)


def recorded(seed_fixture, name):
    """(capacity, labels) of a fixture: the nvidia.com/* lines of Capacity and of the label dump."""
    text = seed_fixture(f"seeds/capacity/{name}")
    block = text.split("Capacity:", 1)[1].split("Allocatable:", 1)[0]
    capacity = {key: int(value) for key, value in re.findall(r"^\s*(nvidia\.com/\S+):\s+(\d+)\s*$", block, re.M)}
    labels = dict(re.findall(r'"(nvidia\.com/[^"]+)": "([^"]*)"', text))
    labels.update(re.findall(r"^\s*(nvidia\.com/[^=\s]+)=(\S+)\s*$", text, re.M))
    return capacity, labels


# The seed documents recorded GFD before k8s-device-plugin v0.15 added <resource>.sharing-strategy;
# that label is checked against internal/lm/resource.go in test_sharing_strategy_label instead.
_NEWER_THAN_SEEDS = ".sharing-strategy"


def assert_labels_match(predicted, labels, except_keys=()):
    """Every label the plan predicts is on the real node with the same value."""
    compared = {
        key: value for key, value in predicted.items() if key not in except_keys and not key.endswith(_NEWER_THAN_SEEDS)
    }
    assert compared == {key: labels.get(key) for key in compared}


def test_strategy_none_mig_disabled(seed_fixture):
    capacity, labels = recorded(seed_fixture, "a100-80gb-pcie-mig-none-mig-disabled.txt")
    planned = node_capacity(A100_PCIE, [OFF], "none")
    assert planned["resources"] == capacity == {"nvidia.com/gpu": 1}
    assert_labels_match(planned["labels"], labels)
    assert "nvidia.com/mig.strategy" not in planned["labels"]


def test_strategy_none_mig_enabled_still_advertises_the_whole_gpu(seed_fixture):
    capacity, labels = recorded(seed_fixture, "a100-80gb-pcie-mig-none-mig-enabled.txt")
    planned = node_capacity(A100_PCIE, [GpuLayout.of(True, {})], "none")
    assert planned["resources"] == capacity == {"nvidia.com/gpu": 1}
    # GFD labels a MIG-enabled GPU without sharing (replicas 0, internal/lm/mig-strategy.go). The
    # document's dump after enabling MIG still carries the gfd.timestamp of the dump taken before,
    # so its gpu.replicas is the old value and is not compared.
    assert labels["nvidia.com/gfd.timestamp"] == "1675329034"
    assert planned["labels"]["nvidia.com/gpu.replicas"] == "0"
    assert_labels_match(planned["labels"], labels, except_keys={"nvidia.com/gpu.replicas"})


def test_strategy_single(seed_fixture):
    capacity, labels = recorded(seed_fixture, "a100-80gb-pcie-mig-single-7x1g.10gb.txt")
    planned = node_capacity(A100_PCIE, [GpuLayout.of(True, {"1g.10gb": 7})], "single")
    assert planned["resources"] == capacity == {"nvidia.com/gpu": 7}
    assert_labels_match(planned["labels"], labels)
    assert planned["labels"]["nvidia.com/gpu.product"] == "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"
    assert planned["labels"]["nvidia.com/gpu.memory"] == "9728"


def test_strategy_mixed(seed_fixture):
    capacity, labels = recorded(seed_fixture, "a100-80gb-pcie-mig-mixed-3g-2g-1g.txt")
    layout = GpuLayout.of(True, {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1})
    planned = node_capacity(A100_PCIE, [layout], "mixed")
    assert planned["resources"] == capacity
    assert set(capacity) == {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"}
    assert_labels_match(planned["labels"], labels)
    assert planned["labels"]["nvidia.com/gpu.replicas"] == "0"
    assert planned["labels"]["nvidia.com/mig-3g.40gb.memory"] == "40192"


def test_time_slicing_without_rename(seed_fixture):
    capacity, labels = recorded(seed_fixture, "tesla-t4-x4-time-slicing-4.txt")
    planned = node_capacity(T4, [OFF] * 4, "none", {"replicas": 4, "rename_by_default": False})
    assert planned["resources"] == capacity == {"nvidia.com/gpu": 16}
    # The document shows three labels only ("..."): each is predicted exactly.
    assert {key: planned["labels"].get(key) for key in labels} == labels
    assert planned["labels"]["nvidia.com/gpu.product"] == "Tesla-T4-SHARED"


def test_time_slicing_one_gpu_two_replicas(seed_fixture):
    capacity, _labels = recorded(seed_fixture, "t4-x1-time-slicing-2.txt")
    planned = node_capacity(T4, [OFF], "none", {"resources": {"nvidia.com/gpu": 2}})
    assert planned["resources"] == capacity == {"nvidia.com/gpu": 2}


def test_rename_by_default_advertises_shared_and_drops_the_suffix_from_the_product():
    planned = node_capacity(T4, [OFF] * 8, "none", {"replicas": 5, "rename_by_default": True})
    assert planned["resources"] == {"nvidia.com/gpu.shared": 40}
    assert planned["labels"]["nvidia.com/gpu.product"] == "Tesla-T4"
    assert planned["labels"]["nvidia.com/gpu.replicas"] == "5"


def test_mixed_shares_only_the_overridden_mig_resource():
    layout = GpuLayout.of(True, {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1})
    planned = node_capacity(A100_PCIE, [layout] * 2, "mixed", {"resources": {"nvidia.com/mig-1g.10gb": 3}})
    assert planned["resources"] == {
        "nvidia.com/mig-1g.10gb": 12,
        "nvidia.com/mig-2g.20gb": 2,
        "nvidia.com/mig-3g.40gb": 2,
    }
    assert planned["labels"]["nvidia.com/mig-1g.10gb.product"] == "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb-SHARED"
    assert planned["labels"]["nvidia.com/mig-2g.20gb.replicas"] == "1"


def test_mixed_with_whole_gpus_beside_mig_gpus():
    layouts = [GpuLayout.of(True, {"1g.10gb": 7})] * 2 + [OFF] * 2
    planned = node_capacity(A100_PCIE, layouts, "mixed", {"replicas": 2})
    assert planned["resources"] == {"nvidia.com/gpu": 4, "nvidia.com/mig-1g.10gb": 28}
    # The MIG-disabled GPUs of the same name decide the full-GPU labels: count is every GPU.
    assert planned["labels"]["nvidia.com/gpu.count"] == "4"
    assert planned["labels"]["nvidia.com/gpu.replicas"] == "2"


def test_single_with_every_gpu_whole_is_like_none_plus_the_strategy_label():
    planned = node_capacity(A100_PCIE, [OFF] * 4, "single")
    assert planned["resources"] == {"nvidia.com/gpu": 4}
    assert planned["labels"]["nvidia.com/mig.strategy"] == "single"


def test_media_extension_profile_resource_name():
    planned = node_capacity(A100_PCIE, [GpuLayout.of(True, {"1g.10gb+me": 1})], "mixed")
    assert planned["resources"] == {"nvidia.com/mig-1g.10gb.me": 1}


def test_sharing_strategy_label():
    # baseLabeler: "time-slicing" for a resource shared with replicas > 1, else "none" (also when
    # GFD labels a MIG-enabled GPU without sharing).
    shared = node_capacity(T4, [OFF] * 4, "none", {"replicas": 4})["labels"]
    assert shared["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert node_capacity(T4, [OFF], "none")["labels"]["nvidia.com/gpu.sharing-strategy"] == "none"
    layout = GpuLayout.of(True, {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1})
    mixed = node_capacity(A100_PCIE, [layout], "mixed", {"resources": {"nvidia.com/mig-1g.10gb": 3}})["labels"]
    assert mixed["nvidia.com/mig-1g.10gb.sharing-strategy"] == "time-slicing"
    assert mixed["nvidia.com/mig-2g.20gb.sharing-strategy"] == "none"
    assert mixed["nvidia.com/gpu.sharing-strategy"] == "none"


@pytest.mark.parametrize(
    ("product_name", "profile"),
    [("NVIDIA A100-SXM4-80GB", "1g.20gb"), ("NVIDIA H200", "1g.35gb"), ("NVIDIA H200", "2g.35gb")],
)
def test_single_strategy_with_unknown_mig_memory_predicts_no_memory_label(product_name, profile):
    product = find_product(product_name)
    assert product.mig.profile(profile).memory_mib is None
    planned = node_capacity(product, [GpuLayout.of(True, {profile: 1})] * 2, "single")
    assert planned["labels"]["nvidia.com/gpu.product"].endswith(f"-MIG-{profile}")
    # The full GPU's memory would be wrong for a MIG device; no value is better than a wrong one.
    assert "nvidia.com/gpu.memory" not in planned["labels"]


def test_ada_lovelace_family():
    planned = node_capacity(find_product("NVIDIA L4"), [OFF], "none")
    assert planned["labels"]["nvidia.com/gpu.family"] == "ada-lovelace"
    assert planned["labels"]["nvidia.com/mig.capable"] == "false"


@pytest.mark.parametrize(
    ("layouts", "strategy", "expected"),
    [
        ([GpuLayout.of(True, {"1g.10gb": 2, "2g.20gb": 1})], "single", "one MIG profile per node"),
        ([GpuLayout.of(True, {"1g.10gb": 7}), OFF], "single", "same MIG mode"),
        ([GpuLayout.of(True, {})], "single", "no MIG device"),
        ([OFF], "partial", "valid: none, single, mixed"),
    ],
)
def test_layouts_the_device_plugin_refuses(layouts, strategy, expected):
    with pytest.raises(CapacityError, match=expected):
        node_capacity(A100_PCIE, layouts, strategy)


def test_mixed_advertises_nothing_for_a_mig_enabled_gpu_without_mig_devices():
    """NVIDIA/k8s-device-plugin internal/rm/device_map.go, assertAllMigDevicesAreValid (v0.16 and later).

    Only with uniform (strategy single) does "device N has no MIG devices configured" stop the plugin;
    with mixed it is a klog warning, and buildGPUDeviceMap skips the MIG-enabled GPU, so it adds nothing.
    """
    empty = GpuLayout.of(True, {})
    planned = node_capacity(A100_PCIE, [empty, GpuLayout.of(True, {"3g.40gb": 2}), OFF], "mixed")
    assert planned["resources"] == {"nvidia.com/gpu": 1, "nvidia.com/mig-3g.40gb": 2}
    assert node_capacity(A100_PCIE, [empty, empty], "mixed")["resources"] == {}
    with pytest.raises(CapacityError, match="GPU 0, 1 would have MIG enabled but no MIG device"):
        node_capacity(A100_PCIE, [empty, empty], "single")


@pytest.mark.parametrize(
    ("compute_capability", "family"),
    [("9.0", "hopper"), ("10.0", "blackwell"), ("12.0", "blackwell"), ("13.0", "rubin"), ("14.0", "undefined")],
)
def test_gfd_family_follows_get_arch_family_of_v0_20(compute_capability, family):
    """NVIDIA/k8s-device-plugin internal/lm/resource.go, getArchFamily (v0.20: case 13 returns "rubin")."""
    assert capacity_module._arch_family(compute_capability) == family
