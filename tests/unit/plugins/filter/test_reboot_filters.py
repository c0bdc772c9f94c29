# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a role may reboot a host (gpuops.cluster.runs_the_play and reboot_blocker filters)."""

import pytest
from ansible_collections.gpuops.cluster.plugins.filter.reboot import FilterModule, reboot_blocker, runs_the_play

CONTROLLER_ID = "4b1d0e6f2a0c4f0f9e3a1b2c3d4e5f60\n"


@pytest.mark.parametrize(
    ("address", "connection", "machine_id", "expected"),
    [
        pytest.param("192.0.2.21", "ssh", "0123456789abcdef0123456789abcdef", False, id="another-host"),
        pytest.param("192.0.2.21", "local", "", True, id="local-connection"),
        pytest.param("192.0.2.21", "ansible.builtin.local", "", True, id="local-connection-fqcn"),
        pytest.param("localhost", "ssh", "", True, id="localhost"),
        pytest.param("::1", "ssh", "", True, id="ipv6-loopback"),
        pytest.param("127.0.1.1", "ssh", "", True, id="ipv4-loopback"),
        pytest.param("gpu-a100-1", "ssh", CONTROLLER_ID.strip(), True, id="controller-under-its-own-name"),
        pytest.param("gpu-a100-1", "ssh", "", False, id="unknown-machine-id"),
        pytest.param("gpu-a100-1", None, None, False, id="connection-and-id-undefined"),
    ],
)
def test_runs_the_play(address, connection, machine_id, expected):
    assert runs_the_play(address, connection, machine_id, CONTROLLER_ID) is expected


def test_no_machine_id_on_either_side_is_not_a_match():
    assert runs_the_play("gpu-a100-1", "ssh", "", "") is False


@pytest.mark.parametrize(
    ("allowed", "controller", "rebooted", "expected"),
    [
        pytest.param(True, False, False, "", id="may-reboot"),
        pytest.param("true", False, False, "", id="allowed-as-a-string"),
        pytest.param(
            False,
            True,
            True,
            "nvidia_driver_reboot is false: reboot the host to load driver 535.261.03",
            id="not-allowed-first",
        ),
        pytest.param(
            True,
            True,
            False,
            "this host runs the play and is never rebooted by it: reboot it by hand",
            id="the-controller",
        ),
        pytest.param(
            True,
            False,
            True,
            "the host was already rebooted once in this run (gpuops_host_rebooted): run the play again to load driver "
            "535.261.03",
            id="once-per-run",
        ),
    ],
)
def test_reboot_blocker(allowed, controller, rebooted, expected):
    blocker = reboot_blocker(allowed, "nvidia_driver_reboot", controller, rebooted, "load driver 535.261.03")
    assert blocker == expected


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {"runs_the_play", "reboot_blocker"}
