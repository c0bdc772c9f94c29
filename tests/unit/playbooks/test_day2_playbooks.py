# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The day-2 playbooks (add_node, replace_node, change_node, remove_node) on bad input: the first play, on the
controller, stops the run naming host, variable, what is wrong and what is valid, before the plan and before any
host is contacted. molecule/site runs them against a cluster (verify_day2.yml)."""

import importlib.util
import json
import pathlib
import sys

import pytest
import yaml

# The day-2 playbooks use kubernetes.core, a dependency the collection declares: `make unit` has it (the ansible
# package bundles it); ansible-test units installs only ansible-core.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and the day-2 playbooks need it",
)

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"
PLAYBOOKS = ("add_node.yml", "replace_node.yml", "change_node.yml", "remove_node.yml")
FIRST_PLAY = {
    "add_node.yml": "Check the node this run adds or replaces",
    "replace_node.yml": "Check the node this run adds or replaces",
    "change_node.yml": "Check the node to change",
    "remove_node.yml": "Check the node to remove",
}


@pytest.fixture
def inventory(tmp_path):
    """A server, two L4 agents, an agent without GPUs and a host in no RKE2 group, all run locally."""
    local = {"ansible_connection": "local", "ansible_become": False, "ansible_python_interpreter": sys.executable}
    document = {
        "all": {
            "vars": local,
            "hosts": {"spare-1": None},
            "children": {
                "rke2_servers": {"hosts": {"cp-1": None}},
                "rke2_agents": {"hosts": {"gpu-l4-1": None, "gpu-l4-2": None, "cpu-1": None}},
                "gpu_nodes": {
                    "hosts": {"gpu-l4-1": None, "gpu-l4-2": None},
                    "vars": {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 2},
                },
            },
        }
    }
    folder = tmp_path / "inventory"
    folder.mkdir()
    (folder / "hosts.yml").write_text(yaml.safe_dump(document))
    return folder


def _refused(result, playbook, *lines):
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert f"PLAY [{FIRST_PLAY[playbook]}]" in output, output
    for line in lines:
        assert line in output, output
    # Nothing after the first play: no plan written, no host contacted.
    assert "PLAY [Plan the GPU cluster" not in output, output
    assert output.count("PLAY [") == 1, output


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_day2_playbooks_parse(run_playbook, playbook):
    result = run_playbook(playbook, EXAMPLE, "--syntax-check")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_gpuops_node_unset(run_playbook, inventory, playbook):
    verb = {"add": "add to the cluster", "replace": "replace with a new host", "change": "change"}
    operation = playbook.split("_")[0]
    _refused(
        run_playbook(playbook, inventory),
        playbook,
        f"gpuops_node: not set: {playbook} needs to know which node to "
        f"{verb.get(operation, 'remove from the cluster')}; valid: the inventory name of",
    )
    assert not (inventory / ".gpuops-plan").exists()


NOT_ONE_INVENTORY_HOST = {
    "gpu-l4-3": "gpu-l4-3: gpuops_node: not in the inventory (did you mean gpu-l4-1, gpu-l4-2?)",
    "gpu-l4-*": "gpu-l4-*: gpuops_node: a host pattern, not a host name: a run is for one node",
}


@pytest.mark.parametrize("node", NOT_ONE_INVENTORY_HOST)
@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_name_that_is_not_one_inventory_host(run_playbook, inventory, playbook, node):
    _refused(run_playbook(playbook, inventory, "-e", f"gpuops_node={node}"), playbook, NOT_ONE_INVENTORY_HOST[node])


def test_two_hosts_at_once(run_playbook, inventory):
    _refused(
        run_playbook("remove_node.yml", inventory, "-e", json.dumps({"gpuops_node": ["gpu-l4-1", "gpu-l4-2"]})),
        "remove_node.yml",
        "gpuops_node: ['gpu-l4-1', 'gpu-l4-2'] is not one host name: a run is for one node",
    )


@pytest.mark.parametrize("playbook", ["add_node.yml", "replace_node.yml", "remove_node.yml"])
def test_a_server_where_only_agents_are_handled(run_playbook, inventory, playbook):
    _refused(
        run_playbook(playbook, inventory, "-e", "gpuops_node=cp-1"),
        playbook,
        f"cp-1: gpuops_node: in rke2_servers: {playbook} handles agents only",
        "valid: the inventory name of a host of rke2_agents (not of rke2_servers), e.g. -e gpuops_node=gpu-l4-1",
    )


@pytest.mark.parametrize("playbook", ["add_node.yml", "remove_node.yml"])
def test_a_host_outside_the_rke2_groups(run_playbook, inventory, playbook):
    _refused(
        run_playbook(playbook, inventory, "-e", "gpuops_node=spare-1"),
        playbook,
        "spare-1: gpuops_node: not in rke2_agents; valid:",
    )


def test_changing_a_node_without_gpus(run_playbook, inventory):
    _refused(
        run_playbook("change_node.yml", inventory, "-e", "gpuops_node=cpu-1"),
        "change_node.yml",
        "cpu-1: gpuops_node: not in gpu_nodes: change_node.yml applies a GPU node's MIG layout and GPU sharing; "
        "valid: the inventory name of a host of gpu_nodes that is a node of the cluster",
    )


def test_adding_a_node_needs_a_running_cluster(run_playbook, inventory):
    """A valid node and no kubeconfig: the run stops on the node before any host stage, naming the file."""
    result = run_playbook("add_node.yml", inventory, "-e", "gpuops_node=gpu-l4-2")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert (
        f"gpu-l4-2: gpuops_kubeconfig: {inventory}/.gpuops-kubeconfig does not exist, so there is no running "
        "cluster to join; valid: the kubeconfig of the running cluster"
    ) in " ".join(output.split())
    assert "PLAY [Check the GPU host against the inventory" not in output


def test_the_plan_of_a_removal_leaves_the_node_out(run_playbook, inventory):
    """remove_node.yml plans as if the node had left gpu_nodes (__gpuops_plan_leaving): its ConfigMaps lose it."""
    result = run_playbook("plan.yml", inventory, "-e", json.dumps({"__gpuops_plan_leaving": ["gpu-l4-2"]}))
    assert result.returncode == 0, result.stdout + result.stderr
    capacity = json.loads((inventory / ".gpuops-plan" / "capacity.json").read_text())
    assert sorted(capacity["nodes"]) == ["gpu-l4-1"]
    result = run_playbook("plan.yml", inventory)
    assert result.returncode == 0, result.stdout + result.stderr
    capacity = json.loads((inventory / ".gpuops-plan" / "capacity.json").read_text())
    assert sorted(capacity["nodes"]) == ["gpu-l4-1", "gpu-l4-2"]


LAST_NODE_PLAY = {
    "add_node.yml": "Join the node to the cluster as an RKE2 agent",
    "change_node.yml": "Apply the node's MIG layout",
    "remove_node.yml": "Drain the node, remove RKE2 from it and delete its Node and password",
}


@pytest.mark.parametrize("playbook", LAST_NODE_PLAY)
def test_the_last_play_on_the_node_marks_it_done_before_the_cluster_stages(playbook):
    """tasks/day2_kubernetes.yml applies nothing unless tasks/node_done.yml ran on the node: that is the last task of
    the last play on it, and every play after it is the controller's."""
    plays = yaml.safe_load((REPO / "playbooks" / playbook).read_text(encoding="utf-8"))
    names = [play["name"] for play in plays]
    last = plays[names.index(LAST_NODE_PLAY[playbook])]
    assert "gpuops_day2_node" in last["hosts"]
    assert last["post_tasks"][-1]["ansible.builtin.import_tasks"] == "tasks/node_done.yml"
    assert [play["hosts"] for play in plays[names.index(LAST_NODE_PLAY[playbook]) + 1 :]] == ["localhost"]


