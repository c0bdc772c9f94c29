# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the GPU Operator's ClusterPolicy is ready, and what is not when it is not.

As NVIDIA/gpu-operator sets it (controllers/clusterpolicy_controller.go, internal/conditions): the
operator walks its states (state-driver, state-container-toolkit, state-device-plugin, ...), sets
status.state to ready only when every state is ready, and otherwise notReady with the conditions
Ready=False and Error=True, reason OperandNotReady, message "ClusterPolicy is not ready, states not
ready: [state-a state-b]". Recent operators record the generation they reconciled as each
condition's observedGeneration. Each operand is a DaemonSet in the operator's namespace.
"""

from __future__ import annotations

import re

READY = "ready"
_STATES_NOT_READY = re.compile(r"states not ready: \[([^\]]*)\]")


def _conditions(policy):
    return {
        c.get("type"): c for c in ((policy or {}).get("status") or {}).get("conditions") or [] if isinstance(c, dict)
    }


def _stale_generation(policy):
    """The generation the Ready condition was set for, when older than the ClusterPolicy's own; else None."""
    generation = ((policy or {}).get("metadata") or {}).get("generation")
    observed = (_conditions(policy).get("Ready") or {}).get("observedGeneration")
    # Older operators leave observedGeneration unset (0): nothing to compare then.
    if generation and observed and int(observed) < int(generation):
        return int(observed)
    return None


def policy_ready(policy):
    """True when the ClusterPolicy reports ready for its current generation."""
    status = (policy or {}).get("status") or {}
    if status.get("state") != READY:
        return False
    ready = _conditions(policy).get("Ready")
    if ready is not None and ready.get("status") != "True":
        return False
    return _stale_generation(policy) is None


def states_not_ready(policy):
    """The operator's states named in its Error condition (state-device-plugin, ...)."""
    message = (_conditions(policy).get("Error") or {}).get("message") or ""
    found = _STATES_NOT_READY.search(message)
    return found.group(1).split() if found else []


def _daemonset_problem(daemonset):
    status = daemonset.get("status") or {}
    desired = int(status.get("desiredNumberScheduled") or 0)
    ready = int(status.get("numberReady") or 0)
    updated = int(status.get("updatedNumberScheduled") or 0)
    name = daemonset["metadata"]["name"]
    if ready < desired:
        unavailable = int(status.get("numberUnavailable") or desired - ready)
        return f"DaemonSet {name}: {ready} of {desired} pods ready ({unavailable} unavailable)"
    if updated < desired:
        return f"DaemonSet {name}: {updated} of {desired} pods updated to its current template"
    return None


def _deployment_problem(deployment):
    wanted = int((deployment.get("spec") or {}).get("replicas", 1) or 0)
    ready = int((deployment.get("status") or {}).get("readyReplicas") or 0)
    if ready < wanted:
        return f"Deployment {deployment['metadata']['name']}: {ready} of {wanted} replicas ready"
    return None


def not_ready_report(policy, daemonsets=(), deployments=(), namespace="gpu-operator", name="cluster-policy"):
    """Lines that say why the GPU Operator is not ready: the ClusterPolicy, then each operand not ready."""
    lines = []
    if not policy:
        lines.append(
            f"ClusterPolicy {name} does not exist (the chart creates it unless clusterPolicy.deployCR is false)"
        )
    else:
        status = policy.get("status") or {}
        state = status.get("state")
        if not state:
            lines.append(
                f"ClusterPolicy {name} has no status: the operator (its Deployment in {namespace}) "
                "has not reconciled it yet"
            )
        else:
            stale = _stale_generation(policy)
            if stale is not None:
                generation = policy["metadata"]["generation"]
                lines.append(
                    f"ClusterPolicy {name}: state {state} is for generation {stale}; "
                    f"the operator has not reconciled generation {generation} yet"
                )
            else:
                lines.append(f"ClusterPolicy {name}: state {state}")
            error = _conditions(policy).get("Error") or {}
            states = states_not_ready(policy)
            if states:
                lines.append("operator states not ready: " + ", ".join(states))
            elif error.get("status") == "True":
                lines.append(f"condition Error ({error.get('reason', '')}): {error.get('message', '')}")
    for deployment in deployments or ():
        problem = _deployment_problem(deployment)
        if problem:
            lines.append(problem)
    operand_lines = [p for p in (_daemonset_problem(ds) for ds in daemonsets or ()) if p]
    if operand_lines:
        lines += operand_lines
    elif policy and not (daemonsets or ()):
        lines.append(f"no operand DaemonSet in namespace {namespace} yet")
    return lines
