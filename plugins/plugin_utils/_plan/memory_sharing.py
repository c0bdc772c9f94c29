# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU sharing by memory (gpuops_memory_sharing) in the plan: what every backend shares, then the backend's own part.

Here: the variable is a mapping, its backend is one of the registry's (module_utils/_sharing/registry.py), and
memory sharing cannot sit beside time-slicing, MPS or MIG on one node. Each backend's keys, defaults, capacity,
labels and extenders are its own object's (_sharing/hami.py, _sharing/gpushare.py).
"""

from __future__ import annotations

import difflib

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import VARIABLE, SharingCapacityError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import CapacityError


def _suggest(word, valid):
    close = difflib.get_close_matches(str(word), list(valid), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'? " if close else ""


def _or(words):
    return " or ".join(words)


def _backend_problems(value):
    names = registry.names()
    if "backend" not in value:
        return [f"{VARIABLE}.backend: is not set; valid: {', '.join(names)}"]
    backend = value["backend"]
    if registry.get(backend) is None:
        standings = _or(f"{each.name} ({each.standing})" for each in registry.backends())
        return [f"{VARIABLE}.backend: unknown backend {excerpt(backend)}; {_suggest(backend, names)}valid: {standings}"]
    return []


def _other_backends_keys(value, backend):
    """A key of another backend set beside BACKEND: one problem each, naming the backends that take it."""
    problems = []
    for key in registry.variable_keys():
        owners = _or(registry.key_owners(key))
        if key in value and owners and key not in backend.keys:
            problems.append(
                f"{VARIABLE}.{key}: applies to backend {owners} only; {backend.other_keys_reason}: remove {key} or "
                f"use backend {owners}"
            )
    return problems


def lint_memory_sharing(value) -> list[str]:
    """Every problem of a gpuops_memory_sharing value, each starting with its key path. None: no memory sharing."""
    if value is None:
        return []
    if not isinstance(value, dict):
        examples = _or(backend.example for backend in registry.backends())
        return [
            f"{VARIABLE}: must be a mapping such as {examples}, got {type(value).__name__}; omit {VARIABLE} for no "
            "memory sharing"
        ]
    keys = registry.variable_keys()
    problems = [
        f"{VARIABLE}.{excerpt(key, bare=True)}: unknown key; {_suggest(key, keys)}valid keys: {', '.join(keys)}"
        for key in value
        if key not in keys
    ]
    problems += _backend_problems(value)
    backend = registry.get(value.get("backend"))
    if backend is not None:
        return problems + _other_backends_keys(value, backend) + backend.lint_keys(value)
    # Without a known backend, every key set is still checked by the backend that takes it.
    for each in registry.backends():
        problems += each.lint_keys(value)
    return problems


def normalize_memory_sharing(value):
    """A valid gpuops_memory_sharing with its backend's defaults filled in, or None."""
    if value is None:
        return None
    return registry.of(value).normalize(value)


def conflict_problems(value, time_slicing, mps, mig_config, mig_gpus) -> list[str]:
    """Why memory sharing cannot run on a node with these other intents (MIG_GPUS: indexes of MIG-enabled GPUs)."""
    if value is None:
        return []
    why = "memory sharing replaces NVIDIA's device plugin on the node, which is what"
    problems = []
    if time_slicing is not None:
        problems.append(
            f"cannot be combined with gpuops_time_slicing on one node: {why} time-slices; remove one of them"
        )
    if mps is not None:
        problems.append(f"cannot be combined with gpuops_mps on one node: {why} runs MPS; remove one of them")
    if mig_gpus:
        problems.append(
            f"cannot be combined with gpuops_mig_config {mig_config}, which enables MIG on GPU "
            f"{', '.join(map(str, mig_gpus))}: memory sharing splits whole GPUs; use all-disabled or remove "
            "gpuops_mig_config"
        )
    return problems


def _memory_mib(product):
    if product.memory_mib:
        return product.memory_mib
    if product.origin == "catalog":
        way_out = "record it in the catalog from the product's nvidia-smi output (docs/gpu-catalog.md)"
    else:
        way_out = "describe the product in gpuops_gpu_catalog_extra (name, memory_mib, compute_capability)"
    raise CapacityError(
        f"memory sharing needs the memory of {product.name}, which the GPU catalog does not record; {way_out}"
    )


def sharing_capacity(product, count, sharing):
    """(resources, scheduler_accounts) of a node of COUNT GPUS of PRODUCT under a normalized SHARING.

    Raises CapacityError when the product's memory is unknown or the backend cannot serve it.
    """
    memory_mib = _memory_mib(product)
    try:
        return registry.of(sharing).capacity(memory_mib, count, sharing)
    except SharingCapacityError as error:
        raise CapacityError(str(error)) from error


def sharing_labels(sharing):
    """The node labels that select the backend's device plugin and turn the GPU Operator's off."""
    return registry.of(sharing).labels(sharing)


def describe_sharing(sharing):
    """The SHARING column of the plan's table."""
    return "-" if sharing is None else registry.of(sharing).describe(sharing)


def scheduler_extenders(sharings):
    """The KubeSchedulerConfiguration extenders the cluster needs for SHARINGS (normalized values): those of each
    backend some node uses (gpushare's; HAMi runs its own scheduler), as new copies."""
    used = {sharing["backend"] for sharing in sharings if sharing}
    return [
        extender
        for backend in registry.backends()
        if backend.name in used
        for extender in backend.scheduler_extenders()
    ]
