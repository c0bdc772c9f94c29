# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""beside_inventory is a filter of its own file: every role that keeps a file next to the inventory uses it."""

from ansible_collections.gpuops.cluster.plugins.filter.inventory_paths import FilterModule
from ansible_collections.gpuops.cluster.plugins.plugin_utils.inventory_paths import beside_inventory


def test_beside_inventory_is_registered():
    assert FilterModule().filters() == {"beside_inventory": beside_inventory}
