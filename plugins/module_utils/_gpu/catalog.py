# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU catalog: the NVIDIA products the collection knows, with their MIG GPU-instance profiles.

Pure Python, no Ansible: the offline plan, the MIG module, the sharing role and the validation all
read the same tables. docs/gpu-catalog.md explains where every value comes from.

Source abbreviations used in the comments below (paths of the published outputs are relative to the
recorded nvidia-smi fixture folder, see tests/unit/conftest.py `published_nvsmi_dir`):
- SEED4: seed document 004 (NVIDIA "MIG Support in Kubernetes", Azure A100 80GB PCIe, driver 515):
  `nvidia-smi mig -lgip`, `-cgi 9,14,19 -C`, `-L`, GFD labels.
- MIGPARTED: NVIDIA/mig-parted deployments/systemd/config-default.yaml (device-filter PCI ids and
  per-product configs) and examples/config.yaml.
- GUIDE: NVIDIA MIG User Guide tables (profile lists, instance counts, A30 profiles).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VENDOR = "10DE"


@dataclass(frozen=True)
class GiProfile:
    """One GPU-instance profile as `nvidia-smi mig -lgip` / `-lgipp` print it."""

    name: str
    profile_id: int
    compute_slices: int
    memory_slices: int
    max_instances: int
    placements: tuple[int, ...]
    memory_mib: int | None

    @property
    def resource_name(self):
        # k8s-device-plugin internal/rm/rm.go: strings.ReplaceAll("mig-"+profile, "+", ".")
        return "mig-" + self.name.replace("+", ".")

    @property
    def media_extensions(self):
        """True for "+me" profiles, which take the GPU's only JPEG/OFA engines."""
        return self.name.endswith("+me")


@dataclass(frozen=True)
class MigSpec:
    compute_slices: int
    memory_slices: int
    profiles: tuple[GiProfile, ...]

    def profile(self, name):
        for candidate in self.profiles:
            if candidate.name == name:
                return candidate
        return None

    def profile_by_id(self, profile_id):
        for candidate in self.profiles:
            if candidate.profile_id == profile_id:
                return candidate
        return None


@dataclass(frozen=True)
class Product:
    name: str
    aliases: tuple[str, ...]
    pci_device_ids: tuple[str, ...]
    memory_mib: int
    architecture: str
    compute_capability: str
    mig: MigSpec | None


# Geometry of the 7-compute / 8-memory-slice GPUs (A100, H100, H200). Ids and placements are what
# `nvidia-smi mig -lgipp` printed on A100-SXM4-40GB (a100-sxm4-40gb/mig-lgipp-nvidia-guide.txt) and
# H100 NVL (h100-nvl/mig-lgipp.txt); both print the same table.
# kind: (profile id, compute slices, memory slices, max instances, placements)
_EIGHT_SLICE = {
    "1g": (19, 1, 1, 7, (0, 1, 2, 3, 4, 5, 6)),
    "1g+me": (20, 1, 1, 1, (0, 1, 2, 3, 4, 5, 6)),
    "1g-2x": (15, 1, 2, 4, (0, 2, 4, 6)),  # 1g with twice the memory, e.g. 1g.20gb
    "2g": (14, 2, 2, 3, (0, 2, 4)),
    "3g": (9, 3, 4, 2, (0, 4)),
    "4g": (5, 4, 4, 1, (0,)),
    "7g": (0, 7, 8, 1, (0,)),
}

# A30: 4 compute / 4 memory slices. `nvidia-smi mig -lgip` and `-lgipp` on an NVIDIA A30, driver
# 535.183.01, published in a user's MIG notes (repository not identified); matches GUIDE's A30 table.
_FOUR_SLICE = {
    "1g": (14, 1, 1, 4, (0, 1, 2, 3)),
    "1g+me": (21, 1, 1, 1, (0, 1, 2, 3)),
    "2g": (5, 2, 2, 2, (0, 2)),
    "2g+me": (6, 2, 2, 1, (0, 2)),
    "4g": (0, 4, 4, 1, (0,)),
}


