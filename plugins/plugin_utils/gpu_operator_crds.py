# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CRDs the gpu_operator role applies from the gpu-operator chart (read by plugin_utils.chart.read_chart).

Helm installs a chart's crds/ folder on the first install only and never upgrades or deletes it, so the
role applies these CRDs itself on every run (the GPU Operator documents upgrading them by hand).
"""

from __future__ import annotations

# The subchart the gpu-operator chart bundles; its value nfd.enabled turns it off.
NFD_SUBCHART = "node-feature-discovery"


def crds_to_apply(chart, values):
    """The CRDs a `helm install` with VALUES would create: the chart's, plus NFD's while nfd.enabled."""
    nfd = (values or {}).get("nfd") or {}
    nfd_enabled = nfd.get("enabled", True) if isinstance(nfd, dict) else True
    nfd_crds = (chart.get("subchart_crds") or {}).get(NFD_SUBCHART, [])
    return list(chart["crds"]) + (list(nfd_crds) if nfd_enabled else [])
