# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which checks run where: from the plan (capacity.json) to one probe per validation pod.

capacity: no pod; the node's allocatable is compared with the plan.
dra:      no pod; on a node that offers its GPUs through NVIDIA's DRA driver, its published ResourceSlices are
          compared with the plan's dra.json (dra_slices.py).
smoke:    per node and planned GPU resource, one pod with one unit that lists its devices. DRA nodes: one pod per
          DeviceClass (and MIG profile) the node offers, each with its own claim (dra_claims.py).
cuda:     per node, one pod with one unit of the node's first GPU resource that runs a CUDA sample; on a DRA node
          with a claim for its first kind of device.
sharing:  per node and time-sliced or MPS resource (replicas R > 1), one pod per advertised unit, all at once,
          up to a cap, which then shows whether R pods share each physical device.
          Memory-shared nodes: as their backend splits a unit (module_utils/_sharing). HAMi nodes: one pod per
          advertised unit (split per GPU), each with 1/split of a GPU's memory, so that `split` pods share each
          GPU. gpushare nodes: N pods of (GiB of one GPU // N) GiB, N the GiB of one GPU up to the cap, which
          gpushare's extender packs onto one GPU. DRA nodes with whole GPUs: dra_claims.SHARED_CLAIM_PODS pods that
          share one ResourceClaim, which must put them all on one GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DEVICE_PLUGIN_ALLOCATION,
    DRA_ALLOCATION,
    GPU_ALLOCATIONS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import dra_claims
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import (
    DeviceExpectation,
    expectation,
    memory_sharing,
    shared_unit,
    with_unit,
)

CAPACITY, DRA, SMOKE, CUDA, SHARING = "capacity", "dra", "smoke", "cuda", "sharing"
CHECKS = (CAPACITY, DRA, SMOKE, CUDA, SHARING)


@dataclass(frozen=True)
class Target:
    """One GPU node of the plan: its inventory host, its Kubernetes node name and its plan entry."""

    host: str
    node: str
    plan: dict
    # A DRA node's devices as dra.json plans them ({"driver", "devices"}); None on other nodes.
    dra: dict | None = None


@dataclass(frozen=True)
class Probe:
    """One validation pod: which check, on which node, with one unit of which resource."""

    check: str
    target: Target
    expect: DeviceExpectation
    index: int = 0

    @property
    def key(self):
        return (self.check, self.target.host, self.expect.resource, self.index)


@dataclass(frozen=True)
class SharingGroup:
    """The pods of the sharing check for one node and resource, and whether the cap cut them down."""

    target: Target
    expect: DeviceExpectation
    probes: tuple[Probe, ...]
    wanted: int

    @property
    def capped(self):
        return len(self.probes) < self.wanted


def plan_problems(plan, dra=None):
    """Lines naming what is wrong with a capacity.json content and, for its DRA nodes, the dra.json content DRA;
    [] when usable."""
    if not isinstance(plan, dict) or not isinstance(plan.get("nodes"), dict):
        return ["plan: must be the content of capacity.json, a mapping with 'nodes' (host -> node plan)"]
    problems = []
    for host, node in sorted(plan["nodes"].items()):
        if not isinstance(node, dict):
            problems.append(f"plan.nodes.{host}: must be a mapping with gpu_product, gpu_count, resources, labels")
            continue
        resources = node.get("resources")
        if not isinstance(resources, dict) or not all(isinstance(count, int) for count in resources.values()):
            problems.append(f"plan.nodes.{host}.resources: must map each resource to a whole number, got {resources!r}")
        if not isinstance(node.get("labels", {}), dict):
            problems.append(f"plan.nodes.{host}.labels: must be a mapping of label to value")
        if not node.get("gpu_product"):
            problems.append(f"plan.nodes.{host}.gpu_product: missing; the smoke check compares the product name")
        problems += _memory_sharing_problems(host, node)
        problems += _allocation_problems(host, node, dra)
    return problems


def _allocation_problems(host, node, dra):
    allocation = node.get("gpu_allocation", DEVICE_PLUGIN_ALLOCATION)
    where = f"plan.nodes.{host}.gpu_allocation"
    if allocation not in GPU_ALLOCATIONS:
        return [f"{where}: must be one of {', '.join(GPU_ALLOCATIONS)}, got {allocation!r}"]
    if allocation == DRA_ALLOCATION and host not in ((dra or {}).get("nodes") or {}):
        return [
            f"{where}: dra, but the DRA plan (option dra, the plan's dra.json) has no node {host}; pass the dra.json "
            "of the same plan"
        ]
    return []


def _memory_sharing_problems(host, node):
    entry = node.get("memory_sharing")
    if entry is None:
        return []
    where = f"plan.nodes.{host}.memory_sharing"
    if memory_sharing(node) is None:
        return [
            f"{where}: must be null or a mapping whose backend is one of {', '.join(registry.names())}, got {entry!r}"
        ]
    return registry.of(entry).plan_problems(where, node)


def targets(plan, node_names=None, dra=None):
    """One Target per planned node, sorted by host; NODE_NAMES maps inventory hosts to node names, DRA is the plan's
    dra.json content (its nodes are the plan's DRA nodes)."""
    node_names = node_names or {}
    problems = plan_problems(plan, dra)
    unknown = sorted(set(node_names) - set((plan or {}).get("nodes") or {})) if not problems else []
    if unknown:
        problems.append(
            f"node_names: {', '.join(unknown)} are not GPU nodes of the plan; valid hosts: "
            f"{', '.join(sorted(plan['nodes'])) or 'none'}"
        )
    if problems:
        raise ValidationInputError(problems)
    dra_nodes = (dra or {}).get("nodes") or {}
    return [
        Target(host, str(node_names.get(host) or host), node, _dra_target(dra, dra_nodes, host, node))
        for host, node in sorted(plan["nodes"].items())
    ]


def _dra_target(dra, dra_nodes, host, node):
    if node.get("gpu_allocation") != DRA_ALLOCATION:
        return None
    return {"driver": dra.get("driver"), "devices": list(dra_nodes[host].get("devices") or ())}


def _gpu_resources(target):
    """The planned resources a validation pod asks one unit of."""
    planned = {resource: count for resource, count in (target.plan.get("resources") or {}).items() if count > 0}
    entry = memory_sharing(target.plan)
    if entry is not None:
        wanted = registry.of(entry).pod_resource
        return [wanted] if wanted in planned else []
    # A resource only some node status shows (gpushare's GPU count) is no unit a pod can ask for.
    unallocatable = registry.unallocatable_resources()
    return sorted(resource for resource in planned if resource not in unallocatable)


def _expectations(target):
    """What one smoke pod of TARGET asks for, one per planned resource or, on a DRA node, per DeviceClass."""
    if target.dra is not None:
        return dra_claims.smoke_expectations(target)
    return [expectation(target.plan, resource) for resource in _gpu_resources(target)]


def smoke_probes(target_list):
    return [Probe(SMOKE, target, expect) for target in target_list for expect in _expectations(target)]


def cuda_probes(target_list):
    probes = []
    for target in target_list:
        expectations = _expectations(target)
        if expectations:
            probes.append(Probe(CUDA, target, expectations[0]))
    return probes


def sharing_groups(target_list, max_pods):
    """One SharingGroup per node and shared resource; at most MAX_PODS pods per group."""
    groups = []
    for target in target_list:
        if target.dra is not None:
            shared = dra_claims.shared_expectation(target)
            if shared is not None:
                probes = tuple(Probe(SHARING, target, shared, index) for index in range(shared.replicas))
                groups.append(SharingGroup(target, shared, probes, shared.replicas))
            continue
        for resource in _gpu_resources(target):
            expect = expectation(target.plan, resource)
            backend = registry.get(expect.backend)
            if backend is not None:
                expect = with_unit(expect, backend.sharing_check_unit(shared_unit(expect), max_pods))
            if expect.replicas <= 1:
                continue
            count = min(expect.advertised, max_pods)
            probes = tuple(Probe(SHARING, target, expect, index) for index in range(count))
            groups.append(SharingGroup(target, expect, probes, expect.advertised))
    return groups


def capped_note(group: SharingGroup) -> str | None:
    if not group.capped:
        return None
    return (
        f"ran {len(group.probes)} of the {group.wanted} pods the node advertises (sharing_max_pods); checked that "
        f"no device is shared by more than {group.expect.replicas} pods, not that each is shared by exactly "
        f"{group.expect.replicas}"
    )
