# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rke2_feature_gates: its checks, the drop-in's settings per role, and the preflight problem naming the host."""

import pytest
from ansible_collections.gpuops.cluster.plugins.filter.rke2_feature_gates import rke2_feature_gate_settings
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_cluster import _feature_gates_problems
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_feature_gates import problems

GATES = {
    "kube-apiserver": {"DRAConsumableCapacity": True, "DRAListTypeAttributes": True},
    "kube-scheduler": {"DRAConsumableCapacity": True},
    "kubelet": {"KubeletTracing": False},
}


def test_servers_pass_every_components_gates_and_agents_the_kubelets():
    assert rke2_feature_gate_settings(GATES, "server") == {
        "kube-apiserver-arg+": ["feature-gates+=DRAConsumableCapacity=true,DRAListTypeAttributes=true"],
        "kube-scheduler-arg+": ["feature-gates+=DRAConsumableCapacity=true"],
        "kubelet-arg+": ["feature-gates+=KubeletTracing=false"],
    }
    assert rke2_feature_gate_settings(GATES, "agent") == {"kubelet-arg+": ["feature-gates+=KubeletTracing=false"]}


def test_no_gate_gives_no_settings():
    assert rke2_feature_gate_settings({}, "server") == {}
    assert rke2_feature_gate_settings({"kube-scheduler": {}}, "server") == {}
    assert rke2_feature_gate_settings({"kube-apiserver": {"DRAConsumableCapacity": True}}, "agent") == {}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["DRAConsumableCapacity"], "must be a mapping of component to {gate: true or false}"),
        ({"kube-proxy": {"A": True}}, "'kube-proxy' is not a component; valid: kube-apiserver, kube-scheduler"),
        ({"kubelet": ["A"]}, "kubelet: must be a mapping of gate to true or false"),
        ({"kubelet": {"dra-consumable": True}}, "kubelet: 'dra-consumable' is not a gate name"),
        ({"kubelet": {"KubeletTracing": "yes"}}, "kubelet.KubeletTracing: must be true or false, got 'yes'"),
    ],
)
def test_what_rke2_could_not_take_is_named(value, message):
    (found,) = problems(value)
    assert message in found


def test_preflight_names_the_host_and_the_variable():
    (error,) = _feature_gates_problems("cp-1", {"feature_gates": {"kubelet": {"KubeletTracing": "yes"}}})

    assert str(error) == "cp-1: rke2_feature_gates: kubelet.KubeletTracing: must be true or false, got 'yes'"
    assert _feature_gates_problems("cp-1", {"feature_gates": GATES}) == []
