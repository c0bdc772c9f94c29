# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a node offers its GPUs (gpuops_gpu_allocation), and what NVIDIA's DRA driver refuses on a DRA node.

Each check returns [(variable, message)] for the plan to name the host with. The versions come from
kubernetes-sigs/dra-driver-nvidia-gpu docs/prerequisites.md at 0807eed0e6 (docs/dra.md lists them).
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.driver_support import BRANCH_VARIABLE
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_ALLOCATION as DEVICE_PLUGIN,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import DRA_ALLOCATION as DRA
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import GPU_ALLOCATIONS as ALLOCATIONS
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan import dra_gates
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.documents import canonical_json
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentError, hosts_text, split_path

VARIABLE = "gpuops_gpu_allocation"
KUBERNETES_VARIABLE = "rke2_version"
# resource.k8s.io/v1 is GA from 1.34; the driver asks for 1.34.2 for GPU allocation.
MIN_KUBERNETES = (1, 34, 2)
# GPU allocation needs driver 565 or later (570.158.01 for ComputeDomains, which the collection does not enable).
MIN_DRIVER_BRANCH = 565
_RKE2_VERSION = re.compile(r"v(\d+)\.(\d+)\.(\d+)\+rke2r\d+")
_REMOVE_OR_SWITCH = f"remove it, or set {VARIABLE} {DEVICE_PLUGIN} on the node"


def allocation_problem(value):
    """Why VALUE is not a gpuops_gpu_allocation, or None (unset is the device plugin)."""
    if value is None or value in ALLOCATIONS:
        return None
    return f"{excerpt(value)} is not valid; valid: {', '.join(ALLOCATIONS)} (how the node offers its GPUs)"


def kubernetes_version(rke2_version):
    """(major, minor, patch) of the Kubernetes an RKE2 release tag ships, None for anything else (the rke2 role's
    own check names a bad tag)."""
    match = _RKE2_VERSION.fullmatch(str(rke2_version))
    return tuple(int(part) for part in match.groups()) if match else None


def version_problems(branch, rke2_version):
    """The driver branch and Kubernetes version a DRA node would run, against the DRA driver's minimums. A value
    that is no branch or no RKE2 tag is left to the checks that own it."""
    problems = []
    kubernetes = kubernetes_version(rke2_version)
    if kubernetes is not None and kubernetes < MIN_KUBERNETES:
        minimum = ".".join(map(str, MIN_KUBERNETES))
        problems.append(
            (
                KUBERNETES_VARIABLE,
                f"{rke2_version} is Kubernetes {'.'.join(map(str, kubernetes))}; NVIDIA's DRA driver allocates GPUs "
                f"from Kubernetes {minimum} on (resource.k8s.io/v1): choose v{minimum}+rke2r1 or later, or set "
                f"{VARIABLE} {DEVICE_PLUGIN}",
            )
        )
    text = str(branch).strip()
    if text.isdigit() and int(text) < MIN_DRIVER_BRANCH:
        problems.append(
            (
                BRANCH_VARIABLE,
                f"branch {text} is too old for NVIDIA's DRA driver, which allocates GPUs with driver branch "
                f"{MIN_DRIVER_BRANCH} or later; choose {MIN_DRIVER_BRANCH} or later (580 is a long-term support "
                f"branch), or set {VARIABLE} {DEVICE_PLUGIN}",
            )
        )
    return problems


def sharing_problems(plugin_sharing, memory_sharing, memory_sharing_variable):
    """The device plugin's sharing and memory sharing set on a DRA node: neither applies there.

    PLUGIN_SHARING: {variable: value} of the device plugin's ways to share a GPU (None: unset)."""
    problems = [
        (
            variable,
            f"applies to NVIDIA's device plugin, which does not run on a node with {VARIABLE} {DRA}; there each "
            "ResourceClaim chooses its sharing (a GpuConfig with time-slicing or MPS, with TimeSlicingSettings or "
            f"MPSSupport on in {dra_gates.VARIABLE}): {_REMOVE_OR_SWITCH}",
        )
        for variable, value in plugin_sharing.items()
        if value is not None
    ]
    if memory_sharing is not None:
        problems.append(
            (
                memory_sharing_variable,
                f"replaces NVIDIA's device plugin on the node, and {VARIABLE} {DRA} offers its GPUs through the DRA "
                f"driver instead: a node offers its GPUs one way; {_REMOVE_OR_SWITCH}",
            )
        )
    return problems


