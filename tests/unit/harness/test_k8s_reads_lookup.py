# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpuops.cluster.k8s_reads lookup, run by ansible-playbook against a real API server (tests/harness/control-plane,
on ports of its own): several reads in one task, the live objects of definitions, a kind the server does not serve,
the k8s_to_apply filter on what it read, and the message when the server does not answer. Skipped where the control
plane's binaries are missing."""

import json
import textwrap

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-operator"}}
CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "plugin-config", "namespace": "gpu-operator", "labels": {"app": "device-plugin"}},
    "data": {"any": "version: v1\n"},
}
MISSING = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "mig-parted-config", "namespace": "gpu-operator"},
}


@pytest.fixture(scope="module")
def kubeconfig(own_control_plane):
    from kubernetes import config, utils

    path = own_control_plane["dir"] / "admin.kubeconfig"
    client = config.new_client_from_config(config_file=str(path))
    utils.create_from_dict(client, NAMESPACE)
    utils.create_from_dict(client, CONFIGMAP)
    return path


def _run(tmp_path, kubeconfig, tasks):
    playbook = tmp_path / "reads.yml"
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n"
        "  vars:\n    ansible_python_interpreter: '{{ ansible_playbook_python }}'\n"
        f"    kubeconfig: {kubeconfig}\n    answer_file: {tmp_path / 'answer.json'}\n"
        "  tasks:\n" + textwrap.indent(textwrap.dedent(tasks), "    ")
    )
    run = ansible_playbook(str(playbook), "localhost,", cwd=tmp_path)
    answer = tmp_path / "answer.json"
    return run, json.loads(answer.read_text()) if answer.exists() else None


def test_one_task_reads_several_kinds_and_the_live_objects_of_definitions(tmp_path, kubeconfig):
    run, answer = _run(
        tmp_path,
        kubeconfig,
        f"""
        - name: Read
          ansible.builtin.set_fact:
            answer: >-
              {{{{ lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig,
                         reads={{'namespace': {{'kind': 'Namespace', 'resource_name': 'gpu-operator'}},
                                'no_namespace': {{'kind': 'Namespace', 'resource_name': 'absent'}},
                                'configmaps': {{'kind': 'ConfigMap', 'namespace': 'gpu-operator',
                                               'label_selector': 'app=device-plugin'}},
                                'policies': {{'kind': 'ClusterPolicy', 'api_version': 'nvidia.com/v1'}}}},
                         definitions={json.dumps([CONFIGMAP, MISSING])}) }}}}
        - name: Keep it
          ansible.builtin.copy:
            content: "{{{{ answer | to_json }}}}"
            dest: "{{{{ answer_file }}}}"
            mode: "0600"
        """,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert [item["metadata"]["name"] for item in answer["namespace"]] == ["gpu-operator"]
    assert answer["no_namespace"] == []
    assert [item["metadata"]["name"] for item in answer["configmaps"]] == ["plugin-config"]
    # No CRD for it: no object, as k8s_info's api_found=false.
    assert answer["policies"] == []
    live, missing = answer["definitions"]
    assert live["data"] == CONFIGMAP["data"] and live["metadata"]["uid"]
    assert missing == {}


def test_k8s_to_apply_keeps_only_the_definitions_the_cluster_does_not_hold(tmp_path, kubeconfig):
    changed = {**CONFIGMAP, "data": {"any": "version: v1\nsharing: {}\n"}}
    run, answer = _run(
        tmp_path,
        kubeconfig,
        f"""
        - name: Compare
          ansible.builtin.copy:
            content: >-
              {{{{ wanted | gpuops.cluster.k8s_to_apply(lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig,
                                                               definitions=wanted).definitions) | to_json }}}}
            dest: "{{{{ answer_file }}}}"
            mode: "0600"
          vars:
            wanted: {json.dumps([NAMESPACE, CONFIGMAP, changed, MISSING])}
        """,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert answer == [changed, MISSING]


def test_an_api_server_that_does_not_answer_says_what_to_fix(tmp_path, kubeconfig):
    unreachable = tmp_path / "unreachable.kubeconfig"
    text = kubeconfig.read_text()
    server = next(line.split("server:", 1)[1].strip() for line in text.splitlines() if "server:" in line)
    unreachable.write_text(text.replace(server, "https://127.0.0.1:1"))
    run, _answer = _run(
        tmp_path,
        unreachable,
        """
        - name: Read
          ansible.builtin.set_fact:
            answer: "{{ lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig, reads={'nodes': {'kind': 'Node'}}) }}"
        """,
    )
    assert run.returncode != 0
    output = " ".join((run.stdout + run.stderr).split())
    assert f"The Kubernetes API server of {unreachable} does not answer" in output
    assert "Start the cluster (playbooks/cluster.yml) or point gpuops_kubeconfig at a kubeconfig" in output


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"reads": {"nodes": {"resource_name": "a"}}}, "read 'nodes' needs a kind and only these options"),
        ({"reads": {"nodes": {"kind": "Node", "name": "a"}}}, "read 'nodes' needs a kind and only these options"),
        ({"reads": {"definitions": {"kind": "Node"}}}, "'definitions' names the answer to the definitions"),
        ({"definitions": [{"kind": "Node", "metadata": {}}]}, "a definition needs a kind and metadata.name"),
    ],
)
def test_a_malformed_read_is_refused_before_any_call(tmp_path, arguments, message):
    # No server behind this kubeconfig: the check comes first.
    options = ", ".join(f"{name}={json.dumps(value)}" for name, value in arguments.items())
    run, _answer = _run(
        tmp_path,
        tmp_path / "none.kubeconfig",
        f"""
        - name: Read
          ansible.builtin.set_fact:
            answer: >-
              {{{{ lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig, {options}) }}}}
        """,
    )
    assert run.returncode != 0
    assert message in " ".join((run.stdout + run.stderr).split())