def test_the_cluster_stages_stop_where_the_node_was_unreachable(run_playbook, tmp_path):
    """Ansible goes on to the controller's play when the node is unreachable: the guard of day2_kubernetes.yml stops
    it, naming the node, before the GPU Operator's role."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {
                        # Nothing listens on port 1 of localhost: ssh is refused at once.
                        "gpu-l4-9": {"ansible_host": "127.0.0.1", "ansible_port": 1, "ansible_user": "nobody"},
                        "cp-1": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                        "localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                    }
                }
            }
        )
    )
    tasks = REPO / "playbooks" / "tasks"
    playbook = tmp_path / "day2.yml"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    # With a server, as the RKE2 check's play: a play whose every host fails ends the run.
                    "name": "The node's host stages",
                    "hosts": "gpu-l4-9:cp-1",
                    "gather_facts": False,
                    "tasks": [
                        {"ansible.builtin.ping": None},
                        {"ansible.builtin.import_tasks": str(tasks / "node_done.yml")},
                    ],
                },
                {
                    "name": "The cluster stages",
                    "hosts": "localhost",
                    "gather_facts": False,
                    "tasks": [{"ansible.builtin.import_tasks": str(tasks / "day2_kubernetes.yml")}],
                },
            ],
            sort_keys=False,
        )
    )
    result = run_playbook(str(playbook), inventory, "-e", "gpuops_node=gpu-l4-9")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "UNREACHABLE" in output
    assert "gpu-l4-9: its host stages did not run to their end" in " ".join(output.split())
    assert "Install or upgrade the GPU Operator" not in output