def _mig(geometry, compute_slices, memory_slices, rows):
    """Build a MigSpec from (kind, profile name, memory MiB or None) rows."""
    profiles = []
    for kind, name, memory_mib in rows:
        profile_id, compute, memory, max_instances, placements = geometry[kind]
        profiles.append(GiProfile(name, profile_id, compute, memory, max_instances, placements, memory_mib))
    return MigSpec(compute_slices, memory_slices, tuple(profiles))


def _eight(*rows):
    return _mig(_EIGHT_SLICE, 7, 8, rows)


# Memory MiB = the "Memory GiB" column of -lgip (2 decimals) as the exact MiB the MIG device tables
# print, e.g. 19.62 GiB -> 20096 MiB. It differs between drivers, so every product takes all its
# values from ONE recorded output; None where that output lacks the profile.

# a100-sxm4-40gb/mig-lgip-nvidia-guide.txt (GUIDE, DGX A100).
_A100_SXM4_40GB = _eight(
    ("1g", "1g.5gb", 4864),
    ("1g+me", "1g.5gb+me", 4864),
    ("1g-2x", "1g.10gb", 9856),
    ("2g", "2g.10gb", 9856),
    ("3g", "3g.20gb", 19968),
    ("4g", "4g.20gb", 19968),
    ("7g", "7g.40gb", 40192),
)

# a100-pcie-40gb/mig-lgip-r460-narrow.txt (driver 460.91.03, which predates 1g.5gb+me and 1g.10gb:
# those two rows are taken from GUIDE, memory unrecorded rather than borrowed from another output).
_A100_PCIE_40GB = _eight(
    ("1g", "1g.5gb", 4864),
    ("1g+me", "1g.5gb+me", None),
    ("1g-2x", "1g.10gb", None),
    ("2g", "2g.10gb", 9984),
    ("3g", "3g.20gb", 20096),
    ("4g", "4g.20gb", 20096),
    ("7g", "7g.40gb", 40448),
)

# SEED4 and a100-80gb-pcie/mig-lgip.txt (driver 515.86.01, A100 80GB PCIe). 1g.20gb (id 15) needs
# R525+ so that output lacks it: name/id from MIGPARTED and GUIDE, memory unrecorded (a size printed by
# a later driver would mix two sources in one product).
_A100_80GB = _eight(
    ("1g", "1g.10gb", 9728),
    ("1g+me", "1g.10gb+me", 9728),
    ("1g-2x", "1g.20gb", None),
    ("2g", "2g.20gb", 19968),
    ("3g", "3g.40gb", 40192),
    ("4g", "4g.40gb", 40192),
    ("7g", "7g.80gb", 80896),
)

# h100-80gb-hbm3/notes-mig-lgip-i0.txt (H100 80GB HBM3); MIG table nvidia-smi-default-table-mig.txt
# (driver 590.48.01) shows the same 40448 / 20096 / 9984 MiB.
_H100_80GB = _eight(
    ("1g", "1g.10gb", 9984),
    ("1g+me", "1g.10gb+me", 9984),
    ("1g-2x", "1g.20gb", 20096),
    ("2g", "2g.20gb", 20096),
    ("3g", "3g.40gb", 40448),
    ("4g", "4g.40gb", 40448),
    ("7g", "7g.80gb", 81152),
)

# h100-nvl/mig-lgip.txt and mig-lgipp.txt (driver 560.35.03).
_H100_NVL = _eight(
    ("1g", "1g.12gb", 11008),
    ("1g+me", "1g.12gb+me", 11008),
    ("1g-2x", "1g.24gb", 22144),
    ("2g", "2g.24gb", 22144),
    ("3g", "3g.47gb", 47488),
    ("4g", "4g.47gb", 47488),
    ("7g", "7g.94gb", 95360),
)

