# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/cluster.yml refuses bad rke2_scheduler_extenders in its check play, before any host changes."""

import importlib.util
import sys

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.gpushare_upstream import GPUSHARE_EXTENDER
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and playbooks/cluster.yml needs it",
)

GPUSHARE = GPUSHARE_EXTENDER


def _inventory(tmp_path, servers, all_vars=None):
    local = {"ansible_connection": "local", "ansible_become": False, "ansible_python_interpreter": sys.executable}
    inventory = {
        "all": {
            "vars": {**local, **(all_vars or {})},
            # cluster.yml plans first: the plan needs a GPU node with its GPU intent.
            "children": {
                "rke2_servers": {"hosts": servers},
                "rke2_agents": {"hosts": {"gpu-1": {"rke2_require_nvidia_runtime": False}}},
                "gpu_nodes": {"hosts": {"gpu-1": {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 1}}},
            },
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def _failed_output(inventory):
    result = ansible_playbook("cluster.yml", inventory)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "The RKE2 cluster of the inventory is invalid; no host was changed:" in output
    assert "Install the first RKE2 server" not in output
    return output


def test_a_bad_entry_is_named_with_host_and_variable(tmp_path):
    bad = {**GPUSHARE, "urlPrefix": "127.0.0.1:32766/gpushare-scheduler", "managedResources": [{"name": "gpu-mem"}]}
    output = _failed_output(_inventory(tmp_path, {"cp-1": {"rke2_scheduler_extenders": [bad]}}))
    assert (
        "cp-1: rke2_scheduler_extenders: [0].urlPrefix: '127.0.0.1:32766/gpushare-scheduler' is not an http(s) URL"
    ) in output
    assert "cp-1: rke2_scheduler_extenders: [0].managedResources[0].name: 'gpu-mem' is not" in output


def test_the_plans_extenders_are_the_default_and_servers_must_agree(tmp_path):
    # cp-2 takes the plan's list (gpushare's extender); cp-1 says none.
    inventory = _inventory(
        tmp_path,
        {"cp-1": {"rke2_scheduler_extenders": []}, "cp-2": None},
        {"gpuops_plan": {"scheduler_extenders": [GPUSHARE]}},
    )
    output = _failed_output(inventory)
    for host in ("cp-1", "cp-2"):
        assert f"{host}: rke2_scheduler_extenders: differs between servers" in output
