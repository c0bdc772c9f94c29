# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml with memory-shared nodes: a copy of inventories/example plus a HAMi group and a gpushare
group (the two ways the seed document on shared GPU scheduling and HAMi share a GPU by memory)."""

import json
import pathlib
import shutil

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.gpushare_upstream import GPUSHARE_EXTENDER

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"


def _inventory(tmp_path, hami, gpushare):
    """The example inventory with group gpu_hami (2x L4, HAMI's gpuops_memory_sharing) and group gpu_gpushare
    (1x H100 80GB HBM3, GPUSHARE's), both under gpu_nodes."""
    inventory = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, inventory)
    hosts_file = inventory / "hosts.yml"
    hosts = yaml.safe_load(hosts_file.read_text())
    children = hosts["all"]["children"]["gpu_nodes"]["children"]
    children["gpu_hami"] = {"hosts": {"gpu-hami-1": {"ansible_host": "192.0.2.51"}}}
    children["gpu_gpushare"] = {"hosts": {"gpu-share-1": {"ansible_host": "192.0.2.61"}}}
    hosts_file.write_text(yaml.safe_dump(hosts, sort_keys=False))
    group_vars = inventory / "group_vars"
    (group_vars / "gpu_hami.yml").write_text(
        yaml.safe_dump({"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 2, **hami}, sort_keys=False)
    )
    (group_vars / "gpu_gpushare.yml").write_text(
        yaml.safe_dump(
            {
                "gpuops_gpu_product": "NVIDIA H100 80GB HBM3",
                "gpuops_gpu_count": 8,
                "gpuops_mig_config": "all-disabled",
                **gpushare,
            },
            sort_keys=False,
        )
    )
    return inventory


GOOD_HAMI = {"gpuops_memory_sharing": {"backend": "hami", "split": 5}}
GOOD_GPUSHARE = {"gpuops_memory_sharing": {"backend": "gpushare"}}


@pytest.fixture
def run_plan(run_playbook):
    def run(inventory, plan_dir, playbook="plan.yml"):
        return run_playbook(playbook, inventory, "-e", f"gpuops_plan_dir={plan_dir}")

    return run


def test_memory_shared_nodes_are_planned_and_the_rest_of_the_example_is_unchanged(run_plan, tmp_path):
    plan_dir = tmp_path / "plan"
    inventory = _inventory(tmp_path, GOOD_HAMI, GOOD_GPUSHARE)
    # A misspelt name is only warned about (and that node stays as the example has it).
    with (inventory / "group_vars" / "gpu_l4.yml").open("a") as group_vars:
        group_vars.write("gpuops_memory_share: {backend: hami}\n")
    ran = run_plan(inventory, plan_dir)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "did you mean gpuops_memory_sharing?" in ran.stdout + ran.stderr
    nodes = json.loads((plan_dir / "capacity.json").read_text())["nodes"]

    hami = nodes["gpu-hami-1"]
    assert hami["resources"] == {"nvidia.com/gpu": 10}
    # NVIDIA L4: 23034 MiB in the GPU catalog; 2 GPUs, memory and core scaling 1.
    assert hami["memory_sharing"] == {
        "backend": "hami",
        "split": 5,
        "memory_scaling": 1,
        "core_scaling": 1,
        "scheduler_accounts": {"nvidia.com/gpucores": 200, "nvidia.com/gpumem": 46068},
    }
    assert hami["labels"]["gpu"] == "on"

    share = nodes["gpu-share-1"]
    # NVIDIA H100 80GB HBM3: 81559 MiB, 79 whole GiB per GPU.
    assert share["resources"] == {"aliyun.com/gpu-count": 8, "aliyun.com/gpu-mem": 632}
    assert share["labels"]["gpushare"] == "true"
    for node in (hami, share):
        assert node["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
        assert "nvidia.com/device-plugin.config" not in node["labels"]

    # The example's own nodes keep their figures and get no memory sharing.
    assert nodes["gpu-l4-1"]["resources"] == {"nvidia.com/gpu": 16}
    assert nodes["gpu-l4-1"]["memory_sharing"] is None
    assert nodes["gpu-a100-1"]["resources"] == {"nvidia.com/mig-1g.10gb": 56, "nvidia.com/mig-3g.40gb": 8}

    configmap = yaml.safe_load((plan_dir / "device-plugin-configmap.yaml").read_text())
    used = {node["labels"].get("nvidia.com/device-plugin.config") for node in nodes.values()} - {None}
    assert set(configmap["data"]) == used | {"default"}
    table = (plan_dir / "plan.txt").read_text()
    assert "hami x5" in table and "gpushare" in table
    assert "hami x5" in ran.stdout


def test_the_plan_fact_carries_gpushares_scheduler_extender(run_plan, tmp_path):
    shown = tmp_path / "extenders.json"
    playbook = tmp_path / "show.yml"
    # What a later stage (the rke2 role) reads: gpuops_plan.scheduler_extenders, written out as JSON.
    playbook.write_text(
        "- name: Plan\n"
        "  ansible.builtin.import_playbook: gpuops.cluster.plan\n"
        "- name: Write the scheduler extenders of the plan\n"
        "  hosts: localhost\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - name: Write them\n"
        "      ansible.builtin.copy:\n"
        '        content: "{{ gpuops_plan.scheduler_extenders | to_json }}"\n'
        f"        dest: {shown}\n"
        "        mode: '0600'\n"
    )
    inventory = _inventory(tmp_path, GOOD_HAMI, GOOD_GPUSHARE)
    ran = run_plan(inventory, tmp_path / "plan", str(playbook))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(shown.read_text()) == [GPUSHARE_EXTENDER]

    (inventory / "group_vars" / "gpu_gpushare.yml").write_text(
        "gpuops_gpu_product: NVIDIA H100 80GB HBM3\ngpuops_gpu_count: 8\n"
    )
    without = run_plan(inventory, tmp_path / "plan-2", str(playbook))
    assert without.returncode == 0, without.stdout + without.stderr
    assert json.loads(shown.read_text()) == []


@pytest.mark.parametrize(
    ("hami", "gpushare", "expected"),
    [
        pytest.param(
            {"gpuops_memory_sharing": {"backend": "hami"}, "gpuops_time_slicing": {"replicas": 4}},
            GOOD_GPUSHARE,
            "gpu-hami-1: gpuops_memory_sharing: cannot be combined with gpuops_time_slicing on one node",
            id="memory-sharing-and-time-slicing",
        ),
        pytest.param(
            GOOD_HAMI,
            {"gpuops_memory_sharing": {"backend": "gpushare-v2"}},
            "gpu-share-1: gpuops_memory_sharing.backend: unknown backend 'gpushare-v2'; did you mean 'gpushare'? "
            "valid: hami (maintained, recommended) or gpushare (legacy)",
            id="unknown-backend",
        ),
        pytest.param(
            {"gpuops_memory_sharing": {"backend": "hami", "split": 0}},
            GOOD_GPUSHARE,
            "gpu-hami-1: gpuops_memory_sharing.split: must be a whole number of 1 or more, at most 2147483647 "
            "(devices HAMi registers per GPU, its deviceSplitCount, which it registers as a 32-bit integer), got 0",
            id="split-below-1",
        ),
    ],
)
def test_bad_intents_fail_naming_host_and_variable_and_write_nothing(run_plan, tmp_path, hami, gpushare, expected):
    plan_dir = tmp_path / "plan"
    failed = run_plan(_inventory(tmp_path, hami, gpushare), plan_dir)
    assert failed.returncode != 0
    assert "The GPU intent in the inventory is invalid; nothing was written." in failed.stdout
    assert expected in failed.stdout, failed.stdout
    assert not plan_dir.exists()
