# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan and the host plays as a new user meets them: where the plan goes, --limit, typos, the table, batches."""

import json
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"

HOSTS = {"gpu-a100-1", "gpu-a100-2", "gpu-h100-1", "gpu-l4-1", "gpu-l4-2"}


@pytest.fixture
def inventory(example_inventory):
    return example_inventory


@pytest.fixture
def user_config(tmp_path):
    """A separate playbook folder's ansible.cfg: default callback settings (the collection is found through
    ANSIBLE_COLLECTIONS_PATH, as an installed one would be)."""
    config = tmp_path / "ansible.cfg"
    config.write_text("[defaults]\n")
    return {"ANSIBLE_CONFIG": str(config)}


def test_plan_goes_next_to_the_inventory_and_the_table_prints_as_a_table(
    run_playbook, inventory, tmp_path, user_config
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = run_playbook("gpuops.cluster.plan", inventory, cwd=elsewhere, env=user_config)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    plan_dir = inventory / ".gpuops-plan"
    assert set(json.loads((plan_dir / "capacity.json").read_text())["nodes"]) == HOSTS
    assert f"Plan files: {plan_dir} (7 of 7 files changed); set gpuops_plan_dir to move them" in ran.stdout
    # Every line of the table is a line of the output, not an escaped string.
    output_lines = ran.stdout.splitlines()
    for line in (plan_dir / "plan.txt").read_text().splitlines():
        assert line in output_lines
    assert not list(elsewhere.iterdir())


def test_a_file_inventory_gets_the_plan_beside_it(run_playbook, inventory, user_config):
    ran = run_playbook("plan.yml", inventory / "hosts.yml", env=user_config)
    # group_vars beside hosts.yml are read as well.
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (inventory / ".gpuops-plan" / "capacity.json").is_file()


def test_a_read_only_plan_folder_fails_saying_which_variable_moves_it(run_playbook, inventory):
    plan_dir = inventory / ".gpuops-plan"
    plan_dir.mkdir()
    read_only = [
        "unshare",
        "--mount",
        "sh",
        "-c",
        f'mount --bind "{plan_dir}" "{plan_dir}" && mount -o remount,ro,bind "{plan_dir}" && exec "$@"',
        "read-only",
    ]
    probe = subprocess.run([*read_only, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here (unshare/mount as root): {probe.stderr.strip()}")
    ran = run_playbook("plan.yml", inventory, wrap=read_only)
    assert ran.returncode != 0
    assert f"the plan cannot be written to {plan_dir}: {plan_dir} is not writable" in ran.stdout
    assert "set gpuops_plan_dir to another folder" in ran.stdout


def test_limit_still_plans_every_gpu_node(run_playbook, tmp_path):
    plan_dir = tmp_path / "plan"
    ran = run_playbook("plan.yml", EXAMPLE, "--limit", "gpu-l4-1", "-e", f"gpuops_plan_dir={plan_dir}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert set(json.loads((plan_dir / "capacity.json").read_text())["nodes"]) == HOSTS


def test_limit_does_not_skip_validation_of_the_other_gpu_nodes(run_playbook, inventory, tmp_path):
    (inventory / "group_vars" / "gpu_h100.yml").write_text(
        "gpuops_gpu_product: NVIDIA H100 80GB HBM3\ngpuops_gpu_count: 0\n"
    )
    ran = run_playbook("gpu_hosts.yml", inventory, "--limit", "gpu-l4-1", "-e", f"gpuops_plan_dir={tmp_path / 'plan'}")
    assert ran.returncode != 0
    assert "gpu-h100-1: gpuops_gpu_count: must be 1 or more GPUs per node, got 0" in ran.stdout
    # The host play never started: no host was contacted (the example's addresses answer nothing).
    assert "Prepare the GPU hosts" not in ran.stdout
    assert "UNREACHABLE" not in ran.stdout


def test_typos_in_variable_and_group_names_warn_with_did_you_mean(run_playbook, inventory, tmp_path):
    hosts = inventory / "hosts.yml"
    hosts.write_text(hosts.read_text().replace("    rke2_servers:", "    rke2_server:"))
    with (inventory / "group_vars" / "gpu_l4.yml").open("a") as group_vars:
        group_vars.write("gpuops_timeslicing: {replicas: 2}\nnvidia_container_toolkit_runtim: rke2\n")
    with (inventory / "group_vars" / "all" / "main.yml").open("a") as group_vars:
        group_vars.write("gpuops_mig_stratgy: single\n")
    ran = run_playbook("plan.yml", inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    output = " ".join((ran.stdout + ran.stderr).split())  # warnings go to stderr
    for warning in (
        "group rke2_server is not a group of gpuops.cluster, so its hosts are not treated as rke2_servers "
        "(the inventory has no group rke2_servers); did you mean rke2_servers?",
        "gpuops_timeslicing (set for gpu-l4-1, gpu-l4-2) is not a variable of gpuops.cluster and is ignored; "
        "did you mean gpuops_time_slicing?",
        "gpuops_mig_stratgy (set for cp-1, gpu-a100-1, gpu-a100-2, gpu-h100-1, gpu-l4-1 and 1 more hosts) is not a "
        "variable of gpuops.cluster and is ignored; did you mean gpuops_mig_strategy?",
        "nvidia_container_toolkit_runtim (set for gpu-l4-1, gpu-l4-2) is not a variable of gpuops.cluster and is "
        "ignored; did you mean nvidia_container_toolkit_runtime?",
    ):
        assert warning in output, ran.stderr


def test_bad_role_variables_fail_the_plan_before_any_host(run_playbook, inventory, tmp_path):
    with (inventory / "group_vars" / "gpu_l4.yml").open("a") as group_vars:
        group_vars.write("nvidia_container_toolkit_runtime: rke\nmig_reboot: maybe\nmig_drain_timeout: soon\n")
    plan_dir = tmp_path / "plan"
    ran = run_playbook("gpu_hosts.yml", inventory, "-e", f"gpuops_plan_dir={plan_dir}")
    assert ran.returncode != 0
    for line in (
        "gpu-l4-1, gpu-l4-2: nvidia_container_toolkit_runtime: value of nvidia_container_toolkit_runtime must be one "
        "of: containerd, docker, rke2, none, got: rke",
        "gpu-l4-1, gpu-l4-2: mig_reboot: must be true or false, got 'maybe'",
        "gpu-l4-1, gpu-l4-2: mig_drain_timeout: argument 'mig_drain_timeout' is of type str and we were unable to "
        "convert to int",
    ):
        assert line in ran.stdout, ran.stdout
    assert not plan_dir.exists()
    assert "UNREACHABLE" not in ran.stdout


@pytest.mark.parametrize(
    ("extra", "attempted"), [((), ["gpu-a100-1"]), (("-e", "gpuops_serial=2"), ["gpu-a100-1", "gpu-a100-2"])]
)
def test_gpu_hosts_change_in_batches_and_stop_after_a_failed_batch(run_playbook, inventory, tmp_path, extra, attempted):
    # Every GPU node points at a closed port on this machine: each host it reaches is unreachable at once.
    hosts = inventory / "hosts.yml"
    hosts.write_text(
        re.sub(
            r"^( +)ansible_host: \S+$", r"\1ansible_host: 127.0.0.1\n\1ansible_port: 9", hosts.read_text(), flags=re.M
        )
    )
    ran = run_playbook("gpu_hosts.yml", inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}", *extra)
    assert ran.returncode != 0
    recap = ran.stdout.split("PLAY RECAP", 1)[1]
    # The first batch (20% of 5 GPU nodes by default) failed, so no later batch was started.
    assert sorted(re.findall(r"^(gpu-\S+) +: .*unreachable=1", recap, flags=re.M)) == attempted
    assert not set(re.findall(r"^(gpu-\S+) +:", recap, flags=re.M)) - set(attempted)
