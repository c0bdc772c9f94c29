# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bounds of the plan's intent that no linter of one sharing mode owns: what the Kubernetes API server stores
(quantities, label values) and what NVML reports of a GPU (its name, its memory).

Each linter bounds its own numbers where it reads them (time_slicing.py, mps.py, device_plugin.py,
memory_sharing.py, _gpu/mig_configs.py, _gpu/mig_layout.py); docs/plan.md lists every bound with its source.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import (
    MAX_MEMORY_MIB,
    MAX_PRODUCT_NAME_LENGTH,
)

# The kubelet advertises each device-plugin resource as int64(devices.Len()) (kubernetes v1.36
# pkg/kubelet/cm/devicemanager/manager.go GetCapacity), and node status holds it as a resource.Quantity:
# no node advertises more of one extended resource than an int64 holds.
INT64_MAX = 2**63 - 1
# Kubernetes label values (k8s.io/apimachinery pkg/util/validation/validation.go IsValidLabelValue).
LABEL_VALUE_MAX = 63
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
PRODUCT = "gpuops_gpu_product"
CATALOG_EXTRA = "gpuops_gpu_catalog_extra"


def label_value_problem(value):
    """Why VALUE cannot be a Kubernetes label value (apimachinery validation.IsValidLabelValue), or None."""
    if len(value) > LABEL_VALUE_MAX:
        return f"is {len(value)} characters long, more than {LABEL_VALUE_MAX}"
    if value and not _LABEL_VALUE.fullmatch(value):
        return (
            "must start and end with a letter or digit and hold only letters, digits, '-', '_' and '.' "
            "(no spaces or '/')"
        )
    return None


def _name_problem(name):
    if isinstance(name, str) and len(name.strip()) > MAX_PRODUCT_NAME_LENGTH:
        return (
            f"is {len(name.strip())} characters long, and nvidia-smi prints a product name of at most "
            f"{MAX_PRODUCT_NAME_LENGTH} (NVML's name buffer), got {excerpt(name)}"
        )
    return None


def _memory_problem(memory_mib):
    if isinstance(memory_mib, int) and not isinstance(memory_mib, bool) and memory_mib > MAX_MEMORY_MIB:
        return (
            f"must be at most {MAX_MEMORY_MIB} MiB (NVML reports a GPU's memory in bytes as an unsigned 64-bit "
            f"integer), got {excerpt(memory_mib)}"
        )
    return None


def intent_bound_problems(intent):
    """[(variable, message)] for a host's product name or gpuops_gpu_catalog_extra beyond what NVML reports.

    The catalog checks their form (catalog.extra_products); these are the bounds on top of it.
    """
    problems = []
    problem = _name_problem(intent.get(PRODUCT))
    if problem:
        problems.append((PRODUCT, problem))
    extras = intent.get(CATALOG_EXTRA)
    for index, entry in enumerate(extras if isinstance(extras, list) else ()):
        if not isinstance(entry, dict):
            continue
        for key, check in (("name", _name_problem), ("memory_mib", _memory_problem)):
            problem = check(entry.get(key))
            if problem:
                problems.append((f"{CATALOG_EXTRA}[{index}].{key}", problem))
    return problems
