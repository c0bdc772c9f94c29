# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mig-parted v1 configs: the built-in ones per product, the strict lint, entry selection, the merge."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import all_products, find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import (
    builtin_mig_configs,
    entry_selects_gpu,
    gpu_layout,
    lint_mig_parted_document,
    mig_parted_document,
)

MIG_PRODUCTS = [p for p in all_products() if p.mig]
A100_80GB = find_product("NVIDIA A100-SXM4-80GB")


def test_builtin_configs_of_non_mig_product():
    assert builtin_mig_configs(find_product("NVIDIA L4")) == {
        "all-disabled": [{"devices": "all", "mig-enabled": False}]
    }


def test_h100_80gb_builtin_names_follow_mig_parted():
    names = set(builtin_mig_configs(find_product("NVIDIA H100 80GB HBM3")))
    assert names == {
        "all-disabled", "all-enabled", "all-balanced", "all-1g.10gb", "all-1g.10gb.me", "all-1g.20gb",
        "all-2g.20gb", "all-3g.40gb", "all-4g.40gb", "all-7g.80gb",
    }  # fmt: skip


# NVIDIA/mig-parted examples/config.yaml, custom-config (as a Python mapping).
MIG_PARTED_CUSTOM = [
    {"devices": [0, 1, 2, 3], "mig-enabled": False},
    {"devices": [4], "mig-enabled": True, "mig-devices": {"1g.5gb": 7}},
    {"devices": [5], "mig-enabled": True, "mig-devices": {"2g.10gb": 3}},
    {"devices": [6], "mig-enabled": True, "mig-devices": {"3g.20gb": 2}},
    {"devices": [7], "mig-enabled": True, "mig-devices": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}},
]


def test_upstream_example_lints_clean_and_selects_per_gpu():
    doc = {"version": "v1", "mig-configs": {"custom-config": MIG_PARTED_CUSTOM}}
    assert lint_mig_parted_document(doc) == []
    product = find_product("A100-SXM4-40GB")
    assert gpu_layout(MIG_PARTED_CUSTOM, 2, product) == (False, {})
    assert gpu_layout(MIG_PARTED_CUSTOM, 7, product) == (True, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1})
    with pytest.raises(MigLayoutError, match="no entry of the MIG config selects GPU 8"):
        gpu_layout(MIG_PARTED_CUSTOM, 8, product)


def test_gpu_layout_honours_device_filter():
    entries = [
        {"device-filter": ["0x20B010DE", "0x20B110DE"], "devices": "all", "mig-enabled": True, "mig-devices": {}},
        {"device-filter": "0x20B210DE", "devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
    ]
    assert gpu_layout(entries, 3, A100_80GB) == (True, {"1g.10gb": 7})
    assert gpu_layout(entries, 0, find_product("A100-PCIE-40GB")) == (True, {})
    with pytest.raises(MigLayoutError, match="no entry"):
        gpu_layout(entries, 0, find_product("NVIDIA H100 NVL"))
    with pytest.raises(MigLayoutError, match="entries 0, 1 of the MIG config select GPU 1"):
        gpu_layout([{"devices": "all", "mig-enabled": False}, {"devices": [1], "mig-enabled": False}], 1, A100_80GB)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"version": "v1", "mig-configs": {"custom-a": [{"devices": "all", "mig-enabled": True, "mig-device": {}}]}},
            "mig-configs.custom-a[0].mig-device: unknown key; valid keys: devices, device-filter, mig-devices, "
            "mig-enabled",
        ),
        ({"version": "v2", "mig-configs": {"a": [{"devices": "all", "mig-enabled": False}]}}, "version: must be v1"),
        ({"version": "v1", "mig-configs": {"a": []}}, "mig-configs.a: must be a non-empty list of entries"),
        ({"version": "v1", "mig-configs": {}}, "mig-configs: must be a non-empty mapping"),
        ({"version": "v1", "mig-configs": {"a": [{"devices": "all"}]}}, "mig-configs.a[0]: missing required key mig"),
        (
            {"version": "v1", "mig-configs": {"a": [{"devices": [0, -1], "mig-enabled": False}]}},
            'mig-configs.a[0].devices: must be "all" or a list of GPU indexes',
        ),
        (
            {"version": "v1", "mig-configs": {"a": [{"devices": "all", "mig-enabled": "yes"}]}},
            "mig-configs.a[0].mig-enabled: must be true or false",
        ),
        (
            {
                "version": "v1",
                "mig-configs": {"a": [{"devices": "all", "mig-enabled": False, "mig-devices": {"1g.10gb": 1}}]},
            },
            "mig-configs.a[0].mig-devices: not allowed with mig-enabled false",
        ),
        (
            {
                "version": "v1",
                "mig-configs": {"a": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": -1}}]},
            },
            "mig-configs.a[0].mig-devices.1g.10gb: count must be an integer >= 0",
        ),
        (
            {
                "version": "v1",
                "mig-configs": {"a": [{"devices": "all", "mig-enabled": True, "mig-devices": {"big": 1}}]},
            },
            "mig-configs.a[0].mig-devices: 'big' is not a MIG profile name",
        ),
        (
            {
                "version": "v1",
                "mig-configs": {"a": [{"devices": "all", "mig-enabled": False, "device-filter": "20B2"}]},
            },
            "mig-configs.a[0].device-filter: '20B2' is not a PCI device id like 0x20B210DE",
        ),
        ({"version": "v1", "mig-configs": {"a": [{}]}, "extra": 1}, "extra: unknown key; valid keys"),
        ([], "document: must be a mapping"),
    ],
)
def test_lint_names_the_path(doc, message):
    errors = lint_mig_parted_document(doc)
    assert any(error.startswith(message) for error in errors), errors


