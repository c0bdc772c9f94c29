# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks the Debian 12 and 13 hosts after the nvidia_driver role ran in a container (no GPU, no kernel of their own)."""

import json

import pytest

EXPECTED = {
    "driver-debian12": {"branch": "535", "kernel_modules": "proprietary", "module_package": "nvidia-kernel-dkms"},
    "driver-debian12-open": {
        "branch": "535",
        "kernel_modules": "open",
        "module_package": "nvidia-open-kernel-dkms",
        "version": "535.261.03",
    },
    "driver-debian13": {"branch": "550", "kernel_modules": "proprietary", "module_package": "nvidia-kernel-dkms"},
}
VERSIONED_PACKAGES = ["firmware-nvidia-gsp", "nvidia-smi", "libcuda1", "libnvidia-ml1", "libnvidia-cfg1"]


@pytest.fixture
def expected(host):
    return EXPECTED[host.backend.get_hostname()]


@pytest.fixture
def report(host):
    return json.loads(host.file("/etc/ansible/facts.d/nvidia_driver.fact").content_string)


def test_driver_packages_installed_at_one_version_of_the_branch(host, expected, report):
    packages = [expected["module_package"], *VERSIONED_PACKAGES]
    versions = {host.package(name).version.split("-")[0] for name in packages}
    assert versions == {report["version"]}
    assert report["version"].startswith(expected["branch"] + ".")
    if "version" in expected:
        assert report["version"] == expected["version"]


def test_driver_packages_are_held(host, expected):
    held = host.check_output("dpkg --get-selections").splitlines()
    # Names of multi-arch packages carry the architecture (libcuda1:amd64).
    selections = {name.split(":")[0]: state for name, state in (line.split() for line in held)}
    for name in [expected["module_package"], *VERSIONED_PACKAGES, "nvidia-persistenced"]:
        assert selections[name] == "hold", name


def test_apt_pins_the_driver_version(host, report):
    pref = host.file("/etc/apt/preferences.d/gpuops-nvidia-driver.pref").content_string
    assert f"Pin: version {report['version']}-*" in pref
    policy = host.check_output("apt-cache policy nvidia-smi")
    assert f"Candidate: {report['version']}-" in policy


def test_non_free_components_added_once(host):
    sources = host.file("/etc/apt/sources.list.d/debian-nvidia.sources").content_string
    assert "Components: contrib non-free non-free-firmware" in sources
    assert host.file("/etc/apt/sources.list.d/debian-security-nvidia.sources").exists


def test_nouveau_blacklisted(host):
    conf = host.file("/etc/modprobe.d/gpuops-blacklist-nouveau.conf")
    assert conf.mode == 0o644
    assert "blacklist nouveau" in conf.content_string.splitlines()


def test_persistenced_enabled_not_started_without_a_gpu(host):
    service = host.service("nvidia-persistenced")
    assert service.is_enabled
    assert not service.is_running


def test_role_reports_kernel_modules_and_skipped_steps(host, expected, report):
    assert report["kernel_modules"] == expected["kernel_modules"]
    assert report["in_container"] is True
    assert report["gpus"] == 0
    assert report["reboot_pending"] is False
    skipped = {item["step"]: item["reason"] for item in report["skipped"]}
    for step in ("load the kernel module (reboot if needed)", "verify with nvidia-smi", "start nvidia-persistenced"):
        assert "running in a container" in skipped[step]


def test_dkms_registered_module_without_building_it(host, expected):
    status = host.check_output("dkms status")
    assert "added" in status
    assert "installed" not in status
