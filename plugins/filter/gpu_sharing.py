# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_sharing role: what to send to the cluster, read from the plan and the Node objects."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_sharing import (
    capacity_differences,
    configmap_data,
    describe_differences,
    mig_failure_messages,
    mig_states,
    node_changes,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


def gpu_sharing_node_changes(capacity, nodes):
    return node_changes(plain(capacity), plain(nodes))


def gpu_sharing_configmap_data(planned_data, existing_data, nodes, plan_hosts):
    return configmap_data(plain(planned_data), plain(existing_data), plain(nodes), plain(plan_hosts))


def gpu_sharing_mig_states(capacity, nodes):
    return mig_states(plain(capacity), plain(nodes))


def gpu_sharing_capacity_differences(capacity, nodes):
    return describe_differences(capacity_differences(plain(capacity), plain(nodes)))


def gpu_sharing_mig_failures(capacity, failed, log_results, namespace):
    """LOG_RESULTS: the results of a kubernetes.core.k8s_log loop whose items carry the node name in item.item;
    a result without log_lines is a log that could not be read, and its msg says why."""
    logs = {
        result["item"]["item"]: (result["log_lines"] or [] if "log_lines" in result else str(result.get("msg")))
        for result in plain(log_results or [])
    }
    return mig_failure_messages(plain(capacity), plain(failed), logs, namespace)


class FilterModule:
    def filters(self):
        return {
            "gpu_sharing_node_changes": gpu_sharing_node_changes,
            "gpu_sharing_configmap_data": gpu_sharing_configmap_data,
            "gpu_sharing_mig_states": gpu_sharing_mig_states,
            "gpu_sharing_capacity_differences": gpu_sharing_capacity_differences,
            "gpu_sharing_mig_failures": gpu_sharing_mig_failures,
        }
