# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Typos in an inventory that Ansible accepts without a word: unknown variables and misnamed groups.

Ansible ignores a variable nobody reads and a group nobody targets, so `gpuops_timeslicing`
or a group `rke2_server` would silently leave a node unshared or outside the cluster. These
checks turn them into warnings with "did you mean", before any host is touched.
"""

from __future__ import annotations

import difflib

from ansible_collections.gpuops.cluster.plugins.module_utils._plan.errors import hosts_text

# The groups of the inventory contract (README, docs/plan.md).
CONTRACT_GROUPS = ("gpu_nodes", "rke2_servers", "rke2_agents")

# Cluster-wide run settings read by the playbooks and roles, besides the GPU intent variables.
RUN_VARIABLES = (
    "gpuops_plan_dir",
    "gpuops_serial",
    "gpuops_max_fail_percentage",
    "gpuops_reboot",
    # The controller's kubeconfig for the Kubernetes roles (gpu_operator, gpu_sharing).
    "gpuops_kubeconfig",
    # Where the GPU Operator runs and the names of the ConfigMaps its operands read (plan and roles).
    "gpuops_operator_namespace",
    "gpuops_device_plugin_configmap",
    "gpuops_mig_configmap",
    # Set during a run, not by users: a host reboots at most once per run; the plan playbook's result.
    "gpuops_host_rebooted",
    "gpuops_plan",
)

_NAME_CUTOFF = 0.8
# Warnings are one line each: fewer hosts named than in errors.
_HOSTS_SHOWN = 5


def _closest(name, candidates):
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=_NAME_CUTOFF)
    return close[0] if close else None


def unknown_variable_warnings(names_by_host, known_by_prefix):
    """One warning per unknown variable under a prefix the collection owns, naming its hosts.

    NAMES_BY_HOST: {host: iterable of variable names defined for it}. KNOWN_BY_PREFIX:
    {prefix: known names with that prefix}, e.g. {"gpuops_": (...), "mig_": (...)}; the longest
    matching prefix decides. Private names (leading underscores) never match a prefix.
    """
    prefixes = sorted(known_by_prefix, key=len, reverse=True)
    every_known = {name for names in known_by_prefix.values() for name in names}
    unknown = {}
    for host, names in names_by_host.items():
        for name in names:
            prefix = next((p for p in prefixes if name.startswith(p)), None)
            if prefix is not None and name not in known_by_prefix[prefix]:
                unknown.setdefault(name, []).append(host)
    warnings = []
    for name in sorted(unknown):
        guess = _closest(name, every_known)
        hint = f"did you mean {guess}?" if guess else "see the README's inventory contract and the roles' docs"
        warnings.append(
            f"{name} (set for {hosts_text(unknown[name], _HOSTS_SHOWN)}) is not a variable of gpuops.cluster "
            f"and is ignored; {hint}"
        )
    return warnings


def group_warnings(group_names):
    """Warnings for inventory groups named almost like a group of the contract (rke2_server, gpu_node)."""
    present = set(group_names)
    warnings = []
    for group in sorted(present - set(CONTRACT_GROUPS)):
        meant = _closest(group, CONTRACT_GROUPS)
        if meant is None:
            continue
        where = "" if meant in present else f" (the inventory has no group {meant})"
        warnings.append(
            f"group {group} is not a group of gpuops.cluster, so its hosts are not treated as {meant}{where}; "
            f"did you mean {meant}?"
        )
    return warnings
