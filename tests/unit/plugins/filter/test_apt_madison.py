# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Driver versions a package source offers, from real `apt-cache madison` outputs (apt_madison_* filters)."""

import pathlib

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.apt_madison import (
    FilterModule,
    apt_madison_common_versions,
    apt_madison_versions,
)

RECORDED = pathlib.Path(__file__).resolve().parent / "fixtures" / "apt-cache-madison"


def recorded(name):
    return (RECORDED / name).read_text(encoding="utf-8").splitlines()


PROPRIETARY = recorded("debian12-nvidia-kernel-dkms.txt")
OPEN = recorded("debian12-nvidia-open-kernel-dkms.txt")
# A line in the form Ubuntu's archive gives Fabric Manager (not recorded: that archive cannot be reached from
# the test bed); its packaging revision differs from the driver's.
FABRIC_MANAGER = [
    "nvidia-fabricmanager-535 | 535.261.03-0ubuntu0.22.04.1 | http://archive.ubuntu.com/ubuntu jammy-updates/multiverse"
    " amd64 Packages"
]


def test_versions_of_one_package_without_revision():
    assert apt_madison_versions(PROPRIETARY, "firmware-nvidia-gsp") == ["535.309.01", "535.261.03"]
    assert apt_madison_versions(PROPRIETARY, "nvidia-smi") == []


def test_newest_version_every_package_offers_comes_first():
    versions = apt_madison_common_versions(PROPRIETARY, ["nvidia-kernel-dkms", "firmware-nvidia-gsp"], "535")
    assert versions == ["535.309.01", "535.261.03"]


def test_open_modules_hold_the_driver_back_to_their_only_version():
    versions = apt_madison_common_versions(OPEN, ["nvidia-open-kernel-dkms", "firmware-nvidia-gsp"], "535")
    assert versions == ["535.261.03"]


def test_exact_version_asked_for():
    packages = ["nvidia-kernel-dkms", "firmware-nvidia-gsp"]
    assert apt_madison_common_versions(PROPRIETARY, packages, "535", "535.261.03") == ["535.261.03"]
    # The exact version is matched whole, not as a prefix.
    assert apt_madison_common_versions(PROPRIETARY, packages, "535", "535.261") == []


def test_other_branch_and_missing_package_offer_nothing():
    assert apt_madison_common_versions(PROPRIETARY, ["nvidia-kernel-dkms"], "550") == []
    assert apt_madison_common_versions(PROPRIETARY, ["nvidia-kernel-dkms", "nvidia-smi"], "535") == []
    assert apt_madison_common_versions(PROPRIETARY, [], "535") == []


def test_repeated_packages_count_once_and_revisions_do_not_matter():
    lines = PROPRIETARY + FABRIC_MANAGER
    packages = ["nvidia-kernel-dkms", "nvidia-kernel-dkms", "nvidia-fabricmanager-535"]
    assert apt_madison_common_versions(lines, packages, "535") == ["535.261.03"]


def test_versions_sort_as_versions_not_as_text():
    lines = [
        f"nvidia-smi | {version}-1 | http://deb.debian.org/debian x/non-free amd64 Packages"
        for version in ("535.54.03", "535.104.05")
    ]
    assert apt_madison_common_versions(lines, ["nvidia-smi"], "535") == ["535.104.05", "535.54.03"]


def test_input_that_is_not_lines_is_refused():
    with pytest.raises(AnsibleFilterError, match="apt-cache madison"):
        apt_madison_versions("nvidia-smi | 535.261.03-1 | x", "nvidia-smi")


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {"apt_madison_versions"}
