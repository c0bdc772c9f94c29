# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The branches the nvidia_driver role offers from Ubuntu's archive are the ones Ubuntu still maintains.

Ubuntu turns an ended branch's packages into transitional ones that pull a newer branch: offering such a branch
would install another driver than the one asked for. tests/fixtures/ubuntu-archive/SOURCE.md says where the
recorded package lists come from.
"""

import pathlib
import re

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.driver_support import KNOWN_BRANCHES

REPO = pathlib.Path(__file__).resolve().parents[4]
ARCHIVE = REPO / "tests" / "fixtures" / "ubuntu-archive"
VARS = REPO / "roles" / "nvidia_driver" / "vars"
SUITES = {"Ubuntu_22.yml": "jammy-updates", "Ubuntu_24.yml": "noble-updates", "Ubuntu_26.yml": "resolute-updates"}


def maintained_branches(suite):
    """Branches whose nvidia-dkms-BRANCH-server depends on dkms itself, not on another branch's package."""
    text = (ARCHIVE / f"{suite}-restricted-nvidia-dkms-server.txt").read_text(encoding="utf-8")
    branches, transitional = set(), {}
    for stanza in text.strip().split("\n\n"):
        branch = re.search(r"^Package: nvidia-dkms-(\d+)-server$", stanza, re.M).group(1)
        depends = re.search(r"^Depends: (.*)$", stanza, re.M).group(1)
        target = re.search(r"nvidia-dkms-(\d+)-server\b", depends)
        if target:
            transitional[branch] = target.group(1)
        else:
            branches.add(branch)
    return branches, transitional


@pytest.mark.parametrize(("vars_file", "suite"), SUITES.items())
def test_the_distribution_source_offers_exactly_the_branches_ubuntu_maintains(vars_file, suite):
    offered = yaml.safe_load((VARS / vars_file).read_text(encoding="utf-8"))["__nvidia_driver_ubuntu_branches"]
    maintained, _transitional = maintained_branches(suite)
    known = {str(branch) for branch in KNOWN_BRANCHES}
    assert offered == sorted(maintained & known, key=int)


def test_branch_535_is_a_transitional_package_onto_580_in_every_recorded_suite():
    for suite in SUITES.values():
        _maintained, transitional = maintained_branches(suite)
        assert transitional["535"] == "580", suite
