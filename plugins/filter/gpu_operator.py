# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_operator role: the release's values, the chart's CRDs, the operator's readiness.

The chart reference, the chart file and the helm binary are checked by the generic filters of filter/helm.py.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.failure import fails_the_task
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_crds import crds_to_apply
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_status import not_ready_report, policy_ready
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import (
    referenced_configmaps,
    release_values,
    values_diff,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


@fails_the_task
def gpu_operator_values(plan_values, image_registry="", user_values=None):
    """Helm values: the plan's, the role's own, the registry mirror, then the user's dict merged last."""
    return release_values(plain(plan_values or {}), str(image_registry or ""), plain(user_values or {}))


def gpu_operator_values_diff(current, desired):
    """Unified diff of the installed release's values and this run's; empty when equal."""
    return values_diff(plain(current or {}), plain(desired or {}))


def gpu_operator_configmaps(documents, values):
    """The plan's ConfigMaps (cluster_plan's documents) that the values make the operator's pods mount."""
    return referenced_configmaps(plain(documents or {}), plain(values or {}))


def gpu_operator_crds(chart, values):
    """The CRDs to apply for CHART installed with VALUES (NFD's only while nfd.enabled)."""
    return crds_to_apply(chart, plain(values or {}))


def gpu_operator_ready(policies):
    """True when the first ClusterPolicy of a k8s_info result's resources reports ready for its generation."""
    policies = list(policies or [])
    return bool(policies) and policy_ready(plain(policies[0]))


def gpu_operator_not_ready(
    policies, daemonsets=None, deployments=None, namespace="gpu-operator", name="cluster-policy"
):
    """Lines naming what is not ready: the ClusterPolicy's state and conditions, each DaemonSet and Deployment."""
    policies = list(policies or [])
    return not_ready_report(
        plain(policies[0]) if policies else None,
        plain(list(daemonsets or [])),
        plain(list(deployments or [])),
        str(namespace),
        str(name),
    )


class FilterModule:
    """Decisions of the gpu_operator role."""

    def filters(self):
        return {
            "gpu_operator_values": gpu_operator_values,
            "gpu_operator_values_diff": gpu_operator_values_diff,
            "gpu_operator_configmaps": gpu_operator_configmaps,
            "gpu_operator_crds": gpu_operator_crds,
            "gpu_operator_ready": gpu_operator_ready,
            "gpu_operator_not_ready": gpu_operator_not_ready,
        }
