# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Feature gates of a cluster whose nodes offer GPUs through NVIDIA's DRA driver.

Two sets, checked together because one needs the other:

- the driver's own gates (gpuops_dra_feature_gates, the chart's featureGates map: one release, so one value for
  the cluster), with their defaults and the rules the driver enforces when it starts;
- the Kubernetes gates some of them need on kube-apiserver and kube-scheduler, per Kubernetes minor.

Driver gates: kubernetes-sigs/dra-driver-nvidia-gpu pkg/featuregates/featuregates.go at 0807eed0e6, the gates
whose Version is 0.5 or lower (what v0.5.0 knows), and ValidateFeatureGates for the rules. Kubernetes gates:
k8s.io/kubernetes v1.36.3 pkg/features/kube_features.go; the components are those whose code reads the gate
(pkg/registry/resource, pkg/scheduler).
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt

VARIABLE = "gpuops_dra_feature_gates"

# {gate: default} of the driver v0.5.0.
DRIVER_GATES = {
    "TimeSlicingSettings": False,
    "MPSSupport": False,
    "IMEXDaemonsWithDNSNames": True,
    "PassthroughSupport": False,
    "DynamicMIG": False,
    "NVMLDeviceHealthCheck": False,
    "ComputeDomainCliques": True,
    "CrashOnNVLinkFabricErrors": True,
    "DeviceMetadata": False,
    "FabricManagerPartitioning": False,
    "HostManagedIMEXDaemon": False,
    "DRAListTypeAttributes": False,
    "ConsumableShares": False,
}
# k8s.io/component-base logs/api/v1 gates, which the driver registers beside its own (ContextualLogging is turned
# on by the driver itself).
LOGGING_GATES = {"ContextualLogging": True, "LoggingAlphaOptions": False, "LoggingBetaOptions": True}
KNOWN_GATES = {**DRIVER_GATES, **LOGGING_GATES}

# ValidateFeatureGates: the driver refuses to start with these.
REQUIRES = (("ComputeDomainCliques", "IMEXDaemonsWithDNSNames"), ("DeviceMetadata", "PassthroughSupport"))
EXCLUDES = (
    ("DynamicMIG", "PassthroughSupport"),
    ("DynamicMIG", "MPSSupport"),
    ("PassthroughSupport", "NVMLDeviceHealthCheck"),
    # Not enforced at start, stated on the gate: "MPS sharing is not supported when consumable shares is enabled".
    ("ConsumableShares", "MPSSupport"),
)

# The Kubernetes components whose code reads the DRA gates below.
GATED_COMPONENTS = ("kube-apiserver", "kube-scheduler")


class KubernetesGate:
    """A Kubernetes gate a driver gate needs: NAME, the minor that first has it, the minor from which it is on by
    default (None: off in every minor the collection knows)."""

    def __init__(self, name, first, on_from):
        self.name, self.first, self.on_from = name, first, on_from

    def needed(self, minor):
        """True: to be set on; False: on by default; None: this minor does not have it."""
        if minor < self.first:
            return None
        return self.on_from is None or minor < self.on_from


# {driver gate: the Kubernetes gate its ResourceSlices or claims need}.
KUBERNETES_GATES = {
    # Partitionable devices (sharedCounters, consumesCounters) are how DynamicMIG publishes MIG placements.
    "DynamicMIG": KubernetesGate("DRAPartitionableDevices", 33, 36),
    # Devices with consumable capacity and allowMultipleAllocations.
    "ConsumableShares": KubernetesGate("DRAConsumableCapacity", 34, 36),
    # List-valued attributes; the gate's comment asks for the Kubernetes gate of the same name.
    "DRAListTypeAttributes": KubernetesGate("DRAListTypeAttributes", 36, None),
}


def gate_problems(value):
    """Every problem of a gpuops_dra_feature_gates value ({gate: true/false}), each starting with its key path."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{VARIABLE}: must be a mapping of gate to true or false such as {{TimeSlicingSettings: true}}, got "
            f"{excerpt(value)}"
        ]
    problems = []
    for gate, setting in value.items():
        if gate not in KNOWN_GATES:
            problems.append(
                f"{VARIABLE}.{excerpt(gate, bare=True)}: not a gate of the DRA driver v0.5.0; valid: "
                + ", ".join(sorted(KNOWN_GATES))
            )
        elif not isinstance(setting, bool):
            problems.append(f"{VARIABLE}.{gate}: must be true or false, got {excerpt(setting)}")
    if problems:
        return problems
    gates = effective_gates(value)
    for gate, needed in REQUIRES:
        if gates[gate] and not gates[needed]:
            problems.append(f"{VARIABLE}.{gate}: needs {needed} on too (the driver refuses to start otherwise)")
    for gate, other in EXCLUDES:
        if gates[gate] and gates[other]:
            problems.append(
                f"{VARIABLE}.{gate}: cannot be on together with {other} (the DRA driver v0.5.0 excludes them); turn "
                "one of them off"
            )
    return problems


def effective_gates(value):
    """{gate: on} of every driver gate: the value's, else the driver's default."""
    return {gate: bool((value or {}).get(gate, default)) for gate, default in DRIVER_GATES.items()}


def kubernetes_gates(value, minor):
    """({component: {Kubernetes gate: True}} the cluster needs for the driver gates of VALUE on Kubernetes 1.MINOR,
    [problems]): a driver gate whose Kubernetes gate this minor does not have is a problem."""
    gates = effective_gates(value)
    needed, problems = {}, []
    for driver_gate, kubernetes_gate in KUBERNETES_GATES.items():
        if not gates[driver_gate]:
            continue
        state = kubernetes_gate.needed(minor)
        if state is None:
            problems.append(
                f"{VARIABLE}.{driver_gate}: needs the Kubernetes gate {kubernetes_gate.name}, which Kubernetes "
                f"1.{minor} does not have (it comes with 1.{kubernetes_gate.first}); turn it off or choose an "
                "rke2_version of that minor or later"
            )
        elif state:
            for component in GATED_COMPONENTS:
                needed.setdefault(component, {})[kubernetes_gate.name] = True
    return needed, problems


def chart_gates(value):
    """The chart's featureGates map: every gate the inventory sets, as set (also a default: a driver release that
    changes a default does not change the cluster)."""
    return dict(sorted((value or {}).items()))
