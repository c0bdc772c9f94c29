# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml end to end: files written (or not), idempotence, check mode, errors."""

import json
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"
PLAN_FILES = {
    "capacity.json",
    "device-plugin-configmap.yaml",
    "mig-parted-config.yaml",
    "mig-parted-configmap.yaml",
    "gpu-operator-values.yaml",
    "dra.json",
    "plan.txt",
}


@pytest.fixture
def run_plan(run_playbook):
    def run(inventory, plan_dir, *extra):
        return run_playbook("plan.yml", inventory, "-e", f"gpuops_plan_dir={plan_dir}", *extra)

    return run


def test_example_inventory_writes_the_plan_then_changes_nothing(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    first = run_plan(EXAMPLE, plan_dir)
    assert first.returncode == 0, first.stdout + first.stderr
    assert {path.name for path in plan_dir.iterdir()} == PLAN_FILES
    capacity = json.loads((plan_dir / "capacity.json").read_text())
    assert capacity["nodes"]["gpu-a100-1"]["resources"] == {"nvidia.com/mig-1g.10gb": 56, "nvidia.com/mig-3g.40gb": 8}
    assert capacity["nodes"]["gpu-l4-1"]["resources"] == {"nvidia.com/gpu": 16}
    assert "cp-1" not in capacity["nodes"]
    assert "gpu-h100-1  NVIDIA H100 80GB HBM3" in first.stdout
    assert "changed=1" in first.stdout

    second = run_plan(EXAMPLE, plan_dir)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "changed=0" in second.stdout


def test_check_mode_writes_nothing_and_diff_shows_the_change(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    checked = run_plan(EXAMPLE, plan_dir, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "changed=1" in checked.stdout
    assert not plan_dir.exists()

    assert run_plan(EXAMPLE, plan_dir).returncode == 0
    values = plan_dir / "gpu-operator-values.yaml"
    values.write_text(values.read_text().replace("strategy: mixed", "strategy: single"))
    diffed = run_plan(EXAMPLE, plan_dir, "--check", "--diff")
    assert "-  strategy: single" in diffed.stdout and "+  strategy: mixed" in diffed.stdout
    assert "strategy: single" in values.read_text()


def test_broken_inventory_fails_listing_every_problem_and_writes_nothing(run_plan, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    (inventory / "group_vars" / "gpu_l4.yml").write_text(
        "gpuops_gpu_product: NVIDIA L4\ngpuops_gpu_count: 4\ngpuops_mig_config: all-1g.10gb\n"
        "gpuops_time_slicing:\n  replica: 4\n"
    )
    (inventory / "group_vars" / "gpu_h100.yml").write_text(
        "gpuops_gpu_product: NVIDIA H100 80GB HBM3\ngpuops_gpu_count: 0\ngpuops_mig_config: all-1g.5gb\n"
    )
    plan_dir = tmp_path / "plan"
    failed = run_plan(inventory, plan_dir)
    assert failed.returncode != 0
    assert not plan_dir.exists()
    output = failed.stdout
    assert "nothing was written" in output
    for line in (
        "gpu-l4-1, gpu-l4-2: gpuops_mig_config: NVIDIA L4 does not support MIG",
        "gpu-l4-1, gpu-l4-2: gpuops_time_slicing.replica: unknown key; did you mean 'replicas'?",
        "gpu-h100-1: gpuops_gpu_count: must be 1 or more GPUs per node, got 0",
        "gpu-h100-1: gpuops_mig_config: undefined MIG config 'all-1g.5gb'; valid for NVIDIA H100 80GB HBM3:",
    ):
        assert line in output, output


def test_dest_that_is_a_file_fails_before_writing(run_plan, tmp_path):
    dest = tmp_path / "plan"
    dest.write_text("not a directory\n")
    failed = run_plan(EXAMPLE, dest)
    assert failed.returncode != 0
    assert f"dest {dest} exists and is not a directory" in failed.stdout
    assert dest.read_text() == "not a directory\n"


def test_a_directory_in_place_of_a_plan_file_fails_before_writing(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    (plan_dir / "plan.txt").mkdir()
    failed = run_plan(EXAMPLE, plan_dir)
    assert failed.returncode != 0
    assert "plan.txt is a directory" in failed.stdout
    assert [path.name for path in plan_dir.iterdir()] == ["plan.txt"]


def test_cluster_wide_names_reach_every_plan_file(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    names = ["-e", "gpuops_operator_namespace=gpu-ops", "-e", "gpuops_device_plugin_configmap=dp.config"]
    result = run_plan(EXAMPLE, plan_dir, *names, "-e", "gpuops_mig_configmap={{ 'mig-' ~ 'layouts' }}")
    assert result.returncode == 0, result.stdout + result.stderr
    device_plugin = (plan_dir / "device-plugin-configmap.yaml").read_text()
    assert "name: dp.config\n  namespace: gpu-ops\n" in device_plugin
    assert "name: mig-layouts\n  namespace: gpu-ops\n" in (plan_dir / "mig-parted-configmap.yaml").read_text()
    # The example's MIG is applied by the mig role: the operator's mig-manager, which names the other, is off.
    assert "    name: dp.config\n" in (plan_dir / "gpu-operator-values.yaml").read_text()


def test_a_namespace_the_api_refuses_fails_naming_the_variable(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    result = run_plan(EXAMPLE, plan_dir, "-e", "gpuops_operator_namespace=GPU_Operator")
    assert result.returncode != 0
    assert "all: gpuops_operator_namespace: must be a DNS-1123 label" in result.stdout
    assert "got 'GPU_Operator'" in result.stdout
    assert not plan_dir.exists()


def test_variables_that_name_other_hosts_are_templated_as_a_task_would(run_plan, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    group_vars = inventory / "group_vars" / "gpu_l4.yml"
    count_of_cp_1 = "gpuops_gpu_count: \"{{ hostvars['cp-1']['l4_count'] }}\""
    group_vars.write_text(
        group_vars.read_text().replace("gpuops_gpu_count: 4", count_of_cp_1)
        + "rke2_api_endpoint: \"{{ hostvars[groups['rke2_servers'][0]]['ansible_host'] }}\"\n"
    )
    (inventory / "host_vars").mkdir()
    (inventory / "host_vars" / "cp-1.yml").write_text("l4_count: 2\n")
    plan_dir = tmp_path / "plan"
    result = run_plan(inventory, plan_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    capacity = json.loads((plan_dir / "capacity.json").read_text())
    assert capacity["nodes"]["gpu-l4-1"]["resources"] == {"nvidia.com/gpu": 8}

    (inventory / "host_vars" / "cp-1.yml").write_text("other: 1\n")
    failed = run_plan(inventory, tmp_path / "plan-2")
    assert failed.returncode != 0
    assert "gpu-l4-1, gpu-l4-2: gpuops_gpu_count: cannot be templated" in failed.stdout, failed.stdout
    assert "l4_count" in failed.stdout


def test_role_variables_are_templated_with_the_roles_defaults_beneath(run_plan, tmp_path):
    # As in a task of the rke2 role, where rke2_version is the role's default unless the inventory sets it.
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    all_vars = inventory / "group_vars" / "all" / "main.yml"
    text = "\n".join(line for line in all_vars.read_text().splitlines() if not line.startswith("rke2_version:"))
    all_vars.write_text(text + '\nrke2_airgap_dir: "/srv/rke2/{{ rke2_version }}"\n')
    result = run_plan(inventory, tmp_path / "plan")
    assert result.returncode == 0, result.stdout + result.stderr

    all_vars.write_text(text + '\nrke2_airgap_dir: "/srv/rke2/{{ rke2_release }}"\n')
    failed = run_plan(inventory, tmp_path / "plan-2")
    assert failed.returncode != 0
    assert "rke2_airgap_dir: cannot be templated" in failed.stdout, failed.stdout


def test_a_driver_that_cannot_drive_a_nodes_gpus_is_refused_before_any_host(run_plan, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    (inventory / "group_vars" / "gpu_nodes.yml").write_text("---\n")
    gpu_l4 = inventory / "group_vars" / "gpu_l4.yml"
    gpu_l4.write_text('gpuops_gpu_product: NVIDIA B200\ngpuops_gpu_count: 8\nnvidia_driver_branch: "535"\n')
    (inventory / "host_vars").mkdir()
    (inventory / "host_vars" / "gpu-h100-1.yml").write_text('nvidia_driver_branch: "999"\n')
    plan_dir = tmp_path / "plan"
    failed = run_plan(inventory, plan_dir)
    assert failed.returncode != 0
    assert not plan_dir.exists()
    assert (
        "gpu-l4-1, gpu-l4-2: nvidia_driver_branch: branch 535 cannot drive NVIDIA B200 (blackwell): its first branch "
        "is 570" in failed.stdout
    )
    assert "gpu-h100-1: nvidia_driver_branch: 999 is not a driver branch NVIDIA publishes" in failed.stdout
    assert "gpu-a100-1" not in failed.stdout.split("nothing was written", 1)[1]

    # No branch in the inventory: the nvidia_driver role's default applies, as on the host, and drives a B200.
    gpu_l4.write_text("gpuops_gpu_product: NVIDIA B200\ngpuops_gpu_count: 8\n")
    (inventory / "host_vars" / "gpu-h100-1.yml").unlink()
    assert 'nvidia_driver_branch: "580"' in (REPO / "roles" / "nvidia_driver" / "defaults" / "main.yml").read_text()
    planned = run_plan(inventory, tmp_path / "plan-2")
    assert planned.returncode == 0, planned.stdout[-3000:]


def test_a_later_plan_of_the_same_inputs_reuses_the_runs_plan(run_playbook, tmp_path):
    """The roles plan again (gpu_operator, gpu_sharing, ...): within one run the plan of plan.yml is reused when
    the group, its hosts, the settings and the folder are the same, and computed anew when one differs."""
    playbook = tmp_path / "plan_twice.yml"
    playbook.write_text(
        """---
- name: Plan
  ansible.builtin.import_playbook: gpuops.cluster.plan

- name: Plan again, as a role does
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The same inputs
      gpuops.cluster.cluster_plan:
        dest: "{{ gpuops_plan_dir }}"
      register: again

    - name: Another namespace
      gpuops.cluster.cluster_plan:
        dest: "{{ gpuops_plan_dir }}"
        namespace: gpu-elsewhere
      check_mode: true
      register: elsewhere

    - name: Check what each got
      ansible.builtin.assert:
        that:
          - again is not changed
          - again.reused
          - not elsewhere.reused
          - again.capacity == gpuops_plan.capacity
          - again.documents == gpuops_plan.documents
          - again.inputs.settings.namespace == 'gpu-operator'
          - elsewhere.inputs.settings.namespace == 'gpu-elsewhere'
          - elsewhere.documents != gpuops_plan.documents
""",
        encoding="utf-8",
    )
    run = run_playbook(str(playbook), EXAMPLE, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}")
    assert run.returncode == 0, run.stdout + run.stderr
    # The plan's table is printed where a plan is computed: by plan.yml, then for the other namespace only.
    assert run.stdout.count("gpu-h100-1  NVIDIA H100 80GB HBM3") == 2
