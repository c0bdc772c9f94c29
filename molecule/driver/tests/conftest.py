# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run testinfra's commands through `podman exec` (fast) rather than one Ansible task per command."""

import pytest
import testinfra


@pytest.fixture
def host(host):
    return testinfra.get_host(f"podman://{host.backend.get_hostname()}")
