# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter that reads the answer of `mokutil --test-key`."""

from __future__ import annotations

import re

from ansible.module_utils.parsing.convert_bool import boolean

_ENROLLED = re.compile(r"is already enrolled$", re.MULTILINE)
_QUEUED = "is already in the enrollment request"


def mokutil_key_state(test_key_result, certificate_exists=True):
    """State of a Machine Owner Key from the registered result of `mokutil --test-key CERT`."""
    result = test_key_result or {}
    if not boolean(certificate_exists):
        return "missing"
    # The command module says so in msg when mokutil itself is not installed.
    if "No such file or directory" in (result.get("msg") or ""):
        return "mokutil missing"
    stdout = result.get("stdout") or ""
    if _ENROLLED.search(stdout):
        return "enrolled"
    if _QUEUED in stdout:
        return "queued"
    return "not enrolled"


class FilterModule:
    """Machine Owner Key state."""

    def filters(self):
        return {"mokutil_key_state": mokutil_key_state}
