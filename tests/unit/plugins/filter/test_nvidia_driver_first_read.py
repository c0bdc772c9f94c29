# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_driver_first_read, nvidia_driver_chosen_version and nvidia_driver_load: what the nvidia_driver role's read
of a host decides, from the recorded `apt-cache madison` of Debian 12's archive (fixtures/apt-cache-madison) and the
host reader's answer as files/nvidia-host-state.sh prints it."""

import json
import pathlib

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_driver import (
    nvidia_driver_chosen_version,
    nvidia_driver_first_read,
    nvidia_driver_flavour_packages,
    nvidia_driver_load,
)

MADISON = pathlib.Path(__file__).resolve().parent / "fixtures" / "apt-cache-madison" / "debian12-nvidia-kernel-dkms.txt"
MADISON_LINES = MADISON.read_text(encoding="utf-8").splitlines()
# Debian's archive source as vars/main.yml defines it (the keys the decisions read).
DEBIAN = {
    "module_packages": {"proprietary": "nvidia-kernel-dkms", "open": "nvidia-open-kernel-dkms"},
    "signed_module_packages": {},
    "packages": ["firmware-nvidia-gsp", "nvidia-smi", "libcuda1", "libnvidia-ml1", "libnvidia-cfg1"],
    "fabric_manager_package": "",
}
# Ubuntu's archive source for branch 580.
UBUNTU = {
    "module_packages": {"proprietary": "nvidia-dkms-580-server", "open": "nvidia-dkms-580-server-open"},
    "signed_module_packages": {
        "proprietary": "linux-modules-nvidia-580-server-6.8.0-40-generic",
        "open": "linux-modules-nvidia-580-server-open-6.8.0-40-generic",
    },
    "packages": ["nvidia-headless-no-dkms-580-server", "nvidia-utils-580-server"],
    "open_packages": ["nvidia-headless-no-dkms-580-server-open", "nvidia-utils-580-server"],
    "fabric_manager_package": "nvidia-fabricmanager-580",
}
# Two L4 (0x27b8), the driver loaded at the version installed.
HOST = {
    "gpus": [{"device_id": "0x27b8"}, {"device_id": "0x27b8"}],
    "nvswitch_count": 0,
    "secure_boot": False,
    "loaded_module_version": "535.309.01",
    "nouveau_loaded": False,
    "smi_driver_versions": ["535.309.01", "535.309.01"],
    "machine_id": "4f0c1e0d2b6a4c1f9a7e5d3b2c1a0f9e",
}
REBOOT = {
    "allowed": True,
    "already_rebooted": False,
    "address": "10.0.0.21",
    "connection": "ssh",
    "controller_machine_id": "0123456789abcdef0123456789abcdef",
}


def installed(version):
    names = ["nvidia-kernel-dkms", "nvidia-open-kernel-dkms", *DEBIAN["packages"]]
    return {name: {"installed": bool(version), "version": version, "held": False} for name in names}


def read(host=None, version="535.309.01-0+deb12u1"):
    return {
        "commands": {"host": {"stdout": json.dumps(host or HOST)}, "madison": {"stdout_lines": MADISON_LINES}},
        "packages": installed(version),
    }


def wanted(**more):
    return {
        "kernel_modules": "proprietary",
        "branch": "535",
        "version": "",
        "signed": False,
        "fabric_manager": "auto",
        "package_manager": "apt",
        "source": DEBIAN,
        "virtualization_role": "host",
        "virtualization_type": "kvm",
        "container_types": ["container", "docker", "podman", "lxc"],
        "reboot": REBOOT,
        **more,
    }


def test_a_converged_debian_host():
    decided = nvidia_driver_first_read(read(), wanted())
    assert decided == {
        "host": HOST,
        "in_container": False,
        "flavour": "proprietary",
        "fabric_manager_needed": False,
        "module_package": "nvidia-kernel-dkms",
        "flavour_packages": DEBIAN["packages"],
        "target": "535.309.01",
        "cannot_load": "",
        "reboot_needed": False,
        "reboot_blocker": "",
    }


def test_an_installed_driver_of_the_branch_stays_and_the_newest_is_chosen_otherwise():
    assert nvidia_driver_first_read(read(version="535.261.03-1"), wanted())["target"] == "535.261.03"
    assert nvidia_driver_first_read(read(version=""), wanted())["target"] == "535.309.01"
    exact = wanted(version="535.261.03")
    assert nvidia_driver_first_read(read(), exact)["target"] == "535.261.03"
    assert nvidia_driver_first_read(read(), wanted(version="535.999.01"))["target"] == ""


