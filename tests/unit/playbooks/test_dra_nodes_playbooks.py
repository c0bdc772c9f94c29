# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node with gpuops_gpu_allocation dra through the real ansible-playbook: the plan writes dra.json, and the DRA
driver stage stops on bad input before it asks the cluster anything."""

import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
# gpu_operator checks Helm before it reads the plan; the test bed's Helm 3, when it is there.
HELM = REPO / ".cache" / "helm" / "v3.17.2" / "helm"


@pytest.fixture
def dra_inventory(example_inventory):
    host_vars = example_inventory / "host_vars"
    host_vars.mkdir(exist_ok=True)
    (host_vars / "gpu-h100-1.yml").write_text("gpuops_gpu_allocation: dra\n", encoding="utf-8")
    return example_inventory


def test_the_plan_writes_the_dra_nodes_devices_beside_capacity_json(run_playbook, dra_inventory, tmp_path):
    plan_dir = tmp_path / "plan"
    ran = run_playbook("plan.yml", dra_inventory, "-e", f"gpuops_plan_dir={plan_dir}")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    dra = json.loads((plan_dir / "dra.json").read_text(encoding="utf-8"))
    assert list(dra["nodes"]) == ["gpu-h100-1"]
    assert all(device["attributes"]["type"] == {"string": "mig"} for device in dra["nodes"]["gpu-h100-1"]["devices"])
    capacity = json.loads((plan_dir / "capacity.json").read_text(encoding="utf-8"))
    assert capacity["nodes"]["gpu-h100-1"]["resources"] == {}
    assert capacity["nodes"]["gpu-l4-1"]["gpu_allocation"] == "device_plugin"


def _unanswered_kubeconfig(tmp_path):
    """A kubeconfig whose server nobody answers: a run must stop before it asks."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n", encoding="utf-8")
    return kubeconfig


def test_the_dra_driver_stage_refuses_to_remove_the_driver_of_dra_nodes(run_playbook, dra_inventory, tmp_path):
    ran = run_playbook(
        "dra_driver.yml",
        dra_inventory,
        "-e",
        f"gpuops_plan_dir={tmp_path / 'plan'} dra_driver_kubeconfig={_unanswered_kubeconfig(tmp_path)}"
        " dra_driver_state=absent",
    )

    assert ran.returncode != 0
    assert "dra_driver_state is absent but the plan offers the GPUs of gpu-h100-1 through DRA" in ran.stdout
    assert "Ask the API server" not in ran.stdout


@pytest.mark.skipif(not HELM.is_file(), reason=f"no Helm 3 at {HELM}")
def test_the_dra_driver_stage_checks_its_chart_before_any_cluster_call(run_playbook, dra_inventory, tmp_path):
    missing = tmp_path / "dra-driver-nvidia-gpu-0.5.0.tgz"
    ran = run_playbook(
        "dra_driver.yml",
        dra_inventory,
        "-e",
        f"gpuops_plan_dir={tmp_path / 'plan'} dra_driver_kubeconfig={_unanswered_kubeconfig(tmp_path)}"
        f" dra_driver_helm_binary={HELM} dra_driver_chart_ref={missing}",
    )

    assert ran.returncode != 0
    assert f"dra_driver_chart_ref: {missing} is not a file on the controller" in ran.stdout
    assert "Ask the API server" not in ran.stdout
