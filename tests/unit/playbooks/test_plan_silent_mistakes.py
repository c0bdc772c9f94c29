# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Inventories Ansible reads without a word but that plan another cluster than the one meant: the plan says so."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest


@pytest.fixture
def inventory(example_inventory):
    return example_inventory


@pytest.fixture
def plan(run_playbook, tmp_path):
    def run(inventory, *extra):
        return run_playbook("plan.yml", inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}", *extra)

    return run


def _replace(path, old, new):
    """Edit the copied example: OLD must be there, so a change of the example cannot turn the test into a no-op."""
    text = path.read_text()
    assert old in text, f"{path} no longer holds {old!r}"
    path.write_text(text.replace(old, new))


def _output(ran):
    # Warnings go to stderr, wrapped: compared as one line.
    return " ".join((ran.stdout + ran.stderr).split())


def _ansible_vault():
    beside = pathlib.Path(sys.executable).parent / "ansible-vault"
    return str(beside) if beside.exists() else shutil.which("ansible-vault")


def _capacity(tmp_path):
    return json.loads((tmp_path / "plan" / "capacity.json").read_text())


def test_a_gpu_node_in_two_gpu_model_groups_is_warned_about(plan, inventory, tmp_path):
    _replace(
        inventory / "hosts.yml",
        "            gpu-a100-2:\n              ansible_host: 192.0.2.22\n",
        "            gpu-a100-2:\n              ansible_host: 192.0.2.22\n            gpu-h100-1:\n",
    )
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = _output(ran)
    assert (
        "gpu-h100-1 is in groups gpu_a100_80gb and gpu_h100, which set gpuops_gpu_product differently "
        "('NVIDIA A100-SXM4-80GB' and 'NVIDIA H100 80GB HBM3'): Ansible merges both groups into the host, so it is "
        "planned with gpuops_gpu_product from gpu_h100" in output
    ), output
    assert (
        "gpu-h100-1 is in groups gpu_a100_80gb and gpu_h100, which both set GPU sharing (gpu_a100_80gb: "
        "gpuops_mig_config, gpuops_time_slicing; gpu_h100: gpuops_mig_config): Ansible merges them variable by "
        "variable, so it is planned with gpuops_mig_config from gpu_h100 and gpuops_time_slicing from gpu_a100_80gb"
        in output
    ), output
    assert "keep each GPU node in one GPU-model group" in output
    # The other nodes are in one model group each: nothing said about them.
    assert "gpu-a100-1 is in groups" not in output


def test_groups_that_nest_are_not_taken_for_two_gpu_models(plan, inventory):
    # A parent group's value and a child group's are meant to be layered: the child wins by design.
    (inventory / "group_vars" / "gpu_nodes.yml").write_text(
        '---\nnvidia_driver_branch: "580"\ngpuops_time_slicing:\n  replicas: 2\n'
    )
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert " is in groups " not in _output(ran)


def test_an_empty_time_slicing_is_warned_about(plan, inventory, tmp_path):
    (inventory / "group_vars" / "gpu_l4.yml").write_text(
        "---\ngpuops_gpu_product: NVIDIA L4\ngpuops_gpu_count: 4\ngpuops_time_slicing:\n"
    )
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _capacity(tmp_path)["nodes"]["gpu-l4-1"]["resources"] == {"nvidia.com/gpu": 4}
    output = _output(ran)
    assert (
        "gpuops_time_slicing is set with no value (null) for gpu-l4-1, gpu-l4-2: the plan reads it as no "
        "time-slicing, so nothing is time-sliced on those nodes" in output
    ), output
    assert "give it a value such as {replicas: 4}, or remove the key" in output


def test_null_that_switches_off_a_parent_groups_sharing_is_not_warned_about(plan, inventory):
    (inventory / "group_vars" / "gpu_nodes.yml").write_text(
        '---\nnvidia_driver_branch: "580"\ngpuops_time_slicing:\n  replicas: 2\n'
    )
    gpu_h100 = inventory / "group_vars" / "gpu_h100.yml"
    gpu_h100.write_text(gpu_h100.read_text() + "gpuops_time_slicing:\n")
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "with no value (null)" not in _output(ran)


