# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CRDs the gpu_operator role applies from the gpu-operator chart (read by plugin_utils.chart.read_chart).

Helm installs a chart's crds/ folder on the first install only and never upgrades or deletes it, so the
role applies these CRDs itself where they differ from the cluster's (the GPU Operator documents upgrading them by
hand).
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain

# The subchart the gpu-operator chart bundles; its value nfd.enabled turns it off.
NFD_SUBCHART = "node-feature-discovery"
# The sha256 of the definition the role applied, on each CRD: a live CRD holds every field of a chart's new
# definition that only drops a field, so the comparison of fields (k8s_to_apply) alone would keep the old one.
DEFINITION_ANNOTATION = "gpuops.cluster/definition-sha256"


def _with_definition_sha256(crd):
    marked = plain(crd)
    digest = hashlib.sha256(json.dumps(marked, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    marked.setdefault("metadata", {}).setdefault("annotations", {})[DEFINITION_ANNOTATION] = digest
    return marked


def crds_to_apply(chart, values):
    """The CRDs a `helm install` with VALUES would create: the chart's, plus NFD's while nfd.enabled; each marked
    with the sha256 of its definition."""
    nfd = (values or {}).get("nfd") or {}
    nfd_enabled = nfd.get("enabled", True) if isinstance(nfd, dict) else True
    nfd_crds = (chart.get("subchart_crds") or {}).get(NFD_SUBCHART, [])
    return [_with_definition_sha256(crd) for crd in list(chart["crds"]) + (list(nfd_crds) if nfd_enabled else [])]
