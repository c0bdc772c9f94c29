# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The wait on the ClusterPolicy, read as NVIDIA/gpu-operator writes its status, and the timeout's report."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_status import (
    not_ready_report,
    policy_ready,
    states_not_ready,
)

# The message the operator writes (controllers/clusterpolicy_controller.go, fmt "states not ready: %v").
NOT_READY_MESSAGE = (
    "ClusterPolicy is not ready, states not ready: [state-device-plugin state-dcgm-exporter gpu-feature-discovery]"
)


def policy(state=None, generation=1, observed=None, ready=None, error_message=""):
    status = {}
    if state:
        status = {"state": state, "namespace": "gpu-operator"}
        if ready is not None:
            status["conditions"] = [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "Reconciled" if ready else "Error",
                    "message": "",
                },
                {
                    "type": "Error",
                    "status": "False" if ready else "True",
                    "reason": "Ready" if ready else "OperandNotReady",
                    "message": error_message,
                },
            ]
            if observed is not None:
                for condition in status["conditions"]:
                    condition["observedGeneration"] = observed
    return {"metadata": {"name": "cluster-policy", "generation": generation}, "status": status}


@pytest.mark.parametrize(
    ("cp", "ready"),
    [
        (policy("ready", ready=True, observed=1), True),
        # Operators before conditions existed set only the state.
        (policy("ready"), True),
        # Conditions without observedGeneration (0): nothing to compare.
        (policy("ready", generation=4, ready=True), True),
        (policy("notReady", ready=False, error_message=NOT_READY_MESSAGE), False),
        (policy("ignored"), False),
        (policy(), False),
        # New values changed the spec (generation 2); the status still speaks of generation 1.
        (policy("ready", generation=2, ready=True, observed=1), False),
        (policy("ready", generation=2, ready=True, observed=2), True),
        # The state and the Ready condition disagree while the operator writes one then the other.
        (policy("ready", ready=False, observed=1), False),
        (None, False),
    ],
)
def test_policy_ready(cp, ready):
    assert policy_ready(cp) is ready


def test_states_not_ready_come_from_the_error_condition():
    assert states_not_ready(policy("notReady", ready=False, error_message=NOT_READY_MESSAGE)) == [
        "state-device-plugin",
        "state-dcgm-exporter",
        "gpu-feature-discovery",
    ]
    assert (
        states_not_ready(policy("notReady", ready=False, error_message="Failed to reconcile state-driver: boom")) == []
    )
    assert states_not_ready(policy("ready")) == []


def daemonset(name, desired, ready, updated=None, unavailable=None):
    status = {
        "desiredNumberScheduled": desired,
        "numberReady": ready,
        "updatedNumberScheduled": desired if updated is None else updated,
    }
    if unavailable is not None:
        status["numberUnavailable"] = unavailable
    return {"metadata": {"name": name, "namespace": "gpu-operator"}, "status": status}


def deployment(name, replicas, ready):
    return {
        "metadata": {"name": name},
        "spec": {"replicas": replicas},
        "status": {"readyReplicas": ready} if ready else {},
    }


def test_report_names_every_operand_that_is_not_ready():
    lines = not_ready_report(
        policy("notReady", ready=False, error_message=NOT_READY_MESSAGE),
        [
            daemonset("nvidia-device-plugin-daemonset", 3, 1, unavailable=2),
            daemonset("nvidia-dcgm-exporter", 3, 3, updated=1),
            daemonset("gpu-feature-discovery", 3, 3),
        ],
        [deployment("gpu-operator", 1, 1), deployment("gpu-operator-node-feature-discovery-master", 1, 0)],
    )
    assert lines == [
        "ClusterPolicy cluster-policy: state notReady",
        "operator states not ready: state-device-plugin, state-dcgm-exporter, gpu-feature-discovery",
        "Deployment gpu-operator-node-feature-discovery-master: 0 of 1 replicas ready",
        "DaemonSet nvidia-device-plugin-daemonset: 1 of 3 pods ready (2 unavailable)",
        "DaemonSet nvidia-dcgm-exporter: 1 of 3 pods updated to its current template",
    ]


def test_report_when_the_operator_never_ran():
    lines = not_ready_report(policy(), [], [deployment("gpu-operator", 1, 0)])
    assert lines == [
        "ClusterPolicy cluster-policy has no status: the operator (its Deployment in gpu-operator) "
        "has not reconciled it yet",
        "Deployment gpu-operator: 0 of 1 replicas ready",
        "no operand DaemonSet in namespace gpu-operator yet",
    ]


def test_report_on_a_stale_generation_and_a_reconcile_error():
    lines = not_ready_report(
        policy("ready", generation=3, ready=False, observed=2, error_message="Failed to reconcile state-driver: boom"),
        [daemonset("a", 1, 1)],
    )
    assert lines == [
        "ClusterPolicy cluster-policy: state ready is for generation 2; "
        "the operator has not reconciled generation 3 yet",
        "condition Error (OperandNotReady): Failed to reconcile state-driver: boom",
    ]


def test_report_without_a_clusterpolicy():
    assert not_ready_report(None, [], [], "gpu", "cluster-policy") == [
        "ClusterPolicy cluster-policy does not exist (the chart creates it unless clusterPolicy.deployCR is false)"
    ]
