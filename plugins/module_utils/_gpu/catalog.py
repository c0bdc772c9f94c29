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
- DRVREADME: the NVIDIA Linux driver README, appendix "Supported NVIDIA GPU Products" (name as the
  driver prints it, PCI device id, subsystem id), read through the search tool's copy (stored file
  id 67161954526); it names products and PCI ids only, never memory or MIG profiles.
- PUBLIC: a real nvidia-smi table or query output in a public repository found with the search tool
  but not copied into the recorded fixture folder (the value is quoted beside it).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import mig_resource_name

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
        return mig_resource_name(self.name)

    @property
    def media_extensions(self):
        """True for "+me" and "+me.all" profiles, which take the GPU's only JPEG/OFA engines (at most one
        such instance per GPU; -lgip prints them 1/1)."""
        return self.name.endswith(("+me", "+me.all"))


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
    memory_mib: int | None
    architecture: str
    compute_capability: str | None
    mig: MigSpec | None
    # "catalog"; "inventory" for a gpuops_gpu_catalog_extra entry; "unknown" for a name nobody described.
    origin: str = "catalog"


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


# RTX PRO 6000 Blackwell Server Edition: 4 compute slices, placements in 12 units.
# rtx-pro-6000-blackwell-server/mig-lgip-i0.txt (ids, Free/Total) and mig-lgipp-i0.txt ({0,3,6,9}:3,
# {0,6}:6, {0}:12); mig-lgi-i0-mixed.txt shows 2g.48gb at 0:6 with 1g.24gb at 6:3 and 9:3.
# "+gfx" adds graphics, "+me.all" takes all media engines (1/1), "-me" has none.
_RTX_PRO_SLICE = {
    "1g": (14, 1, 3, 4, (0, 3, 6, 9)),
    "1g+me": (21, 1, 3, 1, (0, 3, 6, 9)),
    "1g+gfx": (47, 1, 3, 4, (0, 3, 6, 9)),
    "1g+me.all": (65, 1, 3, 1, (0, 3, 6, 9)),
    "1g-me": (67, 1, 3, 4, (0, 3, 6, 9)),
    "2g": (5, 2, 6, 2, (0, 6)),
    "2g+gfx": (35, 2, 6, 2, (0, 6)),
    "2g+me.all": (64, 2, 6, 1, (0, 6)),
    "2g-me": (66, 2, 6, 2, (0, 6)),
    "4g": (0, 4, 12, 1, (0,)),
    "4g+gfx": (32, 4, 12, 1, (0,)),
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


# b200/mig-lgip-partial.txt (mig-parted PR #166; the excerpt ends after 2g.45gb): 1g.23gb id 19 7/7
# 22.00 GiB, 1g.23gb+me id 20 1/1, 1g.45gb id 15 4/4 44.25 GiB, 2g.45gb id 14 3/3. 3g.90gb, 4g.90gb,
# 7g.180gb: names from MIGPARTED, ids and placements assumed as the 8-slice table, memory unrecorded
# (unverified).
_B200 = _eight(
    ("1g", "1g.23gb", 22528),
    ("1g+me", "1g.23gb+me", 22528),
    ("1g-2x", "1g.45gb", 45312),
    ("2g", "2g.45gb", 45312),
    ("3g", "3g.90gb", None),
    ("4g", "4g.90gb", None),
    ("7g", "7g.180gb", None),
)

# gb200/mig-lgip-partial.txt (gpu-operator PR #1303; ends after 2g.47gb): 1g.24gb id 19 7/7 20.00 GiB
# (as transcribed), 1g.24gb+me id 20, 1g.47gb id 15 4/4 45.50 GiB, 2g.47gb id 14 3/3; -L in a pod
# (gb200/nvidia-smi-L-in-container-1-mig-device.txt) prints "MIG 1g.24gb". 3g.95gb, 4g.95gb, 7g.189gb:
# names from MIGPARTED (an older gpu-operator config says 3g.93gb / 7g.186gb; the 1g.24gb the GPU
# printed agrees with MIGPARTED), ids, placements and memory unverified.
_GB200 = _eight(
    ("1g", "1g.24gb", 20480),
    ("1g+me", "1g.24gb+me", 20480),
    ("1g-2x", "1g.47gb", 46592),
    ("2g", "2g.47gb", 46592),
    ("3g", "3g.95gb", None),
    ("4g", "4g.95gb", None),
    ("7g", "7g.189gb", None),
)

# gh200-144gb/mig-lgip-partial.txt (mig-parted PR #139; ends after 2g.36gb): 1g.18gb id 19 17.50 GiB,
# 1g.18gb+me id 20, 1g.36gb id 15 35.25 GiB, 2g.36gb id 14. 3g.72gb, 4g.72gb, 7g.144gb: MIGPARTED
# names, ids/placements/memory unverified.
_GH200_144GB = _eight(
    ("1g", "1g.18gb", 17920),
    ("1g+me", "1g.18gb+me", 17920),
    ("1g-2x", "1g.36gb", 36096),
    ("2g", "2g.36gb", 36096),
    ("3g", "3g.72gb", None),
    ("4g", "4g.72gb", None),
    ("7g", "7g.144gb", None),
)

# gh200-480gb/mig-lgip.txt (driver 550.54.15, complete). gh200-96gb-hbm3/nvidia-smi-L-mig-2gpus-14x1g12gb.txt
# shows 7x 1g.12gb per GPU on "NVIDIA GH200 96GB HBM3".
_GH200_96GB = _eight(
    ("1g", "1g.12gb", 11264),
    ("1g+me", "1g.12gb+me", 11264),
    ("1g-2x", "1g.24gb", 23552),
    ("2g", "2g.24gb", 23552),
    ("3g", "3g.48gb", 47616),
    ("4g", "4g.48gb", 47616),
    ("7g", "7g.96gb", 95232),
)

# rtx-pro-6000-blackwell-server/mig-lgip-i0.txt: 23.62 / 47.38 / 95.12 GiB (taken as 23.625, 47.375,
# 95.125 GiB; no MIG device table of this GPU is recorded to give the exact MiB).
_RTX_PRO_6000 = _mig(
    _RTX_PRO_SLICE,
    4,
    12,
    (
        ("1g", "1g.24gb", 24192),
        ("1g+me", "1g.24gb+me", 24192),
        ("1g+gfx", "1g.24gb+gfx", 24192),
        ("1g+me.all", "1g.24gb+me.all", 24192),
        ("1g-me", "1g.24gb-me", 24192),
        ("2g", "2g.48gb", 48512),
        ("2g+gfx", "2g.48gb+gfx", 48512),
        ("2g+me.all", "2g.48gb+me.all", 48512),
        ("2g-me", "2g.48gb-me", 48512),
        ("4g", "4g.96gb", 97408),
        ("4g+gfx", "4g.96gb+gfx", 97408),
    ),
)


def _unrecorded(mig):
    """The same profiles with memory unknown: for products no recorded output covers (unverified), so the
    plan predicts no memory label rather than one borrowed from a sibling product."""
    profiles = tuple(
        GiProfile(p.name, p.profile_id, p.compute_slices, p.memory_slices, p.max_instances, p.placements, None)
        for p in mig.profiles
    )
    return MigSpec(mig.compute_slices, mig.memory_slices, profiles)


def _pci(*device_ids):
    return tuple(f"0x{device_id}{_VENDOR}" for device_id in device_ids)


# name (as `nvidia-smi --query-gpu=name` prints it), aliases, PCI device ids, memory MiB (FB total as
# nvidia-smi prints it; None where no output gives it: no memory label is then predicted), architecture,
# compute capability, MIG spec.
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
    # gh200-480gb/nvidia-smi-a-gls.txt: Device Id 0x234210DE, 97871 MiB; -lgip gh200-480gb/mig-lgip.txt.
    # "NVIDIA GH200 96GB HBM3" is printed by -L in gh200-96gb-hbm3/ (no -q there): taken as the same
    # 96GB GH100 (MIGPARTED lists one GH200 id, 0x2342, whose all-balanced uses the 1g.12gb this output
    # shows), so it is an alias (unverified).
    Product(
        "NVIDIA GH200 480GB",
        ("NVIDIA GH200 96GB HBM3",),
        _pci("2342"),
        97871,
        "hopper",
        "9.0",
        _GH200_96GB,
    ),
    # Name and PCI id from DRVREADME (0x2348, also mig-parted PR #139's title); PUBLIC query output
    # "NVIDIA GH200 144G HBM3e, 580.173.02, 146831 MiB, 9.0" (stored file id 57699609541).
    Product("NVIDIA GH200 144G HBM3e", (), _pci("2348"), 146831, "hopper", "9.0", _GH200_144GB),
    # Compute capability 10.0 (B200, GB200) and 12.0 (RTX PRO 6000 Blackwell): NVIDIA's CUDA GPU list, a copy
    # read by search (stored file id 46701003396) lists GB200 and B200 under 10; sm_120 for RTX PRO 6000 (unverified).
    # Name and 0x2901 from DRVREADME and MIGPARTED (B200 filter); PUBLIC nvidia-smi tables print
    # "NVIDIA B200 ... 183359MiB" (stored file id 58371658710, driver 570.172.08).
    Product("NVIDIA B200", (), _pci("2901"), 183359, "blackwell", "10.0", _B200),
    # -L prints "NVIDIA GB200" (gb200/); 0x2941 from MIGPARTED ("GB200 HGX") and DRVREADME; PUBLIC tables
    # print "NVIDIA GB200 ... 189471MiB" (stored file id 51864327511).
    Product("NVIDIA GB200", (), _pci("2941"), 189471, "blackwell", "10.0", _GB200),
    # Name printed by --query-gpu=name (rtx-pro-6000-blackwell-server/query-gpu-index-name-mig-mode-csv-i0.txt)
    # and -L; 0x2BB5 from MIGPARTED ("RTX-PRO-6000-96GB") and DRVREADME; PUBLIC query output "97887 MiB per
    # GPU" (stored file id 54916593241, driver 595.71.05).
    Product(
        "NVIDIA RTX PRO 6000 Blackwell Server Edition", (), _pci("2BB5"), 97887, "blackwell", "12.0", _RTX_PRO_6000
    ),
    # MIG products of MIGPARTED's device-filters no recorded output covers: name from DRVREADME, profile
    # names from the MIGPARTED group the id is in, geometry as the 8-slice table, memory unknown (unverified).
    Product("NVIDIA A800-SXM4-80GB", (), _pci("20F3"), None, "ampere", "8.0", _unrecorded(_A100_80GB)),
    Product("NVIDIA A800 80GB PCIe", (), _pci("20F5"), None, "ampere", "8.0", _unrecorded(_A100_80GB)),
    Product("NVIDIA A800 40GB Active", (), _pci("20F6"), None, "ampere", "8.0", _unrecorded(_A100_SXM4_40GB)),
    Product("NVIDIA H800", (), _pci("2324"), None, "hopper", "9.0", _unrecorded(_H100_80GB)),
    Product("NVIDIA H800 PCIe", (), _pci("2322"), None, "hopper", "9.0", _unrecorded(_H100_80GB)),
    Product("NVIDIA H800 NVL", (), _pci("233A"), None, "hopper", "9.0", _unrecorded(_H100_NVL)),
    # MIGPARTED puts H20 (0x2329) in the all-balanced group of H100-96GB and GH200 (1g.12gb, 2g.24gb, 3g.48gb).
    Product("NVIDIA H20", (), _pci("2329"), None, "hopper", "9.0", _unrecorded(_GH200_96GB)),
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
    # a10g/nvidia-smi-q-x.txt (driver 515.105.01): product_name "NVIDIA A10G", FB total 23028 MiB; its
    # pci_device_id is masked (000000DE), so 0x2237 comes from DRVREADME.
    Product("NVIDIA A10G", (), _pci("2237"), 23028, "ampere", "8.6", None),
    # Non-MIG products without a recorded output: name and PCI id from DRVREADME, memory unknown, compute
    # capability by architecture (Ampere GA10x 8.6, Ada 8.9) as NVIDIA's CUDA GPU list gives it (unverified).
    # rtx-a5000/mig-enable-error-not-supported.txt shows "-mig 1" answered "Not Supported" on an RTX A5000.
    Product("NVIDIA A40", (), _pci("2235"), None, "ampere", "8.6", None),
    Product("NVIDIA RTX A6000", (), _pci("2230"), None, "ampere", "8.6", None),
    Product("NVIDIA RTX A5000", (), _pci("2231"), None, "ampere", "8.6", None),
    # A16 and A2 share device id 0x25B6 (DRVREADME tells them apart by subsystem id only): matched by name.
    Product("NVIDIA A16", (), (), None, "ampere", "8.6", None),
    Product("NVIDIA A2", (), (), None, "ampere", "8.6", None),
    Product("NVIDIA L40", (), _pci("26B5"), None, "ada-lovelace", "8.9", None),
    Product("NVIDIA L20", (), _pci("26BA"), None, "ada-lovelace", "8.9", None),
    Product("NVIDIA RTX 6000 Ada Generation", (), _pci("26B1"), None, "ada-lovelace", "8.9", None),
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


def _words(name):
    """Words of a normalized name, plus each two neighbours joined: "l40-s-48gb" also holds "l40s" and "s48gb",
    so a model split by punctuation still matches the model written as one word."""
    words = re.findall(r"[a-z0-9]+", normalize_product_name(name))
    return set(words) | {first + second for first, second in zip(words, words[1:])}


def _model(name):
    """The model a name names: its first word with a digit, with a one-letter word after it joined ("L40-S" ->
    "l40s", "A10 G" -> "a10g"); None without a digit ("all-balanced")."""
    words = re.findall(r"[a-z0-9]+", normalize_product_name(name))
    for index, word in enumerate(words):
        if re.search(r"\d", word):
            after = words[index + 1] if index + 1 < len(words) else ""
            return word + after if len(after) == 1 and after.isalpha() else word
    return None


def _compact(name):
    return re.sub(r"[^a-z0-9]", "", normalize_product_name(name))


def suggest_names(wanted, names, limit=3):
    """Near matches of WANTED among NAMES ("did you mean"), best first; [] when none.

    Ranked by the model first (L40-S means L40S, not L40), then by the words they share (H100 SXM5 80GB shares
    h100 and 80gb with H100 80GB HBM3, only 80gb with A100-SXM4-80GB), then by difflib's similarity of the names
    without punctuation. A name qualifies with the same model, a shared word that holds a digit, or a similarity
    of 0.7.
    """
    model, words, compact = _model(wanted), _words(wanted), _compact(wanted)
    ranked = []
    for name in dict.fromkeys(names):
        same_model = model is not None and _model(name) == model
        shared = words & _words(name)
        ratio = difflib.SequenceMatcher(None, compact, _compact(name)).ratio()
        if same_model or ratio >= 0.7 or any(re.search(r"\d", word) for word in shared):
            ranked.append((not same_model, -len(shared), -ratio, name))
    return [entry[-1] for entry in sorted(ranked)[:limit]]


def suggest_products(wanted, limit=3):
    """Catalog product names near WANTED, e.g. "H100-SXM5-80GB" -> ["NVIDIA H100 80GB HBM3", ...]."""
    names = [printed for product in _PRODUCTS for printed in (product.name, *product.aliases)]
    found = []
    for name in suggest_names(wanted, names, limit * 2):
        product = find_product(name)
        if product.name not in found:
            found.append(product.name)
    return found[:limit]


def product_hint(wanted):
    """ "did you mean A or B?" naming the catalog products near WANTED, or "" when none is near."""
    near = suggest_products(wanted) if isinstance(wanted, str) else []
    return f"did you mean {' or '.join(near)}?" if near else ""


EXTRA_KEYS = ("name", "memory_mib", "compute_capability", "pci_device_id")


def extra_products(entries, variable="gpuops_gpu_catalog_extra"):
    """(products, problems) of an inventory's list of products the catalog lacks.

    Each entry: name, memory_mib (integer > 0), compute_capability ("8.6"), pci_device_id optional
    ("0x26B910DE" or "26B9"). No MIG geometry: MIG is not planned on them. A name the catalog already
    knows is refused (the catalog's data wins and must not be shadowed).
    """
    if entries is None:
        return [], []
    if not isinstance(entries, list):
        return [], [f"{variable}: must be a list of {{name, memory_mib, compute_capability, pci_device_id}}"]
    products, problems = [], []
    for index, entry in enumerate(entries):
        path = f"{variable}[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{path}: must be a mapping with keys {', '.join(EXTRA_KEYS)}")
            continue
        errors = [
            f"{path}.{key}: unknown key; valid keys: {', '.join(EXTRA_KEYS)}" for key in entry if key not in EXTRA_KEYS
        ]
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{path}.name: must be the product name nvidia-smi prints, e.g. NVIDIA L40")
        elif any(normalize_product_name(name) == normalize_product_name(p.name) for p in products):
            errors.append(f"{path}.name: {excerpt(name)} is described twice; keep one entry")
        elif find_product(name) is not None:
            errors.append(
                f"{path}.name: {excerpt(name)} is already in the catalog as {find_product(name).name}; remove the entry"
            )
        memory = entry.get("memory_mib")
        if isinstance(memory, bool) or not isinstance(memory, int) or memory <= 0:
            errors.append(
                f"{path}.memory_mib: must be the GPU memory in MiB as nvidia-smi prints it, got {excerpt(memory)}"
            )
        capability = entry.get("compute_capability")
        if not isinstance(capability, str) or not re.fullmatch(r"[0-9]{1,2}\.[0-9]", capability):
            errors.append(f'{path}.compute_capability: must be a string like "8.9", got {excerpt(capability)}')
        device_ids = ()
        if entry.get("pci_device_id") is not None:
            device_id = normalize_device_id(entry["pci_device_id"])
            if device_id is None:
                bad_id = excerpt(entry["pci_device_id"])
                errors.append(f"{path}.pci_device_id: must be a PCI device id like 0x26B910DE, got {bad_id}")
            elif find_product(device_id=device_id) is not None:
                errors.append(
                    f"{path}.pci_device_id: {device_id} is {find_product(device_id=device_id).name} in the catalog"
                )
            else:
                device_ids = (device_id,)
        if errors:
            problems += errors
            continue
        products.append(Product(name.strip(), (), device_ids, memory, "unknown", capability, None, "inventory"))
    return products, problems


def unknown_product(name):
    """A product nobody described: whole GPUs and time-slicing only, no memory or compute labels."""
    return Product(str(name).strip(), (), (), None, "unknown", None, None, "unknown")