def test_merged_document_lets_user_configs_override():
    builtins = builtin_mig_configs(A100_80GB)
    user = {"version": "v1", "mig-configs": {"all-balanced": [{"devices": "all", "mig-enabled": False}]}}
    merged = mig_parted_document([A100_80GB], user["mig-configs"])
    assert merged["version"] == "v1"
    assert merged["mig-configs"]["all-balanced"] == [{"devices": "all", "mig-enabled": False}]
    assert merged["mig-configs"]["all-1g.10gb"] == builtins["all-1g.10gb"]
    merged["mig-configs"]["all-1g.10gb"][0]["mig-devices"]["1g.10gb"] = 1
    assert builtins["all-1g.10gb"][0]["mig-devices"]["1g.10gb"] == 7


def test_device_filter_matches_the_device_id_the_gpu_reports():
    """As mig-parted: the filter is compared with the GPU's own PCI id; the catalog ids only without one."""
    product = find_product("A100-PCIE-40GB")  # the catalog lists 0x20B110DE and 0x20F110DE for it
    entry = {"devices": "all", "device-filter": "0x20F110DE", "mig-enabled": False}
    assert entry_selects_gpu(entry, 0, product) is True
    assert entry_selects_gpu(entry, 0, product, device_id="0x20f110de") is True
    assert entry_selects_gpu(entry, 0, product, device_id="0x20B110DE") is False
    with pytest.raises(MigLayoutError, match="PCI 0x20B110DE"):
        gpu_layout([entry], 0, product, "0x20B110DE")


def _doc(*entries):
    return {"version": "v1", "mig-configs": {"a": list(entries)}}


def test_mig_enabled_without_mig_devices_is_rejected():
    """NVIDIA/mig-parted api/spec/v1/spec.go MigConfigSpec.UnmarshalJSON: "missing required field
    'mig-devices' when 'mig-enabled' is true" (and mig-parted parses the whole file first)."""
    errors = lint_mig_parted_document(_doc({"devices": "all", "mig-enabled": True}))
    assert errors == [
        "mig-configs.a[0]: missing required key mig-devices when mig-enabled is true; valid: a mapping of profile "
        "to count, or {} for MIG enabled without MIG devices (mig-parted rejects the whole document)"
    ]
    assert lint_mig_parted_document(_doc({"devices": "all", "mig-enabled": True, "mig-devices": None}))


