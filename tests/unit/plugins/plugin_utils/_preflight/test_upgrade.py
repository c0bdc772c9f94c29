# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What an upgrade run changes on a node: a node nothing changes is not drained."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils._preflight.upgrade import (
    installed_package_version,
    upgrade_changes,
)


@pytest.mark.parametrize(
    ("driver", "change"),
    [
        ({"loaded": "535.183.01", "branch": "535", "version": ""}, ""),
        ({"loaded": "535.183.01", "branch": "550", "version": ""}, "driver: 535.183.01 -> branch 550"),
        ({"loaded": "535.183.01", "branch": "535", "version": "535.261.03"}, "driver: 535.183.01 -> 535.261.03"),
        ({"loaded": "535.261.03", "branch": "535", "version": "535.261.03"}, ""),
        ({"loaded": "", "branch": "535", "version": ""}, "driver: none loaded -> branch 535"),
    ],
)
def test_driver(driver, change):
    assert upgrade_changes({"driver": driver}) == ([change] if change else [])


def test_toolkit_rke2_and_components_left_out():
    components = {
        "toolkit": {"installed": "1.17.3-1", "wanted": "1.17.8-1"},
        "rke2": {"upgrade": True, "installed": "v1.33.5+rke2r1", "wanted": "v1.34.1+rke2r1"},
    }
    assert upgrade_changes(components) == [
        "container toolkit: 1.17.3-1 -> 1.17.8-1",
        "RKE2: v1.33.5+rke2r1 -> v1.34.1+rke2r1",
    ]
    assert upgrade_changes({"toolkit": {"installed": "1.17.8-1", "wanted": "1.17.8-1"}}) == []
    assert (
        upgrade_changes({"rke2": {"upgrade": False, "installed": "v1.33.5+rke2r1", "wanted": "v1.33.5+rke2r1"}}) == []
    )
    assert upgrade_changes({}) == []


def test_installed_toolkit_version_from_apt_and_dnf_package_facts():
    apt = {"nvidia-container-toolkit": [{"name": "nvidia-container-toolkit", "version": "1.17.8-1", "source": "apt"}]}
    dnf = {"nvidia-container-toolkit": [{"name": "nvidia-container-toolkit", "version": "1.17.8", "release": "1"}]}
    assert installed_package_version(apt) == installed_package_version(dnf) == "1.17.8-1"
    assert installed_package_version({}) == ""
