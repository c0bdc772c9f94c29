# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the day-2 playbooks (add_node, replace_node, change_node, remove_node): the node a run is for."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.plugin_utils import day2
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


def day2_target_problems(node, operation, groups):
    """Why the host of gpuops_node cannot go through OPERATION; [] when it can."""
    try:
        return day2.target_problems(str(operation), plain(node), plain(groups))
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


def day2_earlier_node(node_object, operation, host, machine_id, password_secret, host_has_password):
    """Whether the Node and the node-password Secret of the host's name belong to an earlier host."""
    if node_object is not None and not isinstance(node_object, dict):
        raise AnsibleFilterError(f"expected the host's Node object or none, got {node_object!r}")
    return day2.earlier_node(
        str(operation),
        str(host),
        plain(node_object),
        str(machine_id or ""),
        bool(password_secret),
        bool(host_has_password),
    )


def day2_node_changes(capacity, host, node_object, mig_change="", node_name=None):
    """What change_node changes on the host, one line each."""
    if not isinstance(capacity, dict):
        raise AnsibleFilterError(f"expected the plan's capacity, got {capacity!r}")
    return day2.node_changes(plain(capacity), str(host), plain(node_object), str(mig_change or ""), node_name)


class FilterModule:
    """Decisions of the day-2 playbooks."""

    def filters(self):
        return {
            "day2_target_problems": day2_target_problems,
            "day2_earlier_node": day2_earlier_node,
            "day2_node_changes": day2_node_changes,
            "rke2_node_password_secret": day2.password_secret_name,
        }
