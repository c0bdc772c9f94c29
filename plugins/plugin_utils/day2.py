# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The day-2 playbooks' decisions about the one node a run is for (-e gpuops_node=NAME).

Pure functions over plain data (the inventory's groups, the Node object as the API returns it, what the host
says), so that every decision is taken, and every bad input refused, on the controller before any host changes:
- which operations a host may go through (add, replace and remove handle RKE2 agents; change a GPU node);
- whether a Node and a node-password Secret of that name belong to an earlier host (replace forgets them,
  add refuses to);
- what change_node would change on the node, so that a node nothing changes is not drained.
"""

from __future__ import annotations

import difflib
import re

from ansible_collections.gpuops.cluster.plugins.plugin_utils import dra_driver, gpu_sharing, memory_sharing
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentError

VARIABLE = "gpuops_node"
SERVER_GROUP, AGENT_GROUP, GPU_GROUP = "rke2_servers", "rke2_agents", "gpu_nodes"
# The playbook of each operation, and what it does to the node (for the messages).
OPERATIONS = {
    "add": ("add_node.yml", "add to the cluster"),
    "replace": ("replace_node.yml", "replace with a new host"),
    "change": ("change_node.yml", "change"),
    "remove": ("remove_node.yml", "remove from the cluster"),
}
# RKE2 names the Secret after the node (k3s pkg/nodepassword/nodepassword.go getSecretName, Program "rke2").
PASSWORD_SECRET_NAMESPACE = "kube-system"
# Characters of Ansible host patterns (lib/ansible/inventory/manager.py split_host_pattern and its operators).
_PATTERN = re.compile(r"[,:*?!&~\[\]\s]")


def password_secret_name(node_name):
    """The Secret in kube-system where RKE2 keeps the hash of a node's password: <node>.node-password.rke2."""
    return f"{node_name}.node-password.rke2".lower()


def _members(groups, name):
    return list((groups or {}).get(name) or ())


def _example(groups, operation):
    """A host the operation would take, a GPU agent where there is one."""
    gpu_nodes, agents = set(_members(groups, GPU_GROUP)), set(_members(groups, AGENT_GROUP))
    candidates = sorted(agents & gpu_nodes) or sorted(gpu_nodes if operation == "change" else agents)
    return candidates[0] if candidates else "gpu-07"


def _valid(groups, operation):
    wanted = (
        f"a host of {GPU_GROUP} that is a node of the cluster ({SERVER_GROUP} or {AGENT_GROUP})"
        if operation == "change"
        else f"a host of {AGENT_GROUP} (not of {SERVER_GROUP})"
    )
    return f"valid: the inventory name of {wanted}, e.g. -e {VARIABLE}={_example(groups, operation)}"


def _problem(node, message):
    """The one problem of NODE as gpuops_node, naming host and variable (IntentError's form)."""
    return [str(IntentError(node, VARIABLE, message))]


