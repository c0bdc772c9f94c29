# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which checks run where: from the plan (capacity.json) to one probe per validation pod.

capacity: no pod; the node's allocatable is compared with the plan.
smoke:    per node and planned GPU resource, one pod with one unit that lists its devices.
cuda:     per node, one pod with one unit of the node's first GPU resource that runs a CUDA sample.
sharing:  per node and time-sliced or MPS resource (replicas R > 1), one pod per advertised unit, all at once,
          up to a cap, which then shows whether R pods share each physical device.
          HAMi nodes: one pod per advertised unit (split per GPU), each with 1/split of a GPU's memory, so that
          `split` pods share each GPU. gpushare nodes: N pods of (GiB of one GPU // N) GiB, N the GiB of one GPU
          up to the cap, which gpushare's extender packs onto one GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import (
    FULL_GPU_RESOURCE,
    GPUSHARE,
    GPUSHARE_COUNT_RESOURCE,
    GPUSHARE_MEMORY_RESOURCE,
    HAMI,
    HAMI_MEMORY_RESOURCE,
    MEMORY_SHARING_BACKENDS,
    DeviceExpectation,
    expectation,
    hami_gpu_mib,
    memory_sharing,
)

CAPACITY, SMOKE, CUDA, SHARING = "capacity", "smoke", "cuda", "sharing"
CHECKS = (CAPACITY, SMOKE, CUDA, SHARING)


@dataclass(frozen=True)
class Target:
    """One GPU node of the plan: its inventory host, its Kubernetes node name and its plan entry."""

    host: str
    node: str
    plan: dict


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


def plan_problems(plan):
    """Lines naming what is wrong with a capacity.json content; [] when usable."""
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
    return problems


def _memory_sharing_problems(host, node):
    entry = node.get("memory_sharing")
    if entry is None:
        return []
    where = f"plan.nodes.{host}.memory_sharing"
    if not isinstance(entry, dict) or entry.get("backend") not in MEMORY_SHARING_BACKENDS:
        return [
            f"{where}: must be null or a mapping whose backend is one of {', '.join(MEMORY_SHARING_BACKENDS)}, "
            f"got {entry!r}"
        ]
    resources = node.get("resources") if isinstance(node.get("resources"), dict) else {}
    if entry["backend"] == HAMI:
        split = entry.get("split")
        if not isinstance(split, int) or isinstance(split, bool) or split < 1:
            return [f"{where}.split: must be a whole number of 1 or more, got {split!r}"]
        if hami_gpu_mib(node) is None:
            return [
                f"{where}: the memory of one GPU is unknown (no scheduler_accounts['{HAMI_MEMORY_RESOURCE}'] and "
                f"no memory in the catalog for {node.get('gpu_product')!r}); the sharing pods ask for a share of it"
            ]
    elif not resources.get(GPUSHARE_MEMORY_RESOURCE) or not resources.get(GPUSHARE_COUNT_RESOURCE):
        return [
            f"{where}: gpushare nodes advertise {GPUSHARE_MEMORY_RESOURCE} and {GPUSHARE_COUNT_RESOURCE}, but "
            f"resources has {sorted(resources) or 'none'}"
        ]
    return []


def targets(plan, node_names=None):
    """One Target per planned node, sorted by host; NODE_NAMES maps inventory hosts to node names."""
    node_names = node_names or {}
    problems = plan_problems(plan)
    unknown = sorted(set(node_names) - set((plan or {}).get("nodes") or {})) if not problems else []
    if unknown:
        problems.append(
            f"node_names: {', '.join(unknown)} are not GPU nodes of the plan; valid hosts: "
            f"{', '.join(sorted(plan['nodes'])) or 'none'}"
        )
    if problems:
        raise ValidationInputError(problems)
    return [Target(host, str(node_names.get(host) or host), node) for host, node in sorted(plan["nodes"].items())]


def _gpu_resources(target):
    """The planned resources a validation pod asks one unit of."""
    planned = {resource: count for resource, count in (target.plan.get("resources") or {}).items() if count > 0}
    entry = memory_sharing(target.plan)
    if entry is not None:
        # HAMi registers its split devices as nvidia.com/gpu; gpushare's pods ask for memory, its GPU count is
        # only a node status figure no device plugin hands out.
        wanted = FULL_GPU_RESOURCE if entry["backend"] == HAMI else GPUSHARE_MEMORY_RESOURCE
        return [wanted] if wanted in planned else []
    return sorted(resource for resource in planned if resource != GPUSHARE_COUNT_RESOURCE)


def _gpushare_share(expect, max_pods):
    """EXPECT for N pods that split one GPU's GiB evenly: N is that GiB, at most MAX_PODS."""
    count = min(expect.replicas, max_pods)
    size = expect.replicas // count if count else 0
    return replace(
        expect,
        replicas=count,
        advertised=count,
        slice_size=size,
        sharing=f"gpushare, {GPUSHARE_MEMORY_RESOURCE} {size} GiB per pod",
    )


def smoke_probes(target_list):
    return [
        Probe(SMOKE, target, expectation(target.plan, resource))
        for target in target_list
        for resource in _gpu_resources(target)
    ]


def cuda_probes(target_list):
    probes = []
    for target in target_list:
        resources = _gpu_resources(target)
        if resources:
            probes.append(Probe(CUDA, target, expectation(target.plan, resources[0])))
    return probes


def sharing_groups(target_list, max_pods):
    """One SharingGroup per node and shared resource; at most MAX_PODS pods per group."""
    groups = []
    for target in target_list:
        for resource in _gpu_resources(target):
            expect = expectation(target.plan, resource)
            if expect.backend == GPUSHARE:
                expect = _gpushare_share(expect, max_pods)
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
