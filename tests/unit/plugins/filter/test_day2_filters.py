# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the day-2 playbooks: what they take from a play and what they hand back."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.day2 import (
    FilterModule,
    day2_earlier_node,
    day2_node_changes,
    day2_target_problems,
)

GROUPS = {"all": ["cp-1", "gpu-1"], "rke2_servers": ["cp-1"], "rke2_agents": ["gpu-1"], "gpu_nodes": ["gpu-1"]}


def test_every_filter_is_registered():
    assert set(FilterModule().filters()) == {
        "day2_target_problems",
        "day2_earlier_node",
        "day2_node_changes",
        "rke2_node_password_secret",
    }
    assert FilterModule().filters()["rke2_node_password_secret"]("GPU-1") == "gpu-1.node-password.rke2"


def test_target_problems():
    assert day2_target_problems("gpu-1", "remove", GROUPS) == []
    assert day2_target_problems("cp-1", "remove", GROUPS)[0].startswith("cp-1: gpuops_node: in rke2_servers")
    with pytest.raises(AnsibleFilterError, match="unknown day-2 operation 'move'"):
        day2_target_problems("gpu-1", "move", GROUPS)


def test_earlier_node_takes_the_registered_values():
    node = {"metadata": {"name": "gpu-1"}, "status": {"nodeInfo": {"machineID": "aaa"}}}
    decision = day2_earlier_node(node, "replace", "gpu-1", "aaa\n", 1, 0)
    assert decision["problems"] == [] and not decision["forget_node"]
    with pytest.raises(AnsibleFilterError, match="expected the host's Node object or none"):
        day2_earlier_node(["gpu-1"], "replace", "gpu-1", "aaa", True, False)


def test_node_changes_needs_the_plan():
    with pytest.raises(AnsibleFilterError, match="expected the plan's capacity"):
        day2_node_changes(None, "gpu-1", {})
    assert day2_node_changes({"nodes": {}}, "gpu-1", None) == []