def target_problems(operation, node, groups):
    """Why NODE (the value of gpuops_node) cannot go through OPERATION in an inventory with GROUPS, as lines
    naming the host, the variable, what is wrong and what would be valid; [] when it can."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown day-2 operation {operation!r}; valid: {', '.join(OPERATIONS)}")
    playbook, verb = OPERATIONS[operation]
    valid = _valid(groups, operation)
    if node is None or (isinstance(node, str) and not node.strip()):
        return [f"{VARIABLE}: not set: {playbook} needs to know which node to {verb}; {valid}"]
    if not isinstance(node, str):
        return [f"{VARIABLE}: {node!r} is not one host name: a run is for one node; {valid}"]
    every_host = _members(groups, "all")
    if node not in every_host:
        if _PATTERN.search(node):
            why = "a host pattern, not a host name: a run is for one node"
        else:
            close = sorted(difflib.get_close_matches(node, every_host, n=3, cutoff=0.6))
            why = "not in the inventory" + (f" (did you mean {', '.join(close)}?)" if close else "")
            if operation in ("add", "replace"):
                why += f"; add it to the inventory's {AGENT_GROUP} (and {GPU_GROUP} for a GPU node) first"
        return _problem(node, f"{why}; {valid}")
    servers, agents = _members(groups, SERVER_GROUP), _members(groups, AGENT_GROUP)
    if operation == "change":
        if node not in _members(groups, GPU_GROUP):
            return _problem(
                node, f"not in {GPU_GROUP}: {playbook} applies a GPU node's MIG layout and GPU sharing; {valid}"
            )
        if node not in servers and node not in agents:
            return _problem(node, f"in neither {SERVER_GROUP} nor {AGENT_GROUP}, so not a node of the cluster; {valid}")
        return []
    if node in servers:
        return _problem(
            node,
            f"in {SERVER_GROUP}: {playbook} handles agents only (a server carries an etcd member and the "
            f"API, which cluster.yml adds and the rke2 role's rke2_state: absent removes); {valid}",
        )
    if node not in agents:
        return _problem(node, f"not in {AGENT_GROUP}; {valid}")
    return []


def _ready(node_object):
    conditions = (node_object.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _machine_id(node_object):
    return str(((node_object.get("status") or {}).get("nodeInfo") or {}).get("machineID") or "").strip()


def earlier_node(operation, host, node_object, machine_id, password_secret, host_has_password):
    """Whether the Node and the node-password Secret named after HOST belong to an earlier host of that name.

    NODE_OBJECT: the Node named after the host, or None; MACHINE_ID: the host's /etc/machine-id; PASSWORD_SECRET:
    whether kube-system holds the node's password Secret; HOST_HAS_PASSWORD: whether the host keeps an RKE2 node
    password (/etc/rancher/node/password: it asked to join before). A Node is this host's when its machine id is
    the host's (the kubelet reports /etc/machine-id). Returns {"forget_node", "forget_secret", "problems",
    "reason"}: replace forgets what an earlier host left (its Node must not be Ready: that host still runs);
    add refuses, pointing at replace_node.yml.
    """
    name = node_object["metadata"]["name"] if node_object else host
    secret = f"{PASSWORD_SECRET_NAMESPACE}/{password_secret_name(name)}"
    machine_id = str(machine_id or "").strip()
    decision = {"forget_node": False, "forget_secret": False, "problems": [], "reason": ""}

    def refuse(message):
        decision["problems"].append(str(IntentError(host, VARIABLE, message)))
        return decision

    if node_object is not None:
        node_machine = _machine_id(node_object)
        if not machine_id or not node_machine:
            missing = "the host has no /etc/machine-id" if not machine_id else f"the Node {name} reports none"
            return refuse(
                f"cannot tell whether the Node {name} is this host: {missing} (the kubelet reports the "
                "host's /etc/machine-id); valid: a host with a machine id (systemd-machine-id-setup)"
            )
        if node_machine == machine_id:
            decision["reason"] = f"the Node {name} is this host (machine id {machine_id}): nothing to forget"
            return decision
        earlier = f"the Node {name} belongs to another machine (machine id {node_machine}; this host: {machine_id})"
        if operation != "replace":
            return refuse(
                f"{earlier}; valid: playbooks/replace_node.yml -e {VARIABLE}={host} when that machine "
                "failed, or another name for this host"
            )
        if _ready(node_object):
            return refuse(
                f"{earlier} and it is Ready: that machine still runs, and replace_node.yml replaces a "
                "failed one; valid: stop the old machine first (its Node turns NotReady), or move a "
                "working node with playbooks/remove_node.yml, then playbooks/add_node.yml"
            )
        decision.update(forget_node=True, forget_secret=password_secret)
        decision["reason"] = f"{earlier} and is not Ready: its Node{' and ' + secret if password_secret else ''} go"
        return decision
    if not password_secret or host_has_password:
        # No Secret, or one this host made when it asked to join in an earlier run.
        decision["reason"] = f"no Node {name} yet" + ("" if not password_secret else f"; {secret} is this host's")
        return decision
    stale = (
        f"the cluster has no Node {name} but keeps {secret}, the password of an earlier host of that name: RKE2 "
        "would refuse this host (Node password rejected, duplicate hostname)"
    )
    if operation != "replace":
        return refuse(
            f"{stale}; valid: playbooks/replace_node.yml -e {VARIABLE}={host}, which deletes it, or "
            "another name for this host"
        )
    decision.update(forget_secret=True, reason=f"{stale}: it goes")
    return decision


def node_changes(capacity, host, node_object, mig_change="", node_name=None):
    """What change_node changes on HOST, one line each; [] leaves the node alone (not drained).

    CAPACITY: the plan's capacity; NODE_OBJECT: the host's Node; MIG_CHANGE: what the mig role's plan would
    change on the host ("" when nothing, or when the GPU Operator applies MIG: its label shows then). The labels
    the gpu_sharing, dra_driver and gpu_memory_sharing roles would patch and the resources the node advertises
    against the plan are compared as those roles compare them.
    """
    planned = (capacity.get("nodes") or {}).get(host)
    if planned is None or node_object is None:
        return []
    name = node_name or host
    only = {**capacity, "nodes": {host: planned}}
    renamed = {**node_object, "metadata": {**node_object["metadata"], "name": host}}
    changes = [f"MIG: {mig_change}"] if mig_change else []
    labels = {}
    for patch in gpu_sharing.node_changes(only, [renamed])["patches"]:
        labels.update(patch["labels"])
    for patch in memory_sharing.node_changes(only, [node_object], {host: name})["patches"]:
        labels.update(patch["labels"])
    for patch in dra_driver.node_changes(only, [node_object], {host: name})["patches"]:
        labels.update(patch["labels"])
    if labels:
        changes.append(
            "labels: " + ", ".join(f"{key}={'(removed)' if value is None else value}" for key, value in labels.items())
        )
    differences = gpu_sharing.describe_differences(gpu_sharing.capacity_differences(only, [renamed]))
    differences += memory_sharing.capacity_differences(only, [node_object], {host: name})
    changes += [f"capacity: {line}" for line in differences]
    return changes
