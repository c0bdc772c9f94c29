# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether applying a definition would change an object read from the cluster (gpuops.cluster.k8s_contains)."""

import copy

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.k8s_state import FilterModule, k8s_contains, k8s_to_apply

# A Namespace as the API server returns it (fields the server adds included) and the role's definition of it.
READ = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": "gpu-operator",
        "uid": "0b6f3c1e-6f0e-4d7e-9a57-0a3c2f0c1d11",
        "resourceVersion": "412",
        "labels": {"kubernetes.io/metadata.name": "gpu-operator", "pod-security.kubernetes.io/enforce": "privileged"},
    },
    "spec": {"finalizers": ["kubernetes"]},
    "status": {"phase": "Active"},
}
WANTED = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "gpu-operator", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}},
}


def test_an_object_holding_every_field_of_the_definition_contains_it():
    assert k8s_contains(READ, WANTED) is True


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            lambda d: d["metadata"]["labels"].update({"pod-security.kubernetes.io/enforce": "baseline"}), id="value"
        ),
        pytest.param(lambda d: d["metadata"]["labels"].update({"team": "gpu"}), id="new-label"),
        pytest.param(lambda d: d.update({"spec": {"finalizers": []}}), id="list"),
        pytest.param(lambda d: d.update({"data": {"config.yaml": "version: v1\n"}}), id="new-field"),
    ],
)
def test_any_field_the_object_lacks_or_holds_otherwise_is_a_change(change):
    wanted = copy.deepcopy(WANTED)
    change(wanted)
    assert k8s_contains(READ, wanted) is False


def test_a_missing_object_contains_nothing():
    assert k8s_contains({}, WANTED) is False
    assert k8s_contains(None, WANTED) is False


def test_bad_input_is_an_error():
    with pytest.raises(AnsibleFilterError, match="expects an object definition with a kind"):
        k8s_contains(READ, {"metadata": {}})
    with pytest.raises(AnsibleFilterError, match="expects the object read from the cluster"):
        k8s_contains(["x"], WANTED)


def test_to_apply_keeps_the_definitions_their_live_objects_lack_in_their_order():
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "gpu-operator"}}
    relabelled = copy.deepcopy(WANTED)
    relabelled["metadata"]["labels"]["team"] = "gpu"
    assert k8s_to_apply([WANTED, other, relabelled], [READ, {}, READ]) == [other, relabelled]
    assert k8s_to_apply([WANTED], [READ]) == []
    assert k8s_to_apply([], []) == []


def test_to_apply_refuses_lists_that_do_not_pair():
    with pytest.raises(AnsibleFilterError, match="in the same order; got 2 definitions and 1 live objects"):
        k8s_to_apply([WANTED, WANTED], [READ])
    with pytest.raises(AnsibleFilterError, match="expects a list of definitions"):
        k8s_to_apply(WANTED, [READ])


def test_the_filters_are_registered():
    assert FilterModule().filters() == {"k8s_contains": k8s_contains, "k8s_to_apply": k8s_to_apply}
