# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters naming what the collection keeps on the controller next to the inventory (kubeconfig, plan, reports)."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.inventory_paths import beside_inventory


class FilterModule:
    """Paths next to the inventory, for every role and playbook."""

    def filters(self):
        return {
            "beside_inventory": beside_inventory,
        }
