# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_memory_sharing role: each backend's state, labels, HAMi's values, gpushare's objects, the
capacity check."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import hami
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import values_diff
from ansible_collections.gpuops.cluster.plugins.plugin_utils.memory_sharing import (
    backend_states,
    capacity_differences,
    gpushare_objects,
    hami_values,
    node_changes,
    object_keys,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


def memory_sharing_backend_states(capacity, requested_states=None):
    return backend_states(plain(capacity), plain(requested_states or {}))


def memory_sharing_node_changes(capacity, nodes, node_names=None):
    return node_changes(plain(capacity), plain(nodes), plain(node_names or {}))


def memory_sharing_hami_values(
    capacity, node_names=None, runtime_class="nvidia", scheduler_name=hami.SCHEDULER_NAME, user_values=None
):
    return hami_values(
        plain(capacity), plain(node_names or {}), runtime_class, scheduler_name, plain(user_values or {})
    )


def memory_sharing_values_diff(current, desired):
    return values_diff(plain(current or {}), plain(desired or {}), header="hami values")


def memory_sharing_capacity_differences(capacity, nodes, node_names=None):
    return capacity_differences(plain(capacity), plain(nodes), plain(node_names or {}))


def memory_sharing_gpushare_objects(documents, extender_node_selector=None):
    return gpushare_objects(plain(documents), plain(extender_node_selector or {}))


def memory_sharing_object_keys(objects):
    return object_keys(plain(objects))


class FilterModule:
    def filters(self):
        return {
            "memory_sharing_backend_states": memory_sharing_backend_states,
            "memory_sharing_node_changes": memory_sharing_node_changes,
            "memory_sharing_hami_values": memory_sharing_hami_values,
            "memory_sharing_values_diff": memory_sharing_values_diff,
            "memory_sharing_capacity_differences": memory_sharing_capacity_differences,
            "memory_sharing_gpushare_objects": memory_sharing_gpushare_objects,
            "memory_sharing_object_keys": memory_sharing_object_keys,
        }
