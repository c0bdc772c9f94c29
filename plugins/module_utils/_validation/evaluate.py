# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pass or fail, with a reason a person can act on, for each check from what its pods reported."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import RESOURCE_PREFIX
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import capped_note
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import (
    KIND_MIG,
    products_match,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.nvsmi import parse_listing

CUDA_PASSED = "Test PASSED"
# Lines of a termination message quoted in a reason.
QUOTED_LINES = 3


@dataclass
class Verdict:
    passed: bool
    reason: str
    devices: list = field(default_factory=list)


def _quote(message):
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    if not lines:
        return "an empty termination message"
    shown = " | ".join(lines[-QUOTED_LINES:])
    return f"'{shown}'" if len(lines) <= QUOTED_LINES else f"'... {shown}'"


def unfinished(outcome, timeout):
    return Verdict(False, f"no result within {timeout} s: {outcome.state}")


def _exit_problem(outcome):
    if outcome.exit_code is None:
        return outcome.state
    if outcome.exit_code != 0:
        return f"exit code {outcome.exit_code}, {_quote(outcome.message)}"
    return None


def smoke(expect, outcome):
    """One unit of EXPECT must show exactly one device of the right kind and product."""
    problem = _exit_problem(outcome)
    if problem:
        return Verdict(False, problem)
    listing = parse_listing(outcome.message)
    devices = [mig.uuid for mig in listing.mig_devices] or [gpu.uuid for gpu in listing.gpus]
    problems = []
    if len(listing.gpus) != 1:
        problems.append(f"{len(listing.gpus)} GPU lines")
    if expect.kind == KIND_MIG:
        profiles = [mig.profile for mig in listing.mig_devices]
        if profiles != [expect.mig_profile]:
            problems.append(f"MIG devices {profiles or 'none'}")
    elif listing.mig_devices:
        problems.append(f"{len(listing.mig_devices)} MIG devices")
    wrong = [gpu.name for gpu in listing.gpus if not products_match(expect.product, gpu.name)]
    if wrong:
        problems.append(f"product {', '.join(sorted(set(wrong)))}")
    # A DRA claim is pinned to one published device: the pod must see that one, not another of the node's.
    if expect.uuid and not problems and devices != [expect.uuid]:
        problems.append(f"device {', '.join(devices) or 'none'}")
    if problems:
        return Verdict(
            False,
            f"expected {expect.describe()}, found {'; '.join(problems)} in {_quote(outcome.message)}",
            devices,
        )
    return Verdict(True, f"sees {expect.describe()}", devices)


def cuda(outcome):
    problem = _exit_problem(outcome)
    if problem:
        return Verdict(False, problem)
    if CUDA_PASSED not in outcome.message:
        return Verdict(False, f"exit code 0 but no '{CUDA_PASSED}' in {_quote(outcome.message)}")
    return Verdict(True, f"exit code 0, '{CUDA_PASSED}'")


def _ranges(indexes):
    """[0, 1, 2, 5] -> "0-2, 5"."""
    spans = []
    for index in indexes:
        if spans and index == spans[-1][1] + 1:
            spans[-1][1] = index
        else:
            spans.append([index, index])
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in spans)


def _overlap(outcomes):
    """Whether every pod ran at the same time (RFC 3339 UTC stamps of one clock compare as text)."""
    starts = [outcome.started_at for outcome in outcomes if outcome.started_at]
    ends = [outcome.finished_at for outcome in outcomes if outcome.finished_at]
    return bool(starts) and bool(ends) and max(starts) <= min(ends)


def sharing(group, outcomes):
    """GROUP's pods all passed smoke and each device was seen by exactly `replicas` pods (at most, when capped)."""
    replicas = group.expect.replicas
    failures, seen = {}, Counter()
    for probe, outcome in zip(group.probes, outcomes):
        verdict = smoke(group.expect, outcome) if outcome.finished else Verdict(False, outcome.state)
        if not verdict.passed:
            failures.setdefault(verdict.reason, []).append(probe.index)
        seen.update(verdict.devices[:1])
    devices = sorted(seen)
    note = capped_note(group)
    if failures:
        # Pods that failed the same way are named once: "pods 0, 1, 2: <reason>".
        shown = "; ".join(
            f"pod{'s' if len(indexes) > 1 else ''} {_ranges(indexes)}: {reason}"
            for reason, indexes in list(failures.items())[:QUOTED_LINES]
        )
        more = f"; and {len(failures) - QUOTED_LINES} other reasons" if len(failures) > QUOTED_LINES else ""
        count = sum(len(indexes) for indexes in failures.values())
        return Verdict(False, f"{count} of {len(group.probes)} pods failed: {shown}{more}", devices)
    wrong = {uuid: count for uuid, count in seen.items() if count > replicas or (not note and count != replicas)}
    if wrong:
        counts = ", ".join(f"{uuid} by {count}" for uuid, count in sorted(wrong.items()))
        hint = "" if _overlap(outcomes) else " (the pods did not all run at the same time: raise sharing_hold_seconds)"
        return Verdict(False, f"expected each device shared by {replicas} pods, found {counts}{hint}", devices)
    text = f"{len(group.probes)} pods shared {len(devices)} devices, {replicas} per device ({group.expect.sharing})"
    return Verdict(True, f"{text}; {note}" if note else text, devices)


def gpu_resource_domains():
    """Domains of the GPU resources a node's allocatable is searched in for ones the plan lacks: NVIDIA's, then
    those of the memory-sharing backends' device plugins (HAMi's nvidia.com/, gpushare's aliyun.com/)."""
    return tuple(dict.fromkeys((RESOURCE_PREFIX, *registry.resource_domains())))


def capacity_scope(expected):
    """The resources the capacity check compares, for people: "nvidia.com/*" or "aliyun.com/*, nvidia.com/*"."""
    all_domains = gpu_resource_domains()
    domains = {domain for domain in all_domains if any(name.startswith(domain) for name in expected)}
    domains.add(RESOURCE_PREFIX)
    domains.update(name for name in expected if not name.startswith(all_domains))
    return ", ".join(f"{domain}*" if domain.endswith("/") else domain for domain in sorted(domains))


def capacity(expected, allocatable):
    """Compare every resource the plan's RESOURCES name with a node's allocatable, and look for GPU resources
    (nvidia.com/, aliyun.com/) the node advertises beyond the plan."""
    found, domains = {}, gpu_resource_domains()
    for name, value in (allocatable or {}).items():
        if name in expected or name.startswith(domains):
            try:
                found[name] = int(str(value))
            except ValueError:
                found[name] = value
    problems = [
        f"{name} expected {count}, found {found.get(name, 'none')}"
        for name, count in sorted(expected.items())
        if found.get(name) != count
    ]
    # The kubelet keeps a resource a plugin stopped advertising at 0: only a non-zero one is extra.
    problems += [
        f"{name} not planned, found {count}" for name, count in sorted(found.items()) if name not in expected and count
    ]
    summary = ", ".join(f"{name}={count}" for name, count in sorted(expected.items())) or "no GPU resource"
    if problems:
        return Verdict(False, "; ".join(problems))
    return Verdict(True, f"allocatable equals the plan: {summary}")
