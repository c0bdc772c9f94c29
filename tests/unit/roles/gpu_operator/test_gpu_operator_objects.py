# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_operator role sends: every Kubernetes and Helm call goes to the kubeconfig and helm it was given."""

import pathlib
import re

import yaml

ROLE = pathlib.Path(__file__).resolve().parents[4] / "roles" / "gpu_operator"
# Label keys and values as Kubernetes validates them (IsQualifiedName, IsValidLabelValue).
LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


def _tasks(node):
    """Every task of a task list, blocks, rescues and always included."""
    for task in node or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def _role_tasks():
    for path in sorted((ROLE / "tasks").glob("*.yml")):
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            yield path.name, task


def _module_calls(prefix):
    for name, task in _role_tasks():
        for key, args in task.items():
            if key.startswith(prefix):
                yield name, task["name"], key, args


def test_every_cluster_call_uses_the_role_kubeconfig():
    calls = [
        c
        for c in _module_calls("kubernetes.core.")
        if c[2] not in ("kubernetes.core.helm_repository", "kubernetes.core.helm_pull")
    ]
    assert calls, "the role makes Kubernetes calls"
    for file, task, module, args in calls:
        assert args.get("kubeconfig") == "{{ gpu_operator_kubeconfig }}", f"{file}: {task} ({module})"
    lookup = re.compile(r"lookup\('gpuops\.cluster\.k8s_reads', kubeconfig=(\w+)")
    reads = [
        (file, task["name"], read)
        for file, task in _role_tasks()
        for read in lookup.findall(yaml.safe_dump(task, width=1000))
    ]
    assert len(reads) >= 4, "the role reads the cluster through gpuops.cluster.k8s_reads"
    for file, task, kubeconfig in reads:
        assert kubeconfig == "gpu_operator_kubeconfig", f"{file}: {task}"


def test_every_helm_call_uses_the_checked_helm_binary():
    calls = list(_module_calls("kubernetes.core.helm"))
    assert {c[2] for c in calls} >= {
        "kubernetes.core.helm",
        "kubernetes.core.helm_info",
        "kubernetes.core.helm_repository",
        "kubernetes.core.helm_pull",
    }
    for file, task, module, args in calls:
        assert args.get("binary_path") == "{{ gpu_operator_helm_binary }}", f"{file}: {task} ({module})"


def test_no_command_drives_the_cluster():
    """Kubernetes only through kubernetes.core: the one command reads `helm version` and changes nothing."""
    commands = [(f, t) for f, t in _role_tasks() if {"ansible.builtin.command", "ansible.builtin.shell"} & set(t)]
    assert len(commands) == 1
    task = commands[0][1]
    assert task["ansible.builtin.command"]["argv"][1:] == ["version", "--short"]
    assert task["changed_when"] is False and task["check_mode"] is False


def test_the_namespace_is_labelled_for_privileged_operands():
    task = next(t for _file, t in _role_tasks() if t["name"].startswith("Ensure the namespace exists"))
    # The definition is a task variable, so that the task is skipped where the namespace read holds it already.
    assert task["kubernetes.core.k8s"]["definition"] == "{{ __gpu_operator_namespace_definition }}"
    assert "gpuops.cluster.k8s_contains(__gpu_operator_namespace_definition)" in task["when"]
    definition = task["vars"]["__gpu_operator_namespace_definition"]
    assert definition["apiVersion"] == "v1" and definition["kind"] == "Namespace"
    assert definition["metadata"] == {
        "name": "{{ gpu_operator_namespace }}",
        "labels": "{{ __gpu_operator_namespace_labels }}",
    }
    labels = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))["__gpu_operator_namespace_labels"]
    # The GPU Operator's docs: its namespace needs the privileged Pod Security level where PSA is enforced.
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"
    for key, value in labels.items():
        assert LABEL_KEY.match(key) and len(key.split("/")[-1]) <= 63, key
        assert LABEL_VALUE.match(value), value


def test_crds_are_applied_server_side_without_a_diff_of_their_schemas():
    task = next(t for _file, t in _role_tasks() if t["name"] == "Apply the CRDs that differ")
    k8s = task["kubernetes.core.k8s"]
    # Only those whose live CRD lacks a field or the sha256 of the chart's definition; none, no call.
    assert k8s["definition"] == "{{ __gpu_operator_crds_to_apply }}"
    assert task["when"] == "__gpu_operator_crds_to_apply | length > 0"
    # server_side_apply only takes effect with apply (kubernetes.core's service.apply); else the CRDs are patched.
    assert k8s["apply"] is True
    assert k8s["server_side_apply"] == {"field_manager": "{{ __gpu_operator_field_manager }}", "force_conflicts": True}
    assert task["diff"] is False


def test_the_release_skips_the_chart_crds_only_when_the_role_applies_them():
    task = next(t for _file, t in _role_tasks() if t["name"] == "Install or upgrade the release")
    helm = task["kubernetes.core.helm"]
    assert helm["skip_crds"] == "{{ gpu_operator_manage_crds | bool }}"
    assert helm["release_values"] == "{{ __gpu_operator_release_values }}"
    assert helm["create_namespace"] is False
    assert helm["chart_version"] == "{{ gpu_operator_chart_version }}"


def test_the_wait_polls_real_state_and_never_sleeps():
    tasks = [t for _file, t in _role_tasks()]
    assert not any("ansible.builtin.pause" in t or "ansible.builtin.wait_for" in t for t in tasks)
    wait = next(t for t in tasks if t["name"].startswith("Wait until the ClusterPolicy reports ready"))
    assert wait["kubernetes.core.k8s_info"]["kind"] == "ClusterPolicy"
    assert "gpu_operator_ready" in wait["until"]
