# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the role again on a converged host: a bad request stops in preflight, a version change moves held packages."""

import os
import pathlib
import re
import subprocess
import sys

import testinfra

HOST = "driver-debian12"
PLAYBOOK = pathlib.Path(__file__).resolve().parents[1] / "converge.yml"
PIN_FILE = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
# When the container's init started (field 22 of /proc/1/stat): a reboot would change it.
INIT_STARTED = "cut -d' ' -f22 /proc/1/stat"
REBOOT_SKIPPED = re.compile(r"Reboot to load the installed driver\] \**\s*skipping: \[" + HOST + r"\]")
# Molecule forces colour, which ansible-playbook inherits.
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def run_role(*extra_vars):
    command = [
        str(pathlib.Path(sys.executable).with_name("ansible-playbook")),
        "--inventory",
        os.environ["MOLECULE_INVENTORY_FILE"],
        "--limit",
        HOST,
        str(PLAYBOOK),
    ]
    for item in extra_vars:
        command += ["--extra-vars", item]
    # Without molecule's timing callbacks: their lines between a task's header and its result are not read here.
    env = {name: value for name, value in os.environ.items() if name != "ANSIBLE_CALLBACKS_ENABLED"}
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env)


def test_branch_debian_does_not_package_stops_before_any_change():
    host = testinfra.get_host(f"podman://{HOST}")
    pin_before = host.file(PIN_FILE).content_string
    # Debian 12's archive packages 535 only (auto would turn to NVIDIA's repository for 550).
    result = run_role("nvidia_driver_branch=550", "nvidia_driver_source=distribution")
    assert result.returncode != 0
    assert "nvidia_driver_branch '550'" in result.stdout
    assert "this source offers: 535" in result.stdout
    assert "changed=0" in result.stdout
    assert host.file(PIN_FILE).content_string == pin_before


def test_new_exact_version_replaces_held_packages_and_holds_them_again():
    host = testinfra.get_host(f"podman://{HOST}")
    target = "535.261.03"
    assert not host.package("nvidia-kernel-dkms").version.startswith(target + "-"), "converge installed the newest 535"
    init_started_before = host.check_output(INIT_STARTED)
    result = run_role(f"nvidia_driver_version={target}")
    assert result.returncode == 0, result.stdout[-3000:]
    for name in ("nvidia-kernel-dkms", "nvidia-smi", "libnvidia-ml1", "firmware-nvidia-gsp"):
        assert host.package(name).version.startswith(target + "-"), name
    assert f"Pin: version {target}-*" in host.file(PIN_FILE).content_string
    selections = host.check_output("dpkg --get-selections nvidia-kernel-dkms nvidia-smi").split()
    assert selections == ["nvidia-kernel-dkms", "hold", "nvidia-smi", "hold"]
    # Reboots are allowed by default (gpuops_reboot), but a container cannot load a driver: no reboot.
    assert REBOOT_SKIPPED.search(COLOUR.sub("", result.stdout)), result.stdout[-3000:]
    assert host.check_output(INIT_STARTED) == init_started_before
