# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which NVIDIA driver branches drive which catalog product, for the plan's check before any host changes.

A driver too old for a GPU does not know its PCI id and leaves it unusable; a branch newer than the last one
that drives a retired architecture does not load for it at all. NVIDIA publishes both per driver release
(the `supported-gpus.json` of each release, its `legacybranch` field for retired chips; the release notes'
supported-products lists). docs/gpu-catalog.md has the table with its sources; "(unverified)" marks a bound
nobody here could read in NVIDIA's own notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt

# NVIDIA Linux driver branches from R450 on, as NVIDIA's data center release notes index them
# (docs.nvidia.com/datacenter/tesla/: production, long-term support and new feature branches), up to the one the
# GPU Operator v26.7.0 chart defaults to (driver 595.91.07). A newer branch is added here when NVIDIA publishes it.
KNOWN_BRANCHES = (450, 460, 470, 510, 515, 520, 525, 530, 535, 545, 550, 555, 560, 565, 570, 575, 580, 590, 595)
# NVIDIA's long-term support branches (LTSB) among them: R470, R535 and R580.
LONG_TERM_BRANCHES = (470, 535, 580)

BRANCH_VARIABLE = "nvidia_driver_branch"
VERSION_VARIABLE = "nvidia_driver_version"
_BRANCH = re.compile(r"[1-9][0-9]{2}")
_VERSION = re.compile(r"([1-9][0-9]{2})\.([0-9]{1,3})(?:\.([0-9]{1,3}))?")


@dataclass(frozen=True)
class DriverRange:
    """The branches that drive a product: FIRST on (from FIRST_VERSION within it, where NVIDIA names one),
    up to LAST where NVIDIA retired its architecture (None: still supported). SOURCE says where from."""

    first: int
    last: int | None
    source: str
    first_version: str | None = None

    def branches(self):
        return tuple(b for b in KNOWN_BRANCHES if b >= self.first and (self.last is None or b <= self.last))


# R580 is the last branch for Maxwell, Pascal and Volta: their chips carry legacybranch "580.xx" in the
# supported-gpus.json of later releases (NVIDIA's CUDA 13.0 and R580 release notes announce it).
_RETIRED_AFTER_580 = "R580 is the last branch for Volta (legacybranch 580.xx in supported-gpus.json)"

# By architecture, where every product of it entered the driver before the oldest branch the collection knows,
# or at the bound given; products below override it.
_BY_ARCHITECTURE = {
    "volta": DriverRange(450, 580, _RETIRED_AFTER_580),
    "turing": DriverRange(450, None, "Tesla T4 is driven from R410 on, before every known branch"),
    "ampere": DriverRange(
        450, None, "A100 launched with R450 (CUDA 11.0); the GA10x parts with R460/R470 (unverified)"
    ),
    "ada-lovelace": DriverRange(525, None, "L4, L40 and RTX 6000 Ada entered the driver in R525 (unverified)"),
    "hopper": DriverRange(525, None, "HGX H100 is in the R525 release notes (525.85.12, VBIOS HGX H100 PG520)"),
    "blackwell": DriverRange(570, None, "HGX B200 and GB200 NVL entered with R570 (GPU Operator v25.3.0 notes)"),
}

_BY_PRODUCT = {
    "NVIDIA A10G": DriverRange(470, None, "AWS G5 (A10G) launched on R470 (unverified)"),
    "NVIDIA A2": DriverRange(470, None, "A2 entered the driver in R470 (unverified)"),
    "NVIDIA L40S": DriverRange(535, None, "L40S entered the driver in R535 (unverified)"),
    "NVIDIA L20": DriverRange(535, None, "L20 entered the driver in R535 (unverified)"),
    # NVIDIA AI Enterprise 2.3 release notes: "Support for the NVIDIA H100 GPU", bare-metal driver 520.61.05.
    "NVIDIA H100 PCIe": DriverRange(520, None, "NVIDIA AI Enterprise 2.3 notes: H100 PCIe with driver 520.61.05"),
    "NVIDIA H800 PCIe": DriverRange(520, None, "as H100 PCIe, its export variant (unverified)"),
    "NVIDIA H100 NVL": DriverRange(535, None, "H100 NVL entered the driver in R535 (unverified)"),
    "NVIDIA H800 NVL": DriverRange(535, None, "as H100 NVL, its export variant (unverified)"),
    "NVIDIA H20": DriverRange(535, None, "H20 entered the driver in R535 (unverified)"),
    "NVIDIA GH200 480GB": DriverRange(535, None, "GH200 96GB entered the driver in R535 (unverified)"),
    "NVIDIA H200": DriverRange(550, None, "H200 entered the driver in R550 (unverified)"),
    "NVIDIA GH200 144G HBM3e": DriverRange(550, None, "GH200 144GB entered the driver in R550 (unverified)"),
    "NVIDIA H200 NVL": DriverRange(565, None, "H200 NVL entered the driver in R565 (unverified)"),
    # NVIDIA/cloud-native-docs gpu-operator/platform-support.rst: "HGX B200 requires a driver container version
    # of 570.133.20 or later".
    "NVIDIA B200": DriverRange(
        570, None, "GPU Operator platform support: HGX B200 needs 570.133.20 or later", "570.133.20"
    ),
    # GPU Operator v25.3.0 release notes: HGX GB200 NVL added with driver 570.124.06.
    "NVIDIA GB200": DriverRange(
        570, None, "GPU Operator v25.3.0 notes: GB200 NVL with driver 570.124.06", "570.124.06"
    ),
    # No R570 release drives it; Google's COS driver policy (board-overlays commit af3ca4ea) names 575.57.08,
    # a new feature branch, as its minimum; R580 is the first production branch that does.
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": DriverRange(
        575, None, "the first driver for it is 575.57.08 (R575, a new feature branch)", "575.57.08"
    ),
}


