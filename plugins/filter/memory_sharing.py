# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_memory_sharing role: labels, HAMi's values, gpushare's objects, the capacity check."""

from __future__ import annotations

import json

from ansible.module_utils.common.text.converters import to_text
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_helm import helm_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import values_diff
from ansible_collections.gpuops.cluster.plugins.plugin_utils.memory_sharing import (
    backends_in_use,
    capacity_differences,
    chart_source,
    gpushare_objects,
    hami_values,
    local_chart_problem,
    node_changes,
    object_keys,
)


def _plain(value):
    # Templated values carry Ansible's tagged types; the functions want plain ones.
    return json.loads(json.dumps(value, default=to_text))


def memory_sharing_backends(capacity):
    return backends_in_use(_plain(capacity))


def memory_sharing_node_changes(capacity, nodes, node_names=None):
    return node_changes(_plain(capacity), _plain(nodes), _plain(node_names or {}))


def memory_sharing_hami_values(
    capacity, node_names=None, runtime_class="nvidia", scheduler_name="hami-scheduler", user_values=None
):
    return hami_values(
        _plain(capacity), _plain(node_names or {}), runtime_class, scheduler_name, _plain(user_values or {})
    )


def memory_sharing_values_diff(current, desired):
    return values_diff(_plain(current or {}), _plain(desired or {}), header="hami values")


def memory_sharing_capacity_differences(capacity, nodes, node_names=None):
    return capacity_differences(_plain(capacity), _plain(nodes), _plain(node_names or {}))


def memory_sharing_gpushare_objects(documents, extender_node_selector=None):
    return gpushare_objects(_plain(documents), _plain(extender_node_selector or {}))


def memory_sharing_object_keys(objects):
    return object_keys(_plain(objects))


def memory_sharing_chart_source(chart_ref, repo_url=""):
    return chart_source(chart_ref, repo_url)


def memory_sharing_chart_problem(path, version):
    return local_chart_problem(path, version)


def memory_sharing_helm_problem(result, binary):
    """RESULT: the registered result of `helm version --short`; the message names this role's variable."""
    result = _plain(result)
    stderr = result.get("stderr", "")
    if not stderr and not result.get("stdout") and result.get("rc", 1) != 0:
        # ansible.builtin.command could not start it: "Error executing command." and no output.
        stderr = f"not found or not executable: {result.get('msg', '')}".rstrip(": ")
    problem = helm_problem(result.get("rc", 1), result.get("stdout", ""), stderr, binary)
    return (problem or "").replace("gpu_operator_helm_binary", "gpu_memory_sharing_helm_binary")


class FilterModule:
    def filters(self):
        return {
            "memory_sharing_backends": memory_sharing_backends,
            "memory_sharing_node_changes": memory_sharing_node_changes,
            "memory_sharing_hami_values": memory_sharing_hami_values,
            "memory_sharing_values_diff": memory_sharing_values_diff,
            "memory_sharing_capacity_differences": memory_sharing_capacity_differences,
            "memory_sharing_gpushare_objects": memory_sharing_gpushare_objects,
            "memory_sharing_object_keys": memory_sharing_object_keys,
            "memory_sharing_chart_source": memory_sharing_chart_source,
            "memory_sharing_chart_problem": memory_sharing_chart_problem,
            "memory_sharing_helm_problem": memory_sharing_helm_problem,
        }
