# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes feature gates the rke2 role passes to RKE2's components (rke2_feature_gates).

The value maps a component to {gate: true/false}; by default it is the plan's dra.json kubernetes_feature_gates, the
gates NVIDIA's DRA driver's gates need on the cluster's Kubernetes minor (plugin_utils/_plan/dra_gates.py). They go
to a config.yaml.d drop-in as `<component>-arg+` entries of `feature-gates+=...`: RKE2 reads config.yaml.d after
config.yaml and appends a `key+` value to the key's list (k3s pkg/configfilearg/parser.go), and an argument
`feature-gates+=` adds a flag beside RKE2's own default instead of replacing it (k3s pkg/util/args.go GetArgs);
component-base merges every --feature-gates flag a component is given.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt

VARIABLE = "rke2_feature_gates"
# The component, the config.yaml key of its arguments, and whether only servers run it.
COMPONENTS = {
    "kube-apiserver": ("kube-apiserver-arg", True),
    "kube-scheduler": ("kube-scheduler-arg", True),
    "kube-controller-manager": ("kube-controller-manager-arg", True),
    "kubelet": ("kubelet-arg", False),
}
# Kubernetes feature names are CamelCase words (k8s.io/component-base featuregate.Feature).
_GATE = re.compile(r"[A-Z][A-Za-z0-9]*")


def problems(value):
    """What is wrong with an rke2_feature_gates value, one line each; [] when RKE2 can take it."""
    if value is None or value == {}:
        return []
    if not isinstance(value, dict):
        return [f"must be a mapping of component to {{gate: true or false}}, got {excerpt(value)}"]
    found = []
    for component, gates in value.items():
        if component not in COMPONENTS:
            found.append(f"{excerpt(component)} is not a component; valid: {', '.join(COMPONENTS)}")
        elif not isinstance(gates, dict):
            found.append(f"{component}: must be a mapping of gate to true or false, got {excerpt(gates)}")
        else:
            for gate, setting in gates.items():
                if not isinstance(gate, str) or not _GATE.fullmatch(gate):
                    found.append(f"{component}: {excerpt(gate)} is not a gate name such as DRAConsumableCapacity")
                elif not isinstance(setting, bool):
                    found.append(f"{component}.{gate}: must be true or false, got {excerpt(setting)}")
    return found


def settings(value, role):
    """The drop-in's settings for a host of ROLE (server or agent): {`<component>-arg+`: [`feature-gates+=A=true,...`]}
    for the components that run there and have gates; {} when none."""
    drop_in = {}
    for component, gates in sorted((value or {}).items()):
        key, server_only = COMPONENTS[component]
        if gates and (role == "server" or not server_only):
            pairs = ",".join(f"{gate}={str(bool(setting)).lower()}" for gate, setting in sorted(gates.items()))
            drop_in[key + "+"] = [f"feature-gates+={pairs}"]
    return drop_in