def test_gpu_nodes_outside_the_rke2_groups_are_warned_about(plan, inventory):
    _replace(
        inventory / "hosts.yml",
        "    rke2_agents:\n      children:\n        gpu_nodes:\n",
        "    rke2_agents:\n      children:\n        gpu_a100_80gb:\n        gpu_h100:\n",
    )
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = _output(ran)
    assert (
        "gpu-l4-1, gpu-l4-2 are in gpu_nodes but in neither rke2_servers nor rke2_agents: playbooks/cluster.yml "
        "never installs RKE2 on them, so they never become Kubernetes nodes" in output
    ), output
    assert "add them to rke2_agents (or rke2_servers)" in output
    assert "gpu-a100-1" not in output.split("are in gpu_nodes but", 1)[0].rsplit("WARNING", 1)[-1]


def test_an_rke2_version_rke2_would_refuse_fails_the_plan_on_every_rke2_host(plan, inventory):
    (inventory / "host_vars").mkdir()
    (inventory / "host_vars" / "cp-1.yml").write_text("rke2_version: 1.33.5-rke2r1\n")
    with (inventory / "group_vars" / "gpu_l4.yml").open("a") as group_vars:
        group_vars.write("rke2_version: v1.33.5-rke2r1\n")
    ran = plan(inventory)
    assert ran.returncode != 0
    for line in (
        "cp-1: rke2_version: '1.33.5-rke2r1' is not an RKE2 release version; valid: vX.Y.Z+rke2rN as RKE2 tags its "
        "releases, e.g. v1.36.3+rke2r1",
        "gpu-l4-1, gpu-l4-2: rke2_version: 'v1.33.5-rke2r1' is not an RKE2 release version",
    ):
        assert line in ran.stdout, ran.stdout
    assert "nothing was written" in ran.stdout


def test_an_rke2_value_of_a_server_that_needs_its_facts_is_left_to_the_role(plan, inventory):
    (inventory / "host_vars").mkdir()
    (inventory / "host_vars" / "cp-1.yml").write_text('rke2_node_ip: "{{ ansible_default_ipv4.address }}"\n')
    ran = plan(inventory)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_misnamed_gpu_nodes_group_fails_with_did_you_mean(plan, inventory):
    _replace(inventory / "hosts.yml", "gpu_nodes:", "gpu_node:")
    ran = plan(inventory)
    assert ran.returncode != 0
    expected = "group 'gpu_nodes' is not in the inventory; did you mean gpu_node? Rename it gpu_nodes"
    assert expected in _output(ran), ran.stdout


def test_a_product_typo_that_fails_the_plan_still_gets_did_you_mean(plan, inventory):
    _replace(inventory / "group_vars" / "gpu_h100.yml", "NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB")
    ran = plan(inventory)
    assert ran.returncode != 0
    assert "gpu-h100-1: gpuops_mig_config: NVIDIA H100 SXM5 80GB is not in the GPU catalog" in ran.stdout
    assert "did you mean NVIDIA H100 80GB HBM3" in ran.stdout.split("gpu-h100-1: gpuops_mig_config:", 1)[1]


def test_a_token_in_the_vault_file_the_docs_name_keeps_the_cluster_wide_settings(plan, inventory, tmp_path):
    """docs/roles/rke2.md: `ansible-vault encrypt_string --name rke2_token ... >> group_vars/all/vault.yml`."""
    password = tmp_path / "vault-password"
    password.write_text("not-a-secret\n")
    encrypted = subprocess.run(
        [
            _ansible_vault(),
            "encrypt_string",
            "--vault-password-file",
            str(password),
            "--name",
            "rke2_token",
            "0123456789abcdef",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    vault = inventory / "group_vars" / "all" / "vault.yml"
    vault.parent.mkdir(exist_ok=True)
    with vault.open("a") as stream:
        stream.write(encrypted)
    ran = plan(inventory, "--vault-password-file", str(password))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "MIG strategy mixed" in ran.stdout
    assert _capacity(tmp_path)["nodes"]["gpu-a100-1"]["resources"] == {
        "nvidia.com/mig-1g.10gb": 56,
        "nvidia.com/mig-3g.40gb": 8,
    }


def test_a_vars_file_beside_a_vars_folder_of_the_same_name_is_warned_about(plan, inventory):
    group_vars = inventory / "group_vars"
    (group_vars / "gpu_l4").mkdir()
    (group_vars / "gpu_l4" / "extra.yml").write_text("---\nnvidia_driver_branch: '580'\n")
    ran = plan(inventory)
    output = _output(ran)
    assert (
        f"{group_vars / 'gpu_l4.yml'} is not read: Ansible reads the folder {group_vars / 'gpu_l4'} in its place "
        "(a folder wins over a file of the same name); move gpu_l4.yml into that folder (e.g. as main.yml)" in output
    ), output