def test_a_new_version_needs_a_reboot_unless_the_host_runs_the_play():
    decided = nvidia_driver_first_read(read(version=""), wanted())
    # The module loaded is the version chosen.
    assert decided["reboot_needed"] is False
    host = {**HOST, "loaded_module_version": "535.261.03"}
    decided = nvidia_driver_first_read(read(host=host), wanted())
    assert decided["reboot_needed"] is True and decided["reboot_blocker"] == ""
    local = wanted(reboot={**REBOOT, "connection": "local"})
    assert nvidia_driver_first_read(read(host=host), local)["reboot_blocker"].startswith("this host runs the play")
    same_machine = wanted(reboot={**REBOOT, "controller_machine_id": HOST["machine_id"]})
    assert nvidia_driver_first_read(read(host=host), same_machine)["reboot_blocker"].startswith(
        "this host runs the play"
    )
    forbidden = wanted(reboot={**REBOOT, "allowed": False})
    assert nvidia_driver_first_read(read(host=host), forbidden)["reboot_blocker"] == (
        "nvidia_driver_reboot is false: reboot the host to load driver 535.309.01"
    )


def test_a_container_cannot_load_and_needs_no_reboot():
    decided = nvidia_driver_first_read(
        read(host={**HOST, "loaded_module_version": ""}),
        wanted(virtualization_role="guest", virtualization_type="podman"),
    )
    assert decided["in_container"] is True
    assert decided["cannot_load"] == "running in a container (podman): the kernel is the container host's"
    assert decided["reboot_needed"] is False


def test_auto_flavour_and_fabric_manager_follow_the_gpus_found():
    hopper = {**HOST, "gpus": [{"device_id": "0x2330"}] * 8, "nvswitch_count": 4}
    decided = nvidia_driver_first_read(read(host=hopper), wanted(kernel_modules="auto", branch="580", source=UBUNTU))
    assert (decided["flavour"], decided["fabric_manager_needed"]) == ("open", True)
    assert decided["module_package"] == "nvidia-dkms-580-server-open"
    assert decided["flavour_packages"] == UBUNTU["open_packages"]
    assert nvidia_driver_first_read(read(host=hopper), wanted(fabric_manager="never"))["fabric_manager_needed"] is False


def test_the_flavour_packages_of_a_source():
    assert nvidia_driver_flavour_packages(UBUNTU, "proprietary", True) == {
        "module_package": "linux-modules-nvidia-580-server-6.8.0-40-generic",
        "flavour_packages": UBUNTU["packages"],
    }
    # A source without signed modules has no package for them: host_checks.yml names that.
    assert nvidia_driver_flavour_packages(DEBIAN, "open", True)["module_package"] == ""
    assert nvidia_driver_flavour_packages(DEBIAN, "open", False)["flavour_packages"] == DEBIAN["packages"]


def test_fabric_manager_must_offer_the_driver_version():
    inputs = {
        "branch": "535",
        "version": "",
        "signed": False,
        "module_package": "nvidia-kernel-dkms",
        "flavour_packages": DEBIAN["packages"],
        "fabric_manager_needed": True,
        "fabric_manager_package": "nvidia-fabricmanager-535",
    }
    # Debian's archive has no Fabric Manager: no version every queried package offers.
    assert nvidia_driver_chosen_version(installed(""), MADISON_LINES, inputs) == ""
    assert (
        nvidia_driver_chosen_version(installed(""), MADISON_LINES, {**inputs, "fabric_manager_needed": False})
        == "535.309.01"
    )


def test_dnf_decides_the_version_and_the_load_after_its_packages():
    decided = nvidia_driver_first_read(read(), wanted(package_manager="dnf"))
    assert set(decided) == {
        "host",
        "in_container",
        "flavour",
        "fabric_manager_needed",
        "module_package",
        "flavour_packages",
    }


def test_check_mode_before_the_install_cannot_load():
    load = nvidia_driver_load(HOST, False, "", True, {"virtualization_type": "kvm", "reboot": REBOOT})
    assert load == {
        "cannot_load": "check mode: the driver is not installed yet",
        "reboot_needed": False,
        "reboot_blocker": "",
    }


def test_a_read_without_the_host_reader_is_refused():
    with pytest.raises(AnsibleFilterError, match="expects the role's host_state read"):
        nvidia_driver_first_read({"skipped": True}, wanted())
