# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the dra_driver role: the release's state and values, the DRA nodes' labels, what is unpublished."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.dra_driver import (
    node_changes,
    release_state,
    release_values,
    unpublished,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import values_diff
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


def dra_driver_release_state(dra, requested="auto"):
    return release_state(plain(dra or {}), requested)


def dra_driver_values(dra, user_values=None):
    return release_values(plain(dra or {}), plain(user_values or {}))


def dra_driver_values_diff(current, desired):
    return values_diff(plain(current or {}), plain(desired or {}), header="dra-driver-nvidia-gpu values")


def dra_driver_node_changes(capacity, nodes, node_names=None):
    return node_changes(plain(capacity), plain(nodes), plain(node_names or {}))


def dra_driver_unpublished(dra, slices, node_names=None):
    return unpublished(plain(dra or {}), plain(slices or []), plain(node_names or {}))


class FilterModule:
    def filters(self):
        return {
            "dra_driver_release_state": dra_driver_release_state,
            "dra_driver_values": dra_driver_values,
            "dra_driver_values_diff": dra_driver_values_diff,
            "dra_driver_node_changes": dra_driver_node_changes,
            "dra_driver_unpublished": dra_driver_unpublished,
        }
