# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/cluster.yml on a bad inventory: every problem listed at once, before any host changes."""

import importlib.util
import pathlib
import sys

import pytest
import yaml

# cluster.yml uses kubernetes.core, a dependency the collection declares: `make unit` has it (the ansible
# package bundles it); ansible-test units installs only ansible-core.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and playbooks/cluster.yml needs it",
)

STAGE = pathlib.Path("/var/tmp/gpuops-rke2")


def _inventory(tmp_path, hosts):
    local = {"ansible_connection": "local", "ansible_become": False, "ansible_python_interpreter": sys.executable}
    inventory = {
        "all": {
            "vars": local,
            "children": {
                "rke2_servers": {"hosts": hosts["servers"]},
                "rke2_agents": {"hosts": hosts["agents"]},
                # cluster.yml plans first: its GPU nodes need a valid GPU intent.
                "gpu_nodes": {
                    "hosts": {name: None for name in hosts["agents"]},
                    "vars": {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 1},
                },
            },
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def test_bad_inventory_stops_every_host_naming_host_variable_and_what_is_valid(run_playbook, tmp_path):
    airgap = tmp_path / "airgap"
    airgap.mkdir()
    (airgap / "rke2.linux-amd64.tar.gz").write_bytes(b"tampered")
    (airgap / "sha256sum-amd64.txt").write_text(f"{'0' * 64}  rke2.linux-amd64.tar.gz\n")
    inventory = _inventory(
        tmp_path,
        {
            "servers": {
                "cp-1": {"rke2_airgap_dir": str(airgap)},
                "cp-2": {"rke2_cluster_init": True},
            },
            "agents": {"gpu-1": {"rke2_node_taints": ["nvidia.com/gpu=true:NoRun"], "rke2_airgap_dir": str(airgap)}},
        },
    )
    existed = STAGE.exists()
    result = run_playbook("cluster.yml", inventory)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "The RKE2 cluster of the inventory is invalid; no host was changed:" in output
    for line in (
        "cp-1: rke2_cluster_init: true on 2 servers (cp-1, cp-2)",
        "cp-2: rke2_cluster_init: true on 2 servers (cp-1, cp-2)",
        "gpu-1: rke2_node_taints: 'nvidia.com/gpu=true:NoRun': effect 'NoRun' is not one of",
        "gpu-1: rke2_require_nvidia_runtime: nvidia-container-runtime is missing on this GPU node",
        f"gpu-1: rke2_airgap_dir: {airgap}/rke2.linux-amd64.tar.gz has sha256",
    ):
        assert line in output, line
    # The first change of a run is the staging folder of the first server: it was never reached.
    assert "Install the first RKE2 server" not in output
    assert STAGE.exists() == existed


def test_the_plan_refuses_a_bad_rke2_version_on_a_server_before_any_host(run_playbook, tmp_path):
    inventory = _inventory(tmp_path, {"servers": {"cp-1": {"rke2_version": "1.33.5-rke2r1"}}, "agents": {"gpu-1": {}}})
    result = run_playbook("cluster.yml", inventory)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "cp-1: rke2_version: '1.33.5-rke2r1' is not an RKE2 release version; valid: vX.Y.Z+rke2rN" in output
    assert "PLAY [Plan the GPU cluster]" in output
    assert "Install the first RKE2 server" not in output
    assert "Check the RKE2 cluster" not in output


def test_a_joining_node_without_token_outside_the_first_servers_run(run_playbook, tmp_path):
    inventory = _inventory(
        tmp_path,
        {"servers": {"cp-1": None}, "agents": {"gpu-1": {"rke2_require_nvidia_runtime": False}}},
    )
    result = run_playbook("cluster.yml", inventory, "--limit", "gpu-1")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert (
        "gpu-1: rke2_token: not set, and the first server cp-1 is not in this run, so its node-token cannot be read; "
        "valid: rke2_token from the inventory (ansible-vault), or a run that includes cp-1"
    ) in output