# h200/mig-lgip-fragment-multi-gpu.txt (mig-parted issue #120) covers 1g.18gb, 1g.18gb+me, 3g.71gb,
# 4g.71gb and 7g.141gb. 1g.35gb and 2g.35gb: names from MIGPARTED, ids 15/14 and all H200 placements
# assumed equal to H100 (unverified), memory unrecorded in that output. (Driver 590.48.01 prints other
# sizes, h200/nvidia-smi-default-table-mig.txt: 71424 MiB for 3g.71gb, 33280 MiB for 2g.35gb.)
_H200 = _eight(
    ("1g", "1g.18gb", 16384),
    ("1g+me", "1g.18gb+me", 16384),
    ("1g-2x", "1g.35gb", None),
    ("2g", "2g.35gb", None),
    ("3g", "3g.71gb", 71168),
    ("4g", "4g.71gb", 71168),
    ("7g", "7g.141gb", 143104),
)

# See _FOUR_SLICE: 5.81 / 11.69 / 23.44 GiB; its MIG table prints 5952 and 11968 MiB.
_A30 = _mig(
    _FOUR_SLICE,
    4,
    4,
    (
        ("1g", "1g.6gb", 5952),
        ("1g+me", "1g.6gb+me", 5952),
        ("2g", "2g.12gb", 11968),
        ("2g+me", "2g.12gb+me", 11968),
        ("4g", "4g.24gb", 24000),
    ),
)


def _pci(*device_ids):
    return tuple(f"0x{device_id}{_VENDOR}" for device_id in device_ids)


# name (as `nvidia-smi --query-gpu=name` prints it), aliases, PCI device ids, memory MiB (FB total as
# nvidia-smi prints it), architecture, compute capability, MIG spec.
# PCI ids: "Device Id" of `nvidia-smi -q` where recorded, else MIGPARTED device-filters.
_PRODUCTS = (
    # -L r450 prints "A100-SXM4-40GB", r5xx "NVIDIA A100-SXM4-40GB"; 40537 MiB in the r450 table.
    Product("NVIDIA A100-SXM4-40GB", ("A100-SXM4-40GB",), _pci("20B0"), 40537, "ampere", "8.0", _A100_SXM4_40GB),
    # -L r460 prints "A100-SXM4..." without NVIDIA; 40536 MiB in the r460 table. 0x20F1 from MIGPARTED.
    Product(
        "NVIDIA A100-PCIE-40GB", ("A100-PCIE-40GB",), _pci("20B1", "20F1"), 40536, "ampere", "8.0", _A100_PCIE_40GB
    ),
    # a100-sxm4-80gb/nvidia-smi-a-gls.txt: Device Id 0x20B210DE, 81920 MiB. Alias seen in seed 001.
    Product("NVIDIA A100-SXM4-80GB", ("A100-SXM4-80GB",), _pci("20B2"), 81920, "ampere", "8.0", _A100_80GB),
    # SEED4: -L name, 81920 MiB table and GFD label; PCI id from MIGPARTED; the alias is unverified.
    Product("NVIDIA A100 80GB PCIe", ("A100 80GB PCIe",), _pci("20B5"), 81920, "ampere", "8.0", _A100_80GB),
    # A30 notes (see _FOUR_SLICE): -L "NVIDIA A30", 24576 MiB; PCI id from MIGPARTED.
    Product("NVIDIA A30", (), _pci("20B7"), 24576, "ampere", "8.0", _A30),
    # h100-80gb-hbm3/nvidia-smi-q-nomig.txt: Device Id 0x233010DE, 81559 MiB.
    Product("NVIDIA H100 80GB HBM3", (), _pci("2330"), 81559, "hopper", "9.0", _H100_80GB),
    # PCI id from MIGPARTED (H100-80GB filter); memory and profile table as H100 80GB HBM3 (unverified).
    Product("NVIDIA H100 PCIe", (), _pci("2331"), 81559, "hopper", "9.0", _H100_80GB),
    # h100-nvl/nvidia-smi-a-gls.txt: Device Id 0x232110DE, 95830 MiB.
    Product("NVIDIA H100 NVL", (), _pci("2321"), 95830, "hopper", "9.0", _H100_NVL),
    # h200/nvidia-smi-q-nomig.txt: Device Id 0x233510DE, 143771 MiB (H200 SXM 141GB).
    Product("NVIDIA H200", (), _pci("2335"), 143771, "hopper", "9.0", _H200),
    # PCI id from MIGPARTED (all-balanced shares the H200 entry); name, memory, profiles (unverified).
    Product("NVIDIA H200 NVL", (), _pci("233B"), 143771, "hopper", "9.0", _H200),
    # Non-MIG products, each from a recorded `nvidia-smi -q`/`-a` (Product Name, Device Id, FB Total).
    Product("Tesla T4", (), _pci("1EB8"), 15360, "turing", "7.5", None),
    Product("NVIDIA L4", (), _pci("27B8"), 23034, "ada-lovelace", "8.9", None),
    Product("NVIDIA L40S", (), _pci("26B9"), 46068, "ada-lovelace", "8.9", None),
    Product("NVIDIA A10", (), _pci("2236"), 23028, "ampere", "8.6", None),
    Product("Tesla V100-SXM2-16GB", (), _pci("1DB1"), 16384, "volta", "7.0", None),
    # The V100 variants below: name, PCI id and memory from the PCI id list (unverified).
    Product("Tesla V100-SXM2-32GB", (), _pci("1DB5"), 32768, "volta", "7.0", None),
    Product("Tesla V100-PCIE-16GB", (), _pci("1DB4"), 16384, "volta", "7.0", None),
    Product("Tesla V100-PCIE-32GB", (), _pci("1DB6"), 32768, "volta", "7.0", None),
)


