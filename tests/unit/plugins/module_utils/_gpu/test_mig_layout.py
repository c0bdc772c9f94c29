# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MIG layout planner.

The planner is checked against an independent brute force: every accepted layout is re-verified
slice by slice, and every rejected one is shown to have no arrangement at all.
"""

import itertools
import re
import time

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    GiProfile,
    MigSpec,
    Product,
    all_products,
    find_product,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import (
    builtin_mig_configs,
    gpu_layout,
    lint_mig_parted_document,
    mig_parted_document,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import (
    CI_PROFILE_IDS,
    _pack,
    mig_device_profile,
    plan_layout,
)
from hypothesis import given, settings
from hypothesis import strategies as st

MIG_PRODUCTS = [p for p in all_products() if p.mig]
A100_80GB = find_product("NVIDIA A100-SXM4-80GB")
A100_80GB_PCIE = find_product("NVIDIA A100 80GB PCIe")
CREATED_GI = re.compile(
    r"Successfully created GPU instance ID\s+\d+ on GPU\s+\d+ using profile MIG (\S+) \(ID\s+(\d+)\)"
)
LGI_ROW = re.compile(r"^\|\s+\d+\s+MIG (\S+)\s+(\d+)\s+\d+\s+(\d+):(\d+)\s")


def brute_force_placeable(mig, layout):
    """True when some choice of distinct starts per profile leaves every memory slice used at most once."""
    profiles = [(mig.profile(name), count) for name, count in layout.items() if count]
    if sum(p.compute_slices * n for p, n in profiles) > mig.compute_slices:
        return False
    choices = [itertools.combinations(p.placements, n) for p, n in profiles]
    for starts_per_profile in itertools.product(*choices):
        slices = [
            start + k
            for (profile, _count), starts in zip(profiles, starts_per_profile, strict=True)
            for start in starts
            for k in range(profile.memory_slices)
        ]
        if len(slices) == len(set(slices)) and all(s < mig.memory_slices for s in slices):
            return True
    return False


def within_catalog_limits(mig, layout):
    media = [name for name, count in layout.items() if count and name.endswith(("+me", "+me.all"))]
    return len(media) <= 1 and all(n <= mig.profile(name).max_instances for name, n in layout.items())


def assert_valid_plan(product, layout, plan):
    mig = product.mig
    assert sorted(i.profile.name for i in plan) == sorted(n for n, c in layout.items() for _instance in range(c))
    used = []
    for instance in plan:
        assert instance.start in instance.profile.placements
        assert instance.start + instance.size <= mig.memory_slices
        used += range(instance.start, instance.start + instance.size)
    assert len(used) == len(set(used)), plan
    assert sum(i.profile.compute_slices for i in plan) <= mig.compute_slices
    assert within_catalog_limits(mig, layout)
    sizes = [i.size for i in plan]
    assert sizes == sorted(sizes, reverse=True), "creation order must be largest first"


def check_against_brute_force(product, layout):
    try:
        plan = plan_layout(product, layout)
    except MigLayoutError as error:
        assert not (within_catalog_limits(product.mig, layout) and brute_force_placeable(product.mig, layout)), (
            layout,
            str(error),
        )
        return False
    assert_valid_plan(product, layout, plan)
    return True


@st.composite
def product_and_layout(draw):
    product = draw(st.sampled_from(MIG_PRODUCTS))
    profiles = draw(st.lists(st.sampled_from(product.mig.profiles), min_size=1, max_size=4, unique=True))
    layout = {p.name: draw(st.integers(min_value=0, max_value=p.max_instances + 1)) for p in profiles}
    return product, layout


@settings(max_examples=400, deadline=None)
@given(product_and_layout())
def test_property_accepted_is_placeable_and_rejected_is_not(case):
    check_against_brute_force(*case)


def geometry(product):
    return tuple((p.compute_slices, p.memory_slices, p.max_instances, p.placements) for p in product.mig.profiles)


# One product per distinct slice geometry (A100/H100/H200 share one, A30 has its own).
@pytest.mark.parametrize("product", {geometry(p): p for p in MIG_PRODUCTS}.values(), ids=lambda p: p.name)
def test_every_layout_within_max_instances_agrees_with_brute_force(product):
    profiles = product.mig.profiles
    accepted = 0
    for counts in itertools.product(*(range(p.max_instances + 1) for p in profiles)):
        # Layouts two or more compute slices over are rejected by count alone: skip them, so the 11
        # profiles of the RTX PRO 6000 (216000 combinations) stay fast.
        if sum(p.compute_slices * n for p, n in zip(profiles, counts, strict=True)) > product.mig.compute_slices + 1:
            continue
        accepted += check_against_brute_force(product, {p.name: n for p, n in zip(profiles, counts, strict=True)})
    assert accepted > 10


def test_seed_cgi_examples_are_accepted(seed_fixture):
    for fixture, expected in (
        ("nvidia-smi/a100-80gb-pcie-seed004-mig-cgi-9-14-19-C.txt", {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}),
        ("nvidia-smi/a100-80gb-pcie-seed004-mig-cgi-19x7-C.txt", {"1g.10gb": 7}),
    ):
        created = CREATED_GI.findall(seed_fixture(fixture))
        layout = {}
        for name, profile_id in created:
            assert A100_80GB_PCIE.mig.profile(name).profile_id == int(profile_id)
            layout[name] = layout.get(name, 0) + 1
        assert layout == expected
        assert_valid_plan(A100_80GB_PCIE, layout, plan_layout(A100_80GB_PCIE, layout))


def test_published_lgi_placements_are_allowed(published_nvsmi_dir):
    """Every placement a real GPU reported in `nvidia-smi mig -lgi` is one the catalog allows."""
    files = {
        "a100-sxm4-40gb/mig-lgi-2g10gb-5x1g5gb-nvidia-guide.txt": "NVIDIA A100-SXM4-40GB",
        "a100-sxm4-40gb/mig-lgi-2x3g20gb-nvidia-guide.txt": "NVIDIA A100-SXM4-40GB",
        "a100-80gb-pcie/mig-lgi.txt": "NVIDIA A100 80GB PCIe",
        "h100-80gb-hbm3/notes-mig-lgi-7x1g10gb.txt": "NVIDIA H100 80GB HBM3",
    }
    for relative, product_name in files.items():
        product = find_product(product_name)
        rows = [LGI_ROW.match(line) for line in (published_nvsmi_dir / relative).read_text().splitlines()]
        rows = [row for row in rows if row]
        assert rows, relative
        layout = {}
        for name, profile_id, start, size in (row.groups() for row in rows):
            profile = product.mig.profile(name)
            assert (profile.profile_id, profile.memory_slices) == (int(profile_id), int(size))
            assert int(start) in profile.placements
            layout[name] = layout.get(name, 0) + 1
        plan_layout(product, layout)


def test_driver_order_failure_is_a_placeable_layout(published_nvsmi_dir):
    # -cgi 19,19,14,9 failed with Insufficient Resources; the same set, largest first, succeeded.
    text = published_nvsmi_dir / "a100-sxm4-40gb/mig-cgi-19-19-14-9-error-insufficient-resources-nvidia-guide.txt"
    assert "Insufficient Resources" in text.read_text()
    product = find_product("NVIDIA A100-SXM4-40GB")
    plan = plan_layout(product, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1})
    assert plan[0].profile.name == "3g.20gb"


def test_deepops_trap_is_rejected():
    with pytest.raises(MigLayoutError) as error:
        plan_layout(A100_80GB, {"7g.80gb": 2})
    assert str(error.value) == "profile 7g.80gb: 2 instances requested, at most 1 fit on NVIDIA A100-SXM4-80GB"


def test_unknown_profile_lists_valid_ones():
    with pytest.raises(MigLayoutError) as error:
        plan_layout(A100_80GB, {"1g.5gb": 1})
    assert str(error.value) == (
        "unknown profile 1g.5gb for NVIDIA A100-SXM4-80GB; valid: "
        "1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"
    )


def test_two_3g_and_a_1g_cannot_be_placed():
    with pytest.raises(MigLayoutError) as error:
        plan_layout(A100_80GB, {"3g.40gb": 2, "1g.10gb": 1})
    assert str(error.value) == (
        "2x3g.40gb + 1x1g.10gb uses 7 of 7 compute slices but cannot be placed: it needs 9 memory slices and "
        "NVIDIA A100-SXM4-80GB has 8; valid: 2x3g.40gb"
    )


def test_over_compute_budget_names_the_budget():
    with pytest.raises(MigLayoutError) as error:
        plan_layout(A100_80GB, {"4g.40gb": 1, "2g.20gb": 2})
    assert str(error.value) == (
        "1x4g.40gb + 2x2g.20gb needs 8 compute slices but NVIDIA A100-SXM4-80GB has 7; valid: 1x4g.40gb + 1x2g.20gb"
    )


def test_unplaceable_within_budgets_names_the_placements():
    # Within budgets every catalog layout is placeable, so this test double pins two profiles to slice 0.
    pinned = [GiProfile(name, i, 1, 1, 1, (0,), None) for i, name in enumerate(("1g.1gb", "1g.2gb"))]
    product = Product("Pinned GPU", (), (), 2048, "ampere", "8.0", MigSpec(2, 2, tuple(pinned)))
    with pytest.raises(MigLayoutError) as error:
        plan_layout(product, {"1g.1gb": 1, "1g.2gb": 1})
    assert str(error.value) == (
        "1x1g.1gb + 1x1g.2gb uses 2 of 2 compute slices but cannot be placed: 1g.1gb starts at {0} and takes 1; "
        "1g.2gb starts at {0} and takes 1 of the 2 memory slices of Pinned GPU and no arrangement avoids an overlap; "
        "valid: 1x1g.1gb"
    )


def test_only_one_media_extension_instance():
    a30 = find_product("NVIDIA A30")
    with pytest.raises(MigLayoutError, match=r"1g\.6gb\+me and 2g\.12gb\+me"):
        plan_layout(a30, {"1g.6gb+me": 1, "2g.12gb+me": 1})
    with pytest.raises(MigLayoutError, match="at most 1"):
        plan_layout(A100_80GB, {"1g.10gb+me": 2})


@pytest.mark.parametrize("count", [-1, 1.0, "2", True, None])
def test_bad_counts_are_errors(count):
    with pytest.raises(MigLayoutError, match="non-negative integer"):
        plan_layout(A100_80GB, {"1g.10gb": count})


def test_zero_counts_are_ignored_and_non_mig_products_refuse_layouts():
    assert plan_layout(A100_80GB, {"1g.10gb": 0, "7g.80gb": 1})[0].profile.name == "7g.80gb"
    assert plan_layout(A100_80GB, {}) == ()
    t4 = find_product("Tesla T4")
    assert plan_layout(t4, {}) == ()
    with pytest.raises(MigLayoutError, match="Tesla T4 does not support MIG"):
        plan_layout(t4, {"1g.5gb": 1})
    with pytest.raises(MigLayoutError, match="must be a mapping"):
        plan_layout(A100_80GB, ["1g.10gb"])


def test_plans_are_memoised_and_fast():
    layout = {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
    assert plan_layout(A100_80GB, layout) is plan_layout(A100_80GB, dict(reversed(layout.items())))
    began = time.perf_counter()
    for _repeat in range(1000):
        plan_layout(A100_80GB, layout)
    assert time.perf_counter() - began < 1.0


# mig-parted deployments/systemd/config-default.yaml, all-balanced per device-filter.
MIG_PARTED_BALANCED = {
    "NVIDIA A100-SXM4-40GB": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
    "NVIDIA A100-PCIE-40GB": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
    "NVIDIA A100-SXM4-80GB": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA A100 80GB PCIe": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA H100 80GB HBM3": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA H100 PCIe": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA H100 NVL": {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1},
    "NVIDIA H200": {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1},
    "NVIDIA H200 NVL": {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1},
    "NVIDIA A30": {"1g.6gb": 2, "2g.12gb": 1},
    # The products added from mig-parted's config-default.yaml device-filters.
    "NVIDIA A800-SXM4-80GB": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA A800 80GB PCIe": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA A800 40GB Active": {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1},
    "NVIDIA H800": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA H800 PCIe": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    "NVIDIA H800 NVL": {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1},
    "NVIDIA H20": {"1g.12gb": 2, "2g.24gb": 1, "3g.48gb": 1},
    "NVIDIA GH200 480GB": {"1g.12gb": 2, "2g.24gb": 1, "3g.48gb": 1},
    "NVIDIA GH200 144G HBM3e": {"1g.18gb": 2, "2g.36gb": 1, "3g.72gb": 1},
    "NVIDIA B200": {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1},
    "NVIDIA GB200": {"1g.24gb": 2, "2g.47gb": 1, "3g.95gb": 1},
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": {"1g.24gb": 2, "2g.48gb": 1},
}


def test_rtx_pro_6000_mixed_layout_is_placed_as_the_gpu_did():
    # rtx-pro-6000-blackwell-server/mig-lgi-i0-mixed.txt: 2g.48gb at 0:6, 1g.24gb at 6:3 and 9:3.
    product = find_product("NVIDIA RTX PRO 6000 Blackwell Server Edition")
    placed = plan_layout(product, {"1g.24gb": 2, "2g.48gb": 1})
    assert [(p.profile.name, p.start) for p in placed] == [("2g.48gb", 0), ("1g.24gb", 6), ("1g.24gb", 9)]
    with pytest.raises(MigLayoutError, match=r"1g\.24gb\+me and 2g\.48gb\+me\.all"):
        plan_layout(product, {"1g.24gb+me": 1, "2g.48gb+me.all": 1})
    with pytest.raises(MigLayoutError, match=r"valid: 1x4g\.96gb"):
        plan_layout(product, {"4g.96gb": 1, "1g.24gb-me": 1})


@pytest.mark.parametrize("product", MIG_PRODUCTS, ids=lambda p: p.name)
def test_builtin_configs_are_valid_and_plannable(product):
    configs = builtin_mig_configs(product)
    assert configs["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    assert configs["all-enabled"] == [{"devices": "all", "mig-enabled": True, "mig-devices": {}}]
    assert configs["all-balanced"][0]["mig-devices"] == MIG_PARTED_BALANCED[product.name]
    for profile in product.mig.profiles:
        if product.name == "NVIDIA H200 NVL":
            continue  # mig-parted offers it all-balanced only, see test_h200_nvl_gets_only_what_mig_parted_offers
        entry = configs["all-" + profile.name.replace("+", ".")][0]
        assert entry["mig-devices"] == {profile.name: profile.max_instances}
    assert lint_mig_parted_document(mig_parted_document([product])) == []
    for entries in configs.values():
        enabled, devices = gpu_layout(entries, 0, product)
        assert enabled == entries[0]["mig-enabled"]
        assert_valid_plan(product, devices, plan_layout(product, devices))


def test_h200_nvl_gets_only_what_mig_parted_offers():
    # mig-parted config-default.yaml: all-1g.35gb ... all-7g.141gb are "H200-141GB" configs; H200 NVL
    # (0x233B10DE) appears only in all-balanced.
    nvl = builtin_mig_configs(find_product("NVIDIA H200 NVL"))
    assert sorted(nvl) == ["all-balanced", "all-disabled", "all-enabled"]
    assert "all-1g.35gb" in builtin_mig_configs(find_product("NVIDIA H200"))


def test_compute_instance_profile_takes_the_gpu_instance_of_its_profile():
    """go-nvlib pkg/nvlib/device/mig_profile.go parseMigProfile/String: "1c.3g.40gb" is a 3g.40gb GPU
    instance holding a 1-slice compute instance; mig-parted (pkg/mig/config/config.go SetMigConfig) puts
    further ones into the same GI while they fit, never beside a whole-GI 3g.40gb."""
    device = mig_device_profile(A100_80GB, "1c.3g.40gb")
    assert (device.gi.name, device.ci_slices, device.name, device.resource_name) == (
        "3g.40gb",
        1,
        "1c.3g.40gb",
        "mig-1c.3g.40gb",
    )
    assert mig_device_profile(A100_80GB, "3c.3g.40gb").name == "3g.40gb"
    assert mig_device_profile(A100_80GB, "4c.3g.40gb") is None
    placed = plan_layout(A100_80GB, {"1c.3g.40gb": 1, "3g.40gb": 1})
    assert [(p.profile.name, p.start, p.ci_slices) for p in placed] == [("3g.40gb", 0, ()), ("3g.40gb", 4, (1,))]
    placed = plan_layout(A100_80GB, {"1c.3g.40gb": 2, "3g.40gb": 1})
    assert [(p.profile.name, p.start, p.ci_slices) for p in placed] == [("3g.40gb", 0, ()), ("3g.40gb", 4, (1, 1))]
    with pytest.raises(MigLayoutError, match=re.escape("profile 3g.40gb: 3 instances requested, at most 2")):
        plan_layout(A100_80GB, {"1c.3g.40gb": 4, "3g.40gb": 1})
    with pytest.raises(MigLayoutError, match=re.escape("unknown profile 4c.3g.40gb")):
        plan_layout(A100_80GB, {"4c.3g.40gb": 1})


def test_compute_instance_profile_ids_are_nvmls():
    """mig-parted pkg/types/mig_profile.go ParseMigProfile: "Nc." is NVML_COMPUTE_INSTANCE_PROFILE_N_SLICE, and no
    other slice count parses; `nvidia-smi mig -lcip` lists 1c.3g.40gb as ID 0, 2c.3g.40gb as ID 1 and the whole
    3g.40gb as ID 2 (a100-80gb-pcie/mig-lcip-gi1.txt)."""
    ids = {name: mig_device_profile(A100_80GB, name).ci_profile_id for name in ("1c.3g.40gb", "2c.3g.40gb", "3g.40gb")}
    assert ids == {"1c.3g.40gb": 0, "2c.3g.40gb": 1, "3g.40gb": 2}
    assert mig_device_profile(A100_80GB, "4c.7g.80gb").ci_profile_id == 3
    assert mig_device_profile(A100_80GB, "5c.7g.80gb") is None


def test_compute_instances_of_one_gi_profile_share_gpu_instances():
    """mig-parted pkg/mig/config/config.go SetMigConfig: `reuseGI := (gi != nil) && (lastGIProfileId ==
    mp.GIProfileId)` creates the next MIG device of the same GI profile as a further compute instance in the
    last GI, and a new GI only when that CI does not fit; iteratePermutationsUntilSuccess tries the orderings.
    "1c.3g.40gb": 3 on an A100-SXM4-80GB is one 3g.40gb GI of three 1-slice CIs (3 GIs would not fit: max 2)."""
    (placed,) = plan_layout(A100_80GB, {"1c.3g.40gb": 3})
    assert (placed.profile.name, placed.start, placed.ci_slices) == ("3g.40gb", 0, (1, 1, 1))
    assert [d.name for d in placed.devices] == ["1c.3g.40gb"] * 3
    assert all(d.memory_mib == placed.profile.memory_mib for d in placed.devices)  # each CI has its GI's memory
    mixed = plan_layout(A100_80GB, {"2c.3g.40gb": 2, "1c.3g.40gb": 2})
    assert sorted(p.ci_slices for p in mixed if p.profile.name == "3g.40gb") == [(2, 1), (2, 1)]
    assert plan_layout(A100_80GB, {"4c.7g.80gb": 1, "2c.7g.80gb": 1, "1c.7g.80gb": 1})[0].ci_slices == (4, 2, 1)


@pytest.mark.parametrize(
    ("mig_devices", "expected"),
    [
        (
            {"1c.3g.40gb": 4, "3g.40gb": 1},
            "profile 3g.40gb: 3 instances requested, at most 2 fit on NVIDIA A100-SXM4-80GB (4x1c.3g.40gb + "
            "1x3g.40gb take 3 GPU instances of 3 compute slices)",
        ),
        ({"1c.3g.40gb": 7}, "profile 3g.40gb: 3 instances requested, at most 2 fit on NVIDIA A100-SXM4-80GB"),
        ({"1c.3g.40gb": 4, "2g.20gb": 1}, "2x3g.40gb + 1x2g.20gb needs 8 compute slices but NVIDIA A100-SXM4-80GB"),
        ({"4c.7g.80gb": 1, "3c.7g.80gb": 1, "1c.7g.80gb": 1}, "profile 7g.80gb: 2 instances requested, at most 1 fit"),
    ],
)
def test_compute_instances_that_do_not_fit_their_gpu_instances_are_refused(mig_devices, expected):
    """mig-parted config.go SetMigConfig fails when no ordering finds GIs for all CIs: so does the plan."""
    with pytest.raises(MigLayoutError, match=re.escape(expected)):
        plan_layout(A100_80GB, mig_devices)


def test_fewest_gpu_instances_for_every_catalog_profile():
    """_pack (first-fit decreasing) uses the fewest GIs a brute force finds, for every GI profile of the catalog
    and every set of its compute instances that could fit on the GPU (max_instances GIs)."""

    def fewest(capacity, sizes):
        best = len(sizes)

        def walk(index, bins):
            nonlocal best
            if len(bins) >= best:
                return
            if index == len(sizes):
                best = len(bins)
                return
            for position, used in enumerate(bins):
                if used + sizes[index] <= capacity:
                    walk(index + 1, [*bins[:position], used + sizes[index], *bins[position + 1 :]])
            walk(index + 1, [*bins, sizes[index]])

        walk(0, [])
        return best

    for product in MIG_PRODUCTS:
        for gi in product.mig.profiles:
            sizes = [c for c in CI_PROFILE_IDS if c <= gi.compute_slices]
            for count in range(1, gi.compute_slices * gi.max_instances + 1):
                for chosen in itertools.combinations_with_replacement(sizes, count):
                    optimum = fewest(gi.compute_slices, list(chosen))
                    if optimum <= gi.max_instances:
                        assert len(_pack(gi.compute_slices, chosen)) == optimum, (product.name, gi.name, chosen)
