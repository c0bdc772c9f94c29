# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter of the nvidia_container_toolkit role: what to do about a container engine's nvidia runtime."""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean


def nvidia_runtime_state(configured, ctk_path, ctk_present, check_mode=False, install_changed=False):
    """State of an engine's nvidia runtime: configured, NOT configured (and why), or to configure."""
    if boolean(configured):
        return "configured"
    if not boolean(ctk_present):
        if boolean(check_mode) and boolean(install_changed):
            return f"NOT configured in check mode: {ctk_path} would be installed first"
        return f"NOT configured: {ctk_path} is missing"
    return "to configure"


class FilterModule:
    """Decisions of the nvidia_container_toolkit role."""

    def filters(self):
        return {"nvidia_runtime_state": nvidia_runtime_state}
