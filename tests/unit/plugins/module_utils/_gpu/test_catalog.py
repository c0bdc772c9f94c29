# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU catalog against what real GPUs printed (seed fixtures and published nvidia-smi outputs)."""

import re

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    all_products,
    find_product,
    gfd_product_label,
    normalize_product_name,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._host.extra_parsers import (
    parse_gpu_instance_placements,
    parse_gpu_instance_profiles,
)

# Published -lgip / -lgipp outputs and the product that printed them (see each file's .source.txt).
PUBLISHED_LGIP = {
    "a100-80gb-pcie/mig-lgip.txt": "NVIDIA A100 80GB PCIe",
    "a100-sxm4-40gb/mig-lgip-nvidia-guide.txt": "NVIDIA A100-SXM4-40GB",
    "a100-pcie-40gb/mig-lgip-r460-narrow.txt": "NVIDIA A100-PCIE-40GB",
    "h100-80gb-hbm3/notes-mig-lgip-i0.txt": "NVIDIA H100 80GB HBM3",
    "h100-nvl/mig-lgip.txt": "NVIDIA H100 NVL",
    "h200/mig-lgip-fragment-multi-gpu.txt": "NVIDIA H200",
    "b200/mig-lgip-partial.txt": "NVIDIA B200",
    "gb200/mig-lgip-partial.txt": "NVIDIA GB200",
    "gh200-144gb/mig-lgip-partial.txt": "NVIDIA GH200 144G HBM3e",
    "gh200-480gb/mig-lgip.txt": "NVIDIA GH200 480GB",
    "rtx-pro-6000-blackwell-server/mig-lgip-i0.txt": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}
PUBLISHED_LGIPP = {
    "a100-sxm4-40gb/mig-lgipp-nvidia-guide.txt": "NVIDIA A100-SXM4-40GB",
    "h100-nvl/mig-lgipp.txt": "NVIDIA H100 NVL",
    "rtx-pro-6000-blackwell-server/mig-lgipp-i0.txt": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}
# Complete -lgip listings: the catalog has exactly the profiles they print, no more.
COMPLETE_LGIP = {
    "gh200-480gb/mig-lgip.txt",
    "rtx-pro-6000-blackwell-server/mig-lgip-i0.txt",
    "a100-sxm4-40gb/mig-lgip-nvidia-guide.txt",
    "h100-nvl/mig-lgip.txt",
}


def parse_lgip(text):
    """(gpu, name, id, total instances, memory GiB) per profile row of `nvidia-smi mig -lgip`."""
    return [
        (r.gpu, r.profile_name, r.profile_id, r.instances_total, r.memory_gib)
        for r in parse_gpu_instance_profiles(text)
    ]


def parse_lgipp(text):
    """(gpu, profile id, starts, size) per line of `nvidia-smi mig -lgipp`."""
    return [(r.gpu, r.profile_id, r.starts, r.size) for r in parse_gpu_instance_placements(text)]


def assert_profile_matches(product, name, profile_id, total, memory_gib):
    profile = product.mig.profile(name)
    assert profile is not None, f"{product.name} lacks {name}"
    assert (profile.profile_id, profile.max_instances) == (profile_id, total)
    # nvidia-smi prints GiB with two decimals (19.625 -> 19.62).
    assert abs(profile.memory_mib / 1024 - memory_gib) <= 0.006, (name, profile.memory_mib, memory_gib)


