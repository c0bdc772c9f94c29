# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters that decide whether a role may reboot a host."""

from __future__ import annotations

import re

from ansible.module_utils.parsing.convert_bool import boolean

# Addresses that mean "the machine running the play".
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "::1")
_LOOPBACK_IPV4 = re.compile(r"^127\.")
LOCAL_CONNECTIONS = ("local", "ansible.builtin.local")


def runs_the_play(address, connection="ssh", machine_id="", controller_machine_id=""):
    """Whether the host at this address is the controller: a local connection, a loopback address, or its machine id."""
    machine_id, controller_machine_id = (machine_id or "").strip(), (controller_machine_id or "").strip()
    return (
        (connection or "ssh") in LOCAL_CONNECTIONS
        or address in LOOPBACK_NAMES
        or bool(_LOOPBACK_IPV4.match(address or ""))
        or (len(machine_id) > 0 and machine_id == controller_machine_id)
    )


def reboot_blocker(allowed, switch, runs_the_play=False, already_rebooted=False, goal="finish"):
    """Why a needed reboot must not happen; empty when it may."""
    if not boolean(allowed):
        return f"{switch} is false: reboot the host to {goal}"
    if boolean(runs_the_play):
        return "this host runs the play and is never rebooted by it: reboot it by hand"
    if boolean(already_rebooted):
        return f"the host was already rebooted once in this run (gpuops_host_rebooted): run the play again to {goal}"
    return ""


class FilterModule:
    """Reboot decisions shared by the collection's roles."""

    def filters(self):
        return {
            "runs_the_play": runs_the_play,
            "reboot_blocker": reboot_blocker,
        }
