# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter of the rke2 role for the Kubernetes feature gates it passes to RKE2's components."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_feature_gates import settings


def rke2_feature_gate_settings(gates, role):
    """The config.yaml.d settings passing GATES ({component: {gate: bool}}) to the components a ROLE host runs."""
    return settings(plain(gates or {}), str(role))


class FilterModule:
    """Kubernetes feature gates of the rke2 role."""

    def filters(self):
        return {"rke2_feature_gate_settings": rke2_feature_gate_settings}