def test_seed_lgip_matches_catalog(seed_fixture):
    rows = parse_lgip(seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt"))
    assert len(rows) == 6
    product = find_product("NVIDIA A100 80GB PCIe")
    for _gpu, name, profile_id, total, memory_gib in rows:
        assert_profile_matches(product, name, profile_id, total, memory_gib)


@pytest.mark.parametrize(("relative", "product_name"), sorted(PUBLISHED_LGIP.items()))
def test_published_lgip_matches_catalog(published_nvsmi_dir, relative, product_name):
    rows = parse_lgip((published_nvsmi_dir / relative).read_text(encoding="utf-8"))
    assert rows, relative
    product = find_product(product_name)
    for _gpu, name, profile_id, total, memory_gib in rows:
        assert_profile_matches(product, name, profile_id, total, memory_gib)
    if relative in COMPLETE_LGIP:
        assert {name for _gpu, name, *_rest in rows} == {p.name for p in product.mig.profiles}


@pytest.mark.parametrize(("relative", "product_name"), sorted(PUBLISHED_LGIPP.items()))
def test_published_lgipp_matches_catalog(published_nvsmi_dir, relative, product_name):
    rows = parse_lgipp((published_nvsmi_dir / relative).read_text(encoding="utf-8"))
    product = find_product(product_name)
    assert {profile_id for _gpu, profile_id, _starts, _size in rows} == {p.profile_id for p in product.mig.profiles}
    for _gpu, profile_id, starts, size in rows:
        profile = product.mig.profile_by_id(profile_id)
        assert (profile.placements, profile.memory_slices) == (starts, size)


# Products the published outputs show that the catalog does not carry. Every one is in the catalog now.
OUTSIDE_CATALOG = set()


def printed_products(folder):
    """(file, printed name) for every `-L` GPU line, `-q` Product Name, `-q -x` product_name and
    `--query-gpu=index,name,...` row in the published outputs."""
    found = []
    for path in sorted(folder.rglob("*.txt")):
        if path.name.endswith(".source.txt"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern in (
            r"^GPU \d+: (.+?) \(UUID",
            r"^\s*Product Name\s*: (.+?)\s*$",
            r"<product_name>(.+?)</product_name>",
            r"^\d+, ((?:NVIDIA|Tesla) [^,]+),",
        ):
            found.extend((path, match[1]) for match in re.finditer(pattern, text, re.MULTILINE))
    return found


def test_published_names_resolve_to_exactly_that_printed_name(published_nvsmi_dir):
    checked = 0
    for path, printed in printed_products(published_nvsmi_dir):
        product = find_product(printed)
        if product is None:
            assert printed in OUTSIDE_CATALOG, (path, printed)
            continue
        assert printed in (product.name, *product.aliases), (path, printed)
        checked += 1
    assert checked >= 40


def test_published_q_outputs_match_pci_id_and_memory(published_nvsmi_dir):
    checked = set()
    for path in sorted(published_nvsmi_dir.rglob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        name = re.search(r"^\s*Product Name\s*: (.+?)\s*$", text, re.MULTILINE)
        device = re.search(r"^\s*Device Id\s*: (0x[0-9A-F]{8})", text, re.MULTILINE)
        total = re.search(r"FB Memory Usage\s*\n\s*Total\s*: (\d+) MiB", text)
        product = find_product(name[1]) if name else None
        if product is None or "mig" in path.stem.split("-"):
            continue
        assert device[1] in product.pci_device_ids, path
        assert find_product(device_id=device[1]) is product
        assert int(total[1]) == product.memory_mib, path
        checked.add(product.name)
    assert len(checked) >= 10, checked
    assert "NVIDIA GH200 480GB" in checked


@pytest.mark.parametrize(
    "printed",
    ["NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", "nvidia a100 sxm4 80gb", "A100_SXM4_80GB"],
)
def test_find_product_tolerates_prefix_case_and_separators(printed):
    assert find_product(printed).name == "NVIDIA A100-SXM4-80GB"


def test_find_product_reads_gfd_labels_with_suffixes():
    # Seed 004 labels a MIG node "NVIDIA-A100-80GB-PCIe-MIG-1g.10gb"; seed 003 a shared one "Tesla-T4-SHARED".
    assert find_product("NVIDIA-A100-80GB-PCIe-MIG-1g.10gb").name == "NVIDIA A100 80GB PCIe"
    assert find_product("Tesla-T4-SHARED").name == "Tesla T4"
    assert find_product("NVIDIA GeForce RTX 3080") is None
    assert find_product(None) is None


def test_gfd_label_matches_seed_labels():
    assert gfd_product_label("NVIDIA A100 80GB PCIe") == "NVIDIA-A100-80GB-PCIe"
    assert gfd_product_label("Tesla T4") == "Tesla-T4"
    for product in all_products():
        assert find_product(gfd_product_label(product.name)) is product


@pytest.mark.parametrize("form", ["0x20B210DE", "0x20b210de", "20B210DE", "20B2", "0x20b2"])
def test_find_product_by_device_id_forms(form):
    assert find_product(device_id=form).name == "NVIDIA A100-SXM4-80GB"


def test_find_product_by_device_id_unknown():
    # B300 SXM6 AC (NVIDIA driver README): no MIG profile source for it yet, so not in the catalog.
    assert find_product(device_id="0x318210DE") is None
    assert find_product(device_id="not-an-id") is None


def test_names_ids_and_aliases_are_unique():
    owners = {}
    for product in all_products():
        for printed in (product.name, *product.aliases):
            assert owners.setdefault(normalize_product_name(printed), product.name) == product.name, printed
    ids = [i for p in all_products() for i in p.pci_device_ids]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"0x[0-9A-F]{4}10DE", i) for i in ids)


def test_required_products_are_known():
    required = [
        "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe",
        "NVIDIA A30", "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200",
        "Tesla T4", "NVIDIA L4", "NVIDIA L40S", "NVIDIA A10", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB",
        "Tesla V100-PCIE-16GB", "NVIDIA B200", "NVIDIA GB200", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB PCIe",
        "NVIDIA A800 40GB Active", "NVIDIA H800", "NVIDIA H800 PCIe", "NVIDIA H800 NVL", "NVIDIA H20",
        "NVIDIA A10G", "NVIDIA A40", "NVIDIA L40", "NVIDIA L20", "NVIDIA A16", "NVIDIA A2", "NVIDIA RTX A5000",
        "NVIDIA RTX A6000", "NVIDIA RTX 6000 Ada Generation",
    ]  # fmt: skip
    for name in required:
        assert find_product(name).name == name
    assert {p.name for p in all_products() if p.mig} >= set(required[:9]) | set(required[16:28])
    assert find_product("NVIDIA GH200 96GB HBM3").name == "NVIDIA GH200 480GB"
    assert all(p.mig is None for p in all_products() if p.architecture in ("volta", "turing", "ada-lovelace"))


def max_disjoint(profile, memory_slices):
    """How many instances of one profile fit side by side, counted by trying every subset of placements."""
    best = 0
    for mask in range(1 << len(profile.placements)):
        chosen = [s for i, s in enumerate(profile.placements) if mask >> i & 1]
        slices = [s + k for s in chosen for k in range(profile.memory_slices)]
        if len(slices) == len(set(slices)) and max(slices, default=0) < memory_slices:
            best = max(best, len(chosen))
    return best


@pytest.mark.parametrize("product", [p for p in all_products() if p.mig], ids=lambda p: p.name)
def test_profile_tables_are_consistent(product):
    mig = product.mig
    names = [p.name for p in mig.profiles]
    assert len(names) == len(set(names))
    assert len({p.profile_id for p in mig.profiles}) == len(names)
    for profile in mig.profiles:
        assert re.fullmatch(rf"{profile.compute_slices}g\.\d+gb(\+me|\+me\.all|\+gfx|-me)?", profile.name)
        assert all(s >= 0 and s + profile.memory_slices <= mig.memory_slices for s in profile.placements)
        assert profile.compute_slices * profile.max_instances <= mig.compute_slices
        expected = 1 if profile.media_extensions else max_disjoint(profile, mig.memory_slices)
        # 1g (7 of 8 memory slices usable) and the +me profiles are capped below what the slices allow.
        assert profile.max_instances == min(expected, mig.compute_slices // profile.compute_slices)
        assert profile.resource_name == "mig-" + profile.name.replace("+", ".")
        if profile.memory_mib is not None and product.memory_mib is not None:
            assert profile.memory_mib <= product.memory_mib


def test_resource_name_of_media_extension_profile():
    # k8s-device-plugin replaces "+" with "." in MIG resource names.
    profile = find_product("NVIDIA A100-SXM4-80GB").mig.profile("1g.10gb+me")
    assert profile.resource_name == "mig-1g.10gb.me"


def mig_devices_printed(text):
    """{GPU name: [profile, ...]} from `nvidia-smi -L`: the GI profile of each MIG device line
    ("MIG 1c.3g.71gb" is compute instance 1c of a 3g.71gb GPU instance)."""
    found, gpu = {}, None
    for line in text.splitlines():
        head = re.match(r"^GPU \d+: (.+?) \(UUID", line)
        if head:
            gpu = head[1]
            continue
        device = re.match(r"^\s+MIG (?:\d+c\.)?(\d+g\.\d+gb\S*)\s+Device", line)
        if device and gpu:
            found.setdefault(gpu, []).append(device[1])
    return found


def test_published_L_mig_devices_are_catalog_profiles(published_nvsmi_dir):
    checked = set()
    for path in sorted(published_nvsmi_dir.rglob("*-L*.txt")):
        if path.name.endswith(".source.txt"):
            continue
        for gpu, profiles in mig_devices_printed(path.read_text(encoding="utf-8", errors="replace")).items():
            product = find_product(gpu)
            assert product is not None and product.mig is not None, (path, gpu)
            for name in profiles:
                assert product.mig.profile(name) is not None, (path, gpu, name)
            checked.add(product.name)
    assert {"NVIDIA GB200", "NVIDIA GH200 480GB", "NVIDIA RTX PRO 6000 Blackwell Server Edition"} <= checked


def test_published_lgi_placements_are_catalog_placements(published_nvsmi_dir):
    # rtx-pro-6000-blackwell-server/mig-lgi-i0-mixed.txt: 2g.48gb (id 5) at 0:6, 1g.24gb (id 14) at 6:3 and 9:3.
    product = find_product("NVIDIA RTX PRO 6000 Blackwell Server Edition")
    text = (published_nvsmi_dir / "rtx-pro-6000-blackwell-server/mig-lgi-i0-mixed.txt").read_text(encoding="utf-8")
    rows = re.findall(r"MIG (\S+)\s+(\d+)\s+\d+\s+(\d+):(\d+)", text)
    assert len(rows) == 3
    for name, profile_id, start, size in rows:
        profile = product.mig.profile(name)
        assert (profile.profile_id, profile.memory_slices) == (int(profile_id), int(size))
        assert int(start) in profile.placements


def test_published_a10g_xml_matches_name_and_memory(published_nvsmi_dir):
    text = (published_nvsmi_dir / "a10g/nvidia-smi-q-x.txt").read_text(encoding="utf-8")
    name = re.search(r"<product_name>(.+?)</product_name>", text)[1]
    total = re.search(r"<fb_memory_usage>\s*<total>(\d+) MiB</total>", text)[1]
    product = find_product(name)
    assert (product.name, product.memory_mib, product.mig) == ("NVIDIA A10G", int(total), None)


def test_rtx_pro_6000_geometry_is_not_the_eight_slice_one():
    mig = find_product(device_id="0x2BB510DE").mig
    assert (mig.compute_slices, mig.memory_slices) == (4, 12)
    assert mig.profile("1g.24gb").placements == (0, 3, 6, 9)
    assert mig.profile("2g.48gb+me.all").media_extensions and mig.profile("1g.24gb+me").media_extensions
    assert not mig.profile("1g.24gb-me").media_extensions
    assert mig.profile("1g.24gb+me.all").resource_name == "mig-1g.24gb.me.all"
    assert mig.profile("1g.24gb-me").resource_name == "mig-1g.24gb-me"


def test_products_without_recorded_memory_predict_none():
    # No recorded output gives the memory of these: None, never a value borrowed from a sibling product.
    assert find_product("NVIDIA H800").memory_mib is None
    assert all(p.memory_mib is None for p in find_product("NVIDIA H800").mig.profiles)
    assert find_product("NVIDIA A40").memory_mib is None
    assert find_product("NVIDIA A16").pci_device_ids == ()
