# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for every role that installs a Helm chart: the helm binary, the chart reference, the chart file.

Each takes the role's variable name, so that its message says what to set in that role.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils import chart as helm_chart
from ansible_collections.gpuops.cluster.plugins.plugin_utils import helm
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain


def helm_problem(result, binary, variable):
    """Why the helm BINARY cannot be used (from the registered result of `helm version --short`), or ''."""
    result = plain(result)
    stderr = result.get("stderr", "")
    if not stderr and not result.get("stdout") and result.get("rc", 1) != 0:
        # ansible.builtin.command could not start it: "Error executing command." and no output.
        stderr = f"not found or not executable: {result.get('msg', '')}".rstrip(": ")
    return helm.helm_problem(result.get("rc", 1), result.get("stdout", ""), stderr, str(binary), str(variable)) or ""


def chart_source(chart_ref, repo_url, variable, chart, repo):
    """{kind: local|oci|repo, repo_name} of a chart reference, or {kind: None, problem}."""
    return helm_chart.chart_source(str(chart_ref or ""), str(repo_url or ""), str(variable), str(chart), str(repo))


def chart_file(path, version, variable, chart):
    """Name, version and CRDs of the chart file at PATH, with a problem when it is not CHART at VERSION."""
    return helm_chart.chart_file(str(path), str(version), str(variable), str(chart))


class FilterModule:
    """Helm and chart checks shared by the roles that install a chart."""

    def filters(self):
        return {
            "helm_problem": helm_problem,
            "chart_source": chart_source,
            "chart_file": chart_file,
        }
