# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""State of a Machine Owner Key from `mokutil --test-key` (gpuops.cluster.mokutil_key_state filter).

The answers are mokutil's own messages (mokutil.c of lcp/mokutil: "%s is already enrolled",
"%s is already in the enrollment request", "%s is not enrolled"), and what the command module
returns when the binary is missing.
"""

import pytest
from ansible_collections.gpuops.cluster.plugins.filter.mokutil import FilterModule, mokutil_key_state

CERT = "/var/lib/dkms/mok.pub"


@pytest.mark.parametrize(
    ("result", "exists", "expected"),
    [
        pytest.param({"skipped": True, "skip_reason": "Conditional result was False"}, False, "missing", id="no-cert"),
        pytest.param(
            {"rc": 2, "msg": "[Errno 2] No such file or directory: b'mokutil'", "stdout": ""},
            True,
            "mokutil missing",
            id="no-mokutil",
        ),
        pytest.param({"rc": 0, "stdout": f"{CERT} is already enrolled"}, True, "enrolled", id="enrolled"),
        pytest.param({"rc": 1, "stdout": f"{CERT} is already in the enrollment request"}, True, "queued", id="queued"),
        pytest.param({"rc": 0, "stdout": f"{CERT} is not enrolled"}, True, "not enrolled", id="not-enrolled"),
        pytest.param({"rc": 0, "stdout": "", "msg": ""}, True, "not enrolled", id="no-answer"),
        pytest.param(None, "yes", "not enrolled", id="no-result"),
    ],
)
def test_mokutil_key_state(result, exists, expected):
    assert mokutil_key_state(result, exists) == expected


def test_filter_is_registered():
    assert set(FilterModule().filters()) == {"mokutil_key_state"}
