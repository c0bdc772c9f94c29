# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Inventories Ansible reads without a word but that mean another cluster: the plan's warnings."""

from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.inventory import (
    group_overlap_warnings,
    missing_group_message,
    null_sharing_warnings,
    outside_rke2_warnings,
    shadowed_vars_file_warnings,
)

A100 = {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_mig_config": "all-1g.10gb"}
H100 = {"gpuops_gpu_product": "NVIDIA H100 80GB HBM3", "gpuops_mig_config": "all-balanced"}


def test_two_gpu_model_groups_of_one_host_are_named_with_what_wins():
    warnings = group_overlap_warnings(
        {"h1": ["gpu_nodes", "gpu_a100", "gpu_h100"], "h2": ["gpu_nodes", "gpu_a100", "gpu_h100"]},
        {"gpu_a100": A100 | {"gpuops_time_slicing": {"replicas": 2}}, "gpu_h100": H100, "gpu_nodes": {}},
        {"gpu_a100": {"gpu_nodes"}, "gpu_h100": {"gpu_nodes"}},
    )
    assert warnings == [
        "h1, h2 are in groups gpu_a100 and gpu_h100, which set gpuops_gpu_product differently "
        "('NVIDIA A100-SXM4-80GB' and 'NVIDIA H100 80GB HBM3'): Ansible merges both groups into the host, so it is "
        "planned with gpuops_gpu_product from gpu_h100 ('NVIDIA H100 80GB HBM3'); keep each GPU node in one "
        "GPU-model group, or set the variable in the host's host_vars",
        "h1, h2 are in groups gpu_a100 and gpu_h100, which both set GPU sharing (gpu_a100: gpuops_mig_config, "
        "gpuops_time_slicing; gpu_h100: gpuops_mig_config): Ansible merges them variable by variable, so it is "
        "planned with gpuops_mig_config from gpu_h100 and gpuops_time_slicing from gpu_a100; keep each GPU node in "
        "one GPU-model group, or set these variables in the host's host_vars",
    ]


def test_one_spelling_of_one_product_and_equal_sharing_are_no_conflict():
    same = {"gpuops_gpu_product": "NVIDIA-H100-80GB-HBM3", "gpuops_mig_config": "all-balanced"}
    assert group_overlap_warnings({"h1": ["gpu_h100", "team_ml"]}, {"gpu_h100": H100, "team_ml": same}, {}) == []


def test_a_parent_and_its_child_group_are_layered_on_purpose():
    warnings = group_overlap_warnings(
        {"h1": ["gpu_nodes", "gpu_h100"]},
        {"gpu_nodes": {"gpuops_time_slicing": {"replicas": 2}}, "gpu_h100": H100},
        {"gpu_h100": {"gpu_nodes"}},
    )
    assert warnings == []


def test_what_the_host_sets_itself_settles_the_conflict():
    host_groups = {"h1": ["gpu_a100", "gpu_h100"]}
    group_vars = {"gpu_a100": A100, "gpu_h100": H100}
    own = {"h1": {"gpuops_gpu_product", "gpuops_mig_config"}}
    assert group_overlap_warnings(host_groups, group_vars, {}, own) == []


def test_a_null_sharing_variable_names_hosts_meaning_and_fix():
    warnings = null_sharing_warnings({"l4-1": ["gpuops_time_slicing"], "l4-2": ["gpuops_time_slicing"]})
    assert warnings == [
        "gpuops_time_slicing is set with no value (null) for l4-1, l4-2: the plan reads it as no time-slicing, so "
        "nothing is time-sliced on those nodes; give it a value such as {replicas: 4}, or remove the key (no value "
        "of gpuops_time_slicing means no time-slicing: null is only for switching off what a parent group sets)"
    ]


def test_a_null_that_switches_off_a_groups_value_is_not_warned_about():
    nulls = {"h1": ["gpuops_time_slicing"], "h2": ["gpuops_mps"]}
    host_groups = {"h1": ["gpu_nodes", "gpu_h100"], "h2": ["gpu_l4"]}
    group_vars = {"gpu_nodes": {"gpuops_time_slicing": {"replicas": 2}}, "gpu_h100": {"gpuops_time_slicing": None}}
    (warning,) = null_sharing_warnings(nulls, host_groups, group_vars)
    assert warning.startswith("gpuops_mps is set with no value (null) for h2: the plan reads it as no MPS")


def test_gpu_nodes_outside_the_rke2_groups_are_named():
    groups = {"gpu_nodes": ["a", "b", "c"], "rke2_servers": ["s"], "rke2_agents": ["a"]}
    assert outside_rke2_warnings(groups) == [
        "b, c are in gpu_nodes but in neither rke2_servers nor rke2_agents: playbooks/cluster.yml never installs "
        "RKE2 on them, so they never become Kubernetes nodes, and gpu_sharing fails on them after the GPU hosts are "
        "prepared; add them to rke2_agents (or rke2_servers), or remove them from gpu_nodes"
    ]
    (one,) = outside_rke2_warnings({"gpu_nodes": ["b"]})
    assert one.startswith("b is in gpu_nodes but in neither rke2_servers nor rke2_agents")
    assert "add it to rke2_agents" in one
    assert outside_rke2_warnings({"gpu_nodes": ["a"], "rke2_agents": ["a"]}) == []


def test_a_missing_group_names_the_nearest_groups():
    groups = ["all", "ungrouped", "gpu_node", "rke2_servers", "rke2_agents", "gpu_l4"]
    assert missing_group_message("gpu_nodes", groups) == (
        "group 'gpu_nodes' is not in the inventory; did you mean gpu_node? Rename it gpu_nodes: the plan and the "
        "playbooks read the GPU nodes from gpu_nodes"
    )
    assert missing_group_message("gpu_nodes", ["all", "ungrouped", "servers"]) == (
        "group 'gpu_nodes' is not in the inventory; put the GPU nodes in a group gpu_nodes (the README's "
        "inventory contract)"
    )


def test_a_vars_file_ansible_does_not_read_is_named(tmp_path):
    group_vars = tmp_path / "group_vars"
    (group_vars / "all").mkdir(parents=True)
    (group_vars / "all" / "vault.yml").write_text("---\n")
    (group_vars / "all.yml").write_text("---\n")
    (group_vars / "gpu_l4.yml").write_text("---\n")
    (group_vars / "gpu_l4.yaml").write_text("---\n")
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "host_vars" / "n1.yml").write_text("---\n")
    assert shadowed_vars_file_warnings([str(tmp_path / "hosts.yml"), "n1,n2"]) == [
        f"{group_vars / 'all.yml'} is not read: Ansible reads the folder {group_vars / 'all'} in its place (a folder "
        "wins over a file of the same name); move all.yml into that folder (e.g. as main.yml)",
        f"{group_vars / 'gpu_l4.yaml'} is not read: Ansible reads {group_vars / 'gpu_l4.yml'} in its place (of "
        "gpu_l4, gpu_l4.yml, gpu_l4.yaml, gpu_l4.json only the first found is read); merge the two files",
    ]