def normalize_product_name(name):
    """Comparable form of a product name: "NVIDIA-A100-80GB-PCIe" -> "a100-80gb-pcie"."""
    folded = str(name).strip().casefold()
    folded = re.sub(r"^nvidia[\s_-]+", "", folded)
    return re.sub(r"[\s_-]+", "-", folded)


def _build_name_index():
    index = {}
    for product in _PRODUCTS:
        for printed in (product.name, *product.aliases):
            index[normalize_product_name(printed)] = product
    return index


_BY_NAME = _build_name_index()
# GFD appends "-SHARED" under time-slicing (seed 003) and "-MIG-<profile>" with the single strategy (SEED4).
_GFD_SUFFIX = re.compile(r"(-mig-\d+g\.\d+gb.*|-shared)$")


def normalize_device_id(device_id):
    """ "0x20B210DE", "20b210de", "0x20B2" or "20B2" -> "0x20B210DE"; None when not a PCI id."""
    text = str(device_id).strip().upper()
    text = text[2:] if text.startswith("0X") else text
    if re.fullmatch(r"[0-9A-F]{4}", text):
        text += _VENDOR
    if not re.fullmatch(r"[0-9A-F]{8}", text):
        return None
    return "0x" + text


def find_product(name=None, device_id=None):
    """The one product lookup: by any printed form of NAME (nvidia-smi, older drivers, GFD label),
    else by PCI DEVICE_ID (as nvidia-smi reports it, or the short "20B2"); None when neither matches.
    """
    if isinstance(name, str):
        key = normalize_product_name(name)
        product = _BY_NAME.get(key) or _BY_NAME.get(_GFD_SUFFIX.sub("", key))
        if product is not None:
            return product
    if device_id:
        wanted = normalize_device_id(device_id)
        for product in _PRODUCTS:
            if wanted in product.pci_device_ids:
                return product
    return None


def all_products():
    return _PRODUCTS


def gfd_product_label(product_name):
    """GPU Feature Discovery's nvidia.com/gpu.product value: spaces become dashes."""
    return "-".join(str(product_name).split())
