# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""State of a container engine's nvidia runtime (gpuops.cluster.nvidia_runtime_state filter)."""

import pytest
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_container_toolkit import (
    FilterModule,
    nvidia_runtime_state,
)

CTK = "/usr/bin/nvidia-ctk"


@pytest.mark.parametrize(
    ("configured", "ctk_present", "check_mode", "install_changed", "expected"),
    [
        pytest.param(True, False, False, False, "configured", id="already-configured"),
        pytest.param(False, True, False, False, "to configure", id="ctk-can-add-it"),
        pytest.param(False, True, True, True, "to configure", id="check-mode-with-ctk"),
        pytest.param(False, False, False, False, f"NOT configured: {CTK} is missing", id="no-ctk"),
        pytest.param(
            False, False, True, True, f"NOT configured in check mode: {CTK} would be installed first", id="check-mode"
        ),
        pytest.param(
            False, False, True, False, f"NOT configured: {CTK} is missing", id="check-mode-nothing-to-install"
        ),
    ],
)
def test_nvidia_runtime_state(configured, ctk_present, check_mode, install_changed, expected):
    assert nvidia_runtime_state(configured, CTK, ctk_present, check_mode, install_changed) == expected


def test_filter_is_registered():
    assert set(FilterModule().filters()) == {
        "nvidia_runtime_state",
        "nvidia_container_toolkit_first_read",
        "nvidia_container_toolkit_installed",
        "nvidia_container_toolkit_status",
        "nvidia_container_toolkit_cdi_state",
    }