def driver_range(product):
    """The DriverRange of a catalog product; None for one the catalog does not describe (no bound known)."""
    if product.origin != "catalog":
        return None
    return _BY_PRODUCT.get(product.name) or _BY_ARCHITECTURE.get(product.architecture)


def default_branch(products):
    """The newest long-term support branch that drives every one of PRODUCTS (a product without a known range
    counts as driven), as the nvidia_driver role's default is chosen; None when no such branch drives them all."""
    ranges = [driver_range(product) for product in products]
    for branch in sorted(LONG_TERM_BRANCHES, reverse=True):
        if all(supported is None or branch in supported.branches() for supported in ranges):
            return branch
    return None


def _branches_text(branches):
    return ", ".join(str(b) for b in branches) if branches else "none"


def _version_key(version):
    return tuple(int(part) for part in version.split("."))


def driver_problems(product, branch, version):
    """[(variable, message)] for a node with PRODUCT's GPUs and the driver role's BRANCH and VERSION values
    (as the inventory or the role's defaults give them); [] when that driver drives the GPUs."""
    text = str(branch).strip() if isinstance(branch, (str, int)) and not isinstance(branch, bool) else None
    if text is None or not _BRANCH.fullmatch(text):
        return [
            (
                BRANCH_VARIABLE,
                f"must be a driver branch, its three-digit major version such as {LONG_TERM_BRANCHES[-1]}, got "
                f"{excerpt(branch)}; known branches: {_branches_text(KNOWN_BRANCHES)}",
            )
        ]
    number = int(text)
    if number not in KNOWN_BRANCHES:
        return [
            (
                BRANCH_VARIABLE,
                f"{number} is not a driver branch NVIDIA publishes; known branches: {_branches_text(KNOWN_BRANCHES)} "
                f"(long-term support: {_branches_text(LONG_TERM_BRANCHES)})",
            )
        ]
    problems = []
    if version is not None and not isinstance(version, str):
        # YAML reads 570.170 as the number 570.17: the version would silently be another one.
        problems.append(
            (
                VERSION_VARIABLE,
                f"must be a string, got the {type(version).__name__} {excerpt(version)}; quote it, "
                f'e.g. "{number}.105.08"',
            )
        )
        version = ""
    version_text = (version or "").strip()
    match = _VERSION.fullmatch(version_text)
    if version_text and (match is None or int(match.group(1)) != number):
        problems.append(
            (
                VERSION_VARIABLE,
                f"must be a version of branch {number} such as {number}.105.08, or empty for the newest the "
                f"source offers; got {excerpt(version)}",
            )
        )
        version_text = ""
    supported = driver_range(product)
    if supported is None:
        return problems
    working = supported.branches()
    if number not in working:
        retired = supported.last is not None and number > supported.last
        why = (
            f"NVIDIA retired it after branch {supported.last}" if retired else f"its first branch is {supported.first}"
        )
        problems.append(
            (
                BRANCH_VARIABLE,
                f"branch {number} cannot drive {product.name} ({product.architecture}): {why} ({supported.source}); "
                f"branches that would: {_branches_text(working)}",
            )
        )
    elif (
        version_text
        and supported.first_version
        and number == supported.first
        and _version_key(version_text) < _version_key(supported.first_version)
    ):
        problems.append(
            (
                VERSION_VARIABLE,
                f"{version_text} cannot drive {product.name}: it needs {supported.first_version} or later in branch "
                f"{number} ({supported.source}); leave it empty for the newest of the branch, or choose a later one",
            )
        )
    return problems
