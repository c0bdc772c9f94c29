# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unknown variables and misnamed groups: warned with "did you mean", never silently ignored."""

from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.inventory import (
    group_warnings,
    unknown_variable_warnings,
)

KNOWN = {
    "gpuops_": ("gpuops_time_slicing", "gpuops_mig_strategy", "gpuops_gpu_count"),
    "nvidia_driver_": ("nvidia_driver_branch", "nvidia_driver_reboot"),
    "nvidia_container_toolkit_": ("nvidia_container_toolkit_runtime",),
}


def test_a_misspelt_variable_is_named_with_its_hosts_and_the_likely_name():
    warnings = unknown_variable_warnings({"n1": ["gpuops_timeslicing"], "n2": ["gpuops_timeslicing"]}, KNOWN)
    assert warnings == [
        "gpuops_timeslicing (set for n1, n2) is not a variable of gpuops.cluster and is ignored; "
        "did you mean gpuops_time_slicing?"
    ]


def test_known_foreign_and_private_names_pass_and_the_longest_prefix_decides():
    names = {
        "n1": [
            "gpuops_gpu_count",
            "ansible_host",
            "__nvidia_driver_private",
            "nvidia_container_toolkit_runtime",
            "my_gpuops_thing",
        ]
    }
    assert unknown_variable_warnings(names, KNOWN) == []
    # nvidia_container_toolkit_ is not under nvidia_driver_: a toolkit typo is matched against every known name.
    (warning,) = unknown_variable_warnings({"n1": ["nvidia_container_toolkit_runtim"]}, KNOWN)
    assert warning.endswith("did you mean nvidia_container_toolkit_runtime?")


def test_a_name_close_to_nothing_points_at_the_docs_and_many_hosts_are_counted():
    hosts = {f"n{i}": ["gpuops_colour"] for i in range(7)}
    (warning,) = unknown_variable_warnings(hosts, KNOWN)
    assert warning == (
        "gpuops_colour (set for n0, n1, n2, n3, n4 and 2 more hosts) is not a variable of gpuops.cluster and is "
        "ignored; see the README's inventory contract and the roles' docs"
    )


def test_groups_named_almost_like_the_contract_warn():
    groups = ["all", "ungrouped", "rke2_server", "rke2_agents", "gpu_node", "gpu_l4", "gpu_a100_80gb", "gpu_nodes"]
    assert group_warnings(groups) == [
        "group gpu_node is not a group of gpuops.cluster, so its hosts are not treated as gpu_nodes; "
        "did you mean gpu_nodes?",
        "group rke2_server is not a group of gpuops.cluster, so its hosts are not treated as rke2_servers "
        "(the inventory has no group rke2_servers); did you mean rke2_servers?",
    ]


def test_the_example_groups_raise_no_warning():
    assert group_warnings(["all", "ungrouped", "rke2_servers", "rke2_agents", "gpu_nodes", "gpu_h100", "gpu_l4"]) == []
