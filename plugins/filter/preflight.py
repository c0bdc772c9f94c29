# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the preflight role (the host's GPUs against the inventory, the model group, the OS) and of
playbooks/upgrade.yml (what an upgrade changes on a node)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._preflight.gpus import check_gpus, model_group, os_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils._preflight.upgrade import (
    installed_package_version,
    upgrade_changes,
)


def preflight_gpu_check(gpu_info, host, expected_product, expected_count, pci_gpus=None, catalog_extra=None):
    """The host's GPUs (nvidia_gpu_info facts, else the PCI bus) compared with the inventory."""
    if not isinstance(gpu_info, dict):
        raise AnsibleFilterError(f"expected the nvidia_gpu_info result or facts, got {gpu_info!r}")
    if pci_gpus is not None and not isinstance(pci_gpus, list):
        raise AnsibleFilterError(f"expected the PCI GPUs as [{{address, device_id}}, ...], got {pci_gpus!r}")
    return check_gpus(host, expected_product, expected_count, gpu_info, pci_gpus, catalog_extra)


def gpu_model_group(product_name):
    """The inventory group of a GPU model."""
    return model_group(product_name)


def preflight_os_problem(facts, host, supported):
    """Why the host's OS is not supported; empty when it is."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError(f"expected the host's ansible_facts, got {facts!r}")
    return os_problem(
        host,
        facts.get("distribution", "unknown"),
        facts.get("distribution_version", ""),
        facts.get("distribution_major_version", ""),
        facts.get("os_family", "unknown"),
        supported,
    )


def upgrade_node_changes(components):
    """What an upgrade run changes on a node, one line each; empty: the node is not drained."""
    if not isinstance(components, dict):
        raise AnsibleFilterError(f"expected {{driver: ..., toolkit: ..., rke2: ...}}, got {components!r}")
    return upgrade_changes(components)


def installed_toolkit_version(packages):
    """VERSION-RELEASE of the installed NVIDIA Container Toolkit, from ansible_facts.packages ("" when absent)."""
    return installed_package_version(packages)


class FilterModule:
    """Decisions of the preflight role."""

    def filters(self):
        return {
            "preflight_gpu_check": preflight_gpu_check,
            "gpu_model_group": gpu_model_group,
            "preflight_os_problem": preflight_os_problem,
            "upgrade_node_changes": upgrade_node_changes,
            "installed_toolkit_version": installed_toolkit_version,
        }
