# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's rules: mig-parted's apply, the device plugin's resources, GFD's labels."""

import pathlib

import pytest
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import device_plugin, hardware, mig_parted

LGIP = pathlib.Path(__file__).resolve().parents[2] / "fixtures/nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"


@pytest.fixture
def a100():
    profiles = hardware.parse_lgip(LGIP.read_text())
    return hardware.Node("gpu-a100-1", "NVIDIA A100-SXM4-80GB", 8, 81920, (8, 0), "0x20b210de", profiles)


@pytest.fixture
def l4():
    return hardware.Node("gpu-l4-1", "NVIDIA L4", 4, 23034, (8, 9), "0x27b810de")


def config(strategy="none", sharing=None):
    document = {"version": "v1", "flags": {"migStrategy": strategy}}
    if sharing:
        document["sharing"] = sharing
    return document


ALL_1G = {"mig-configs": {"all-1g.10gb": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]}}


def test_lgip_profiles_of_the_recorded_a100_80gb(a100):
    assert sorted(a100.profiles) == ["1g.10gb", "1g.10gb+me", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    small = a100.profiles["1g.10gb"]
    assert (small.instances, small.memory_mib, small.slices) == (7, 9728, 1)
    assert small.attributes["multiprocessors"] == 14
    assert a100.profiles["3g.40gb"].memory_mib == 40192
    assert a100.mig_slices == 7


def test_mig_parted_applies_a_config_to_every_gpu(a100):
    gpus = mig_parted.apply(ALL_1G, "all-1g.10gb", a100, mig_parted.initial(a100))
    assert all(gpu.mig_enabled and gpu.mig_devices == ("1g.10gb",) * 7 for gpu in gpus)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 8}}, "do not fit"),
        ({"devices": "all", "mig-enabled": True, "mig-devices": {"1g.20gb": 1}}, "not supported"),
        ({"devices": "all", "mig-enabled": True, "mig-devices": {"4g.40gb": 1, "3g.40gb": 2}}, "need 10 slices"),
        ({"devices": [8], "mig-enabled": True, "mig-devices": {"1g.10gb": 1}}, "do not exist"),
    ],
)
def test_mig_parted_refuses_what_does_not_fit(a100, entry, reason):
    with pytest.raises(mig_parted.MigConfigError, match=reason):
        mig_parted.apply({"mig-configs": {"bad": [entry]}}, "bad", a100, mig_parted.initial(a100))


def test_mig_parted_fails_on_an_unknown_config_and_a_gpu_without_mig(a100, l4):
    with pytest.raises(mig_parted.MigConfigError, match="not found"):
        mig_parted.apply(ALL_1G, "all-balanced", a100, mig_parted.initial(a100))
    with pytest.raises(mig_parted.MigConfigError, match="not MIG capable"):
        mig_parted.apply(ALL_1G, "all-1g.10gb", l4, mig_parted.initial(l4))


def test_mig_parted_skips_entries_for_other_gpu_models(a100):
    other = {
        "mig-configs": {
            "c": [
                {"devices": "all", "device-filter": ["0x233010DE"], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}
            ]
        }
    }
    assert mig_parted.apply(other, "c", a100, mig_parted.initial(a100)) == mig_parted.initial(a100)


def test_time_slicing_multiplies_and_unhealthy_gpus_leave_the_allocatable(l4):
    shared = config(sharing={"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}})
    assert device_plugin.advertised(l4, mig_parted.initial(l4), shared, set()) == (
        {"nvidia.com/gpu": 16},
        {"nvidia.com/gpu": 16},
    )
    assert device_plugin.advertised(l4, mig_parted.initial(l4), shared, {3}) == (
        {"nvidia.com/gpu": 16},
        {"nvidia.com/gpu": 12},
    )


def test_rename_by_default_and_mps(l4):
    renamed = config(
        sharing={"mps": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
    )
    capacity = device_plugin.advertised(l4, mig_parted.initial(l4), renamed, set())[0]
    assert capacity == {"nvidia.com/gpu.shared": 8}
    labels = device_plugin.gfd_labels(l4, mig_parted.initial(l4), renamed)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-L4"  # renamed: no -SHARED suffix
    assert labels["nvidia.com/gpu.sharing-strategy"] == "mps"
    assert labels["nvidia.com/mps.capable"] == "true"


def test_gfd_labels_of_a_shared_gpu(l4):
    shared = config("mixed", {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}})
    labels = device_plugin.gfd_labels(l4, mig_parted.initial(l4), shared)
    assert labels == {
        "nvidia.com/gpu.product": "NVIDIA-L4-SHARED",
        "nvidia.com/gpu.count": "4",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.memory": "23034",
        "nvidia.com/gpu.family": "ada-lovelace",
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "9",
        "nvidia.com/mig.capable": "false",
        "nvidia.com/mps.capable": "false",
        "nvidia.com/mig.strategy": "mixed",
    }


def test_mig_single_advertises_mig_devices_as_gpus(a100):
    gpus = mig_parted.apply(ALL_1G, "all-1g.10gb", a100, mig_parted.initial(a100))
    assert device_plugin.advertised(a100, gpus, config("single"), set())[0] == {"nvidia.com/gpu": 56}
    labels = device_plugin.gfd_labels(a100, gpus, config("single"))
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    assert (labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.memory"]) == ("56", "9728")


def test_mig_mixed_advertises_each_profile(a100):
    half = {
        "mig-configs": {
            "h": [
                {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
                {"devices": [4, 5, 6, 7], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}},
            ]
        }
    }
    gpus = mig_parted.apply(half, "h", a100, mig_parted.initial(a100))
    capacity = device_plugin.advertised(a100, gpus, config("mixed"), set())[0]
    assert capacity == {"nvidia.com/mig-1g.10gb": 28, "nvidia.com/mig-3g.40gb": 8}
    labels = device_plugin.gfd_labels(a100, gpus, config("mixed"))
    assert labels["nvidia.com/gpu.replicas"] == "0"  # MIG-enabled GPUs are labelled without sharing
    assert labels["nvidia.com/mig-3g.40gb.product"] == "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb"
    assert labels["nvidia.com/mig-3g.40gb.slices.gi"] == "3"


def test_mig_single_with_two_profiles_is_invalid(a100):
    mixed = {
        "mig-configs": {"m": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 2, "2g.20gb": 1}}]}
    }
    gpus = mig_parted.apply(mixed, "m", a100, mig_parted.initial(a100))
    with pytest.raises(device_plugin.PluginError):
        device_plugin.advertised(a100, gpus, config("single"), set())
    assert device_plugin.gfd_labels(a100, gpus, config("single"))["nvidia.com/gpu.product"].endswith("MIG-INVALID")