def test_mig_devices_whose_counts_are_all_zero_are_rejected():
    """NVIDIA/mig-parted pkg/types/mig_config.go MigConfig.AssertValidFormat (AssertValid in older
    releases): "all counts for all MigProfiles are 0"; an empty mapping returns nil (len(m) == 0)."""
    errors = lint_mig_parted_document(_doc({"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 0}}))
    assert len(errors) == 1 and errors[0].startswith("mig-configs.a[0].mig-devices: all counts are 0"), errors
    # One count above 0 is enough; {} is the format mig-parted's own all-enabled uses.
    assert not lint_mig_parted_document(
        _doc({"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 0, "3g.40gb": 2}})
    )
    assert not lint_mig_parted_document(_doc({"devices": "all", "mig-enabled": True, "mig-devices": {}}))


@pytest.mark.parametrize("product", [*MIG_PRODUCTS, find_product("NVIDIA L4")], ids=lambda p: p.name)
def test_builtin_configs_pass_mig_parteds_format_rules(product):
    """Every built-in document is one mig-parted accepts (api/spec/v1/spec.go MigConfigSpec.UnmarshalJSON,
    pkg/types/mig_config.go AssertValidFormat); all-enabled is written as NVIDIA's
    deployments/systemd/config-default.yaml writes it: mig-enabled true, mig-devices {}."""
    doc = mig_parted_document([product])
    assert lint_mig_parted_document(doc) == []
    if product.mig:
        assert doc["mig-configs"]["all-enabled"] == [{"devices": "all", "mig-enabled": True, "mig-devices": {}}]


@pytest.mark.parametrize(
    "entry",
    [
        {"devices": "all", "mig-enabled": False, "mig-devices": {}},
        {"devices": [], "mig-enabled": False},
        {"devices": [0], "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 2}},
        {"devices": "all", "mig-enabled": True, "mig-devices": {"1c.1g.10gb+me": 1}},
        {"devices": "all", "device-filter": "0x20B210DE:0x147F10DE", "mig-enabled": False},
        {"devices": "all", "device-filter": ["0x20B210DE:0x147F10DE", "0x20B510DE"], "mig-enabled": False},
    ],
)
def test_lint_accepts_what_mig_parted_accepts(entry):
    """api/spec/v1/spec.go MigConfigSpec.UnmarshalJSON (mig-devices {} with mig-enabled false: len 0; devices
    any []int), go-nvlib pkg/nvlib/device/mig_profile.go parseMigProfile ("Cc.Gg.Mgb"), mig-parted
    pkg/types/device.go NewDeviceIDFromString ("<devicevendor>:<subsystemdevicevendor>")."""
    assert lint_mig_parted_document(_doc(entry)) == []


def test_empty_devices_list_selects_no_gpu():
    """api/spec/v1/helpers.go MatchesDevices: an empty list matches no index."""
    assert entry_selects_gpu({"devices": [], "mig-enabled": False}, 0, A100_80GB) is False


def test_subsystem_filter_matches_by_device_id_in_the_plan_and_by_both_ids_on_a_host():
    """mig-parted pkg/types/device.go DeviceID.Matches compares the subsystem id too when the filter has one;
    the plan (no reported id) can only compare the device id. On a host both reported ids are compared, and
    a GPU that reported no subsystem id is refused rather than guessed."""
    entry = {"devices": "all", "device-filter": "0x20B210DE:0x147F10DE", "mig-enabled": False}
    assert entry_selects_gpu(entry, 0, A100_80GB) is True
    assert entry_selects_gpu(entry, 0, find_product("NVIDIA H100 80GB HBM3")) is False
    assert entry_selects_gpu(entry, 0, A100_80GB, device_id="0x20B510DE") is False
    assert entry_selects_gpu(entry, 0, A100_80GB, "0x20B210DE", "0x147F10DE") is True
    assert entry_selects_gpu(entry, 0, A100_80GB, "0x20B210DE", "0x151D10DE") is False
    with pytest.raises(MigLayoutError, match="names a subsystem id, and nvidia-smi reported none for GPU 0"):
        entry_selects_gpu(entry, 0, A100_80GB, device_id="0x20B210DE")
