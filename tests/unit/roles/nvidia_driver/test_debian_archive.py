# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia_driver role's Debian archive source against Debian's recorded package lists.

Each Debian release packages one driver branch; the role offers exactly that one from the archive (NVIDIA's
repository serves the others) and every package it installs from there exists at a version of it.
tests/fixtures/debian-archive/SOURCE.md says where the lists come from.
"""

import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[4]
ARCHIVE = REPO / "tests" / "fixtures" / "debian-archive"
VARS = REPO / "roles" / "nvidia_driver" / "vars"
RELEASES = {"Debian_12.yml": "bookworm", "Debian_13.yml": "trixie"}


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def archive(suite):
    """{package: {upstream version, ...}} over the suite, its -updates and -security."""
    offered = {}
    for stanza in (ARCHIVE / f"{suite}-nvidia.txt").read_text(encoding="utf-8").strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines())
        offered.setdefault(fields["Package"], set()).add(re.sub(r"-[^-]*$", "", fields["Version"]))
    return offered


@pytest.mark.parametrize(("vars_file", "suite"), RELEASES.items())
def test_the_archive_source_offers_the_branch_debian_packages(vars_file, suite):
    os_vars = load(VARS / vars_file)
    assert os_vars["__nvidia_driver_debian_suite"] == suite
    branches = {version.split(".")[0] for version in archive(suite)["nvidia-kernel-dkms"]}
    assert os_vars["__nvidia_driver_debian_branches"] == sorted(branches, key=int)


@pytest.mark.parametrize(("vars_file", "suite"), RELEASES.items())
def test_every_package_the_archive_source_installs_exists_in_the_branch(vars_file, suite):
    source = load(VARS / "main.yml")["__nvidia_driver_debian_archive_source"]
    [branch] = load(VARS / vars_file)["__nvidia_driver_debian_branches"]
    offered = archive(suite)
    names = [*source["module_packages"].values(), *source["packages"], *source["extra_packages"]]
    for name in names:
        assert name in offered, f"{suite} has no {name}"
    # The driver's own packages share one version of the branch: the role installs them all at it.
    common = set.intersection(
        *(offered[name] for name in source["packages"]), offered[source["module_packages"]["proprietary"]]
    )
    assert any(version.startswith(branch + ".") for version in common), (suite, common)


def test_debian_12_open_modules_lag_the_security_update():
    # bookworm-security carries 535.309.01 for the proprietary modules only: the open ones stay at 535.261.03,
    # which is why the driver scenario's open host asks for that exact version.
    offered = archive("bookworm")
    assert "535.309.01" in offered["nvidia-kernel-dkms"]
    assert offered["nvidia-open-kernel-dkms"] == {"535.261.03"}