def mig_problems(product, mig_config, mig_manager, feature_gates):
    """MIG settings of a DRA node that the DRA driver or the plan cannot serve. FEATURE_GATES: the cluster's
    gpuops_dra_feature_gates (valid)."""
    if product.mig is None:
        return []
    if dra_gates.effective_gates(feature_gates)["DynamicMIG"]:
        conflict = (
            f"; with it, the driver destroys at start the MIG devices it did not create, so gpuops_mig_config "
            f"{excerpt(mig_config)} would be undone"
            if mig_config is not None
            else ""
        )
        return [
            (
                f"{dra_gates.VARIABLE}.DynamicMIG",
                f"the node's {product.name} GPUs are MIG-capable, and the plan does not predict yet the "
                f"partitionable devices DynamicMIG publishes for them{conflict}; turn DynamicMIG off and give the "
                "node a gpuops_mig_config (the mig role creates the MIG devices the driver then publishes)",
            )
        ]
    if mig_config is not None and mig_manager == "operator":
        return [
            (
                "gpuops_mig_manager",
                f"operator: the GPU Operator's mig-manager lets NVML place each MIG device, and a DRA device's name "
                f"carries its placement, so the plan could not say what the node publishes; use gpuops_mig_manager "
                f"host (the mig role places them as planned), or set {VARIABLE} {DEVICE_PLUGIN} on the node",
            )
        ]
    return []


def cluster_feature_gates(nodes, errors):
    """gpuops_dra_feature_gates of NODES ({host: intent}): valid, and one value for the cluster (the DRA driver's
    chart takes one map); hosts that leave it unset take the others'. Problems are added to ERRORS; None when any."""
    values, problems_of = {}, {}
    for host, intent in nodes.items():
        value = intent.get(dra_gates.VARIABLE)
        if value is None:
            continue
        key = canonical_json(value)
        if key not in problems_of:
            problems_of[key] = dra_gates.gate_problems(value)
        errors.extend(IntentError(host, *split_path(problem, dra_gates.VARIABLE)) for problem in problems_of[key])
        values.setdefault(key, (value, []))[1].append(host)
    if any(problems_of.values()):
        return None
    if len(values) > 1:
        found = "; ".join(f"{excerpt(value)} on {hosts_text(hosts)}" for value, hosts in values.values())
        message = f"must be the same on every GPU node (the DRA driver's chart takes one map); found {found}"
        errors.extend(IntentError(host, dra_gates.VARIABLE, message) for _v, hosts in values.values() for host in hosts)
        return None
    return next(iter(values.values()), ({}, []))[0]


def cluster_kubernetes_gates(nodes, dra_hosts, feature_gates, errors):
    """{component: {Kubernetes gate: True}} that the Kubernetes minors of DRA_HOSTS need for FEATURE_GATES (the
    cluster's valid gpuops_dra_feature_gates, None when invalid). A driver gate a minor lacks is an error on each DRA
    host of that minor, added to ERRORS."""
    if feature_gates is None:
        return {}
    by_minor = {}
    for host in dra_hosts:
        version = kubernetes_version(nodes[host].get(KUBERNETES_VARIABLE, ""))
        if version is not None:
            by_minor.setdefault(version[1], []).append(host)
    needed = {}
    for minor, hosts in sorted(by_minor.items()):
        gates, problems = dra_gates.kubernetes_gates(feature_gates, minor)
        errors.extend(
            IntentError(host, *split_path(problem, dra_gates.VARIABLE)) for problem in problems for host in hosts
        )
        for component, names in gates.items():
            needed.setdefault(component, {}).update(names)
    return {component: dict(sorted(names.items())) for component, names in sorted(needed.items())}
