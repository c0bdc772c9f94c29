# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_operator role: the release's values, the chart on the controller, the operator's readiness."""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_chart import (
    chart_problem,
    chart_source,
    crds_to_apply,
    read_chart,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_helm import helm_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_status import not_ready_report, policy_ready
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import (
    referenced_configmaps,
    release_values,
    values_diff,
)


def _plain(value):
    # Templated values carry Ansible's tagged types; the Python code wants plain ones.
    return json.loads(json.dumps(value, default=to_text))


def gpu_operator_values(plan_values, image_registry="", user_values=None):
    """Helm values: the plan's, the role's own, the registry mirror, then the user's dict merged last."""
    try:
        return release_values(_plain(plan_values or {}), str(image_registry or ""), _plain(user_values or {}))
    except ValueError as error:
        raise AnsibleFilterError(str(error)) from error


def gpu_operator_values_diff(current, desired):
    """Unified diff of the installed release's values and this run's; empty when equal."""
    return values_diff(_plain(current or {}), _plain(desired or {}))


def gpu_operator_configmaps(documents, values):
    """The plan's ConfigMaps (cluster_plan's documents) that the values make the operator's pods mount."""
    return referenced_configmaps(_plain(documents or {}), _plain(values or {}))


def gpu_operator_chart_source(chart_ref, repo_url=""):
    """{kind: local|oci|repo, repo_name} of a chart reference, or {kind: None, problem}."""
    return chart_source(str(chart_ref or ""), str(repo_url or ""))


def gpu_operator_chart(path, version=None):
    """Name, version and CRDs of the chart file at PATH; with VERSION, a problem when it is another chart or version."""
    try:
        chart = read_chart(str(path))
    except (OSError, ValueError) as error:
        raise AnsibleFilterError(f"gpu_operator_chart_ref: cannot read the chart {path}: {error}") from error
    chart["problem"] = chart_problem(chart, str(path), version) if version is not None else None
    return chart


def gpu_operator_crds(chart, values):
    """The CRDs to apply for CHART installed with VALUES (NFD's only while nfd.enabled)."""
    return crds_to_apply(chart, _plain(values or {}))


def gpu_operator_ready(policies):
    """True when the first ClusterPolicy of a k8s_info result's resources reports ready for its generation."""
    policies = list(policies or [])
    return bool(policies) and policy_ready(_plain(policies[0]))


def gpu_operator_not_ready(
    policies, daemonsets=None, deployments=None, namespace="gpu-operator", name="cluster-policy"
):
    """Lines naming what is not ready: the ClusterPolicy's state and conditions, each DaemonSet and Deployment."""
    policies = list(policies or [])
    return not_ready_report(
        _plain(policies[0]) if policies else None,
        _plain(list(daemonsets or [])),
        _plain(list(deployments or [])),
        str(namespace),
        str(name),
    )


def gpu_operator_helm_problem(result, binary):
    """Why the helm binary cannot be used (from a registered `helm version` result), or ''."""
    stderr = result.get("stderr", "")
    if not stderr and not result.get("stdout") and result.get("rc", 1) != 0:
        # ansible.builtin.command could not start it: "Error executing command." and no output.
        stderr = f"not found or not executable: {result.get('msg', '')}".rstrip(": ")
    return helm_problem(result.get("rc", 1), result.get("stdout", ""), stderr, binary) or ""


class FilterModule:
    """Decisions of the gpu_operator role."""

    def filters(self):
        return {
            "gpu_operator_values": gpu_operator_values,
            "gpu_operator_values_diff": gpu_operator_values_diff,
            "gpu_operator_configmaps": gpu_operator_configmaps,
            "gpu_operator_chart_source": gpu_operator_chart_source,
            "gpu_operator_chart": gpu_operator_chart,
            "gpu_operator_crds": gpu_operator_crds,
            "gpu_operator_ready": gpu_operator_ready,
            "gpu_operator_not_ready": gpu_operator_not_ready,
            "gpu_operator_helm_problem": gpu_operator_helm_problem,
        }
