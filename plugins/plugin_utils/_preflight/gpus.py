# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPUs a host carries against the inventory's gpuops_gpu_product and gpuops_gpu_count.

Two sources, in order: what nvidia-smi reports (the nvidia_gpu_info facts), and, on a host where the
driver does not answer yet (a bare host), the NVIDIA display and 3D controllers on the PCI bus, whose
device id the GPU catalog maps to a product. Products are compared through the catalog's one matcher
(find_product), so every printed form of a name (older drivers, GFD labels, aliases) is the same product.
"""

from __future__ import annotations

import re
from collections import Counter

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    extra_products,
    find_product,
    normalize_device_id,
    normalize_product_name,
)

MODEL_GROUP_PREFIX = "gpu_model_"
PCI_SOURCE = "PCI bus"
SMI_SOURCE = "nvidia-smi"


def model_group(product_name):
    """Inventory group of a GPU model: "NVIDIA A100-SXM4-80GB" -> "gpu_model_nvidia_a100_sxm4_80gb"."""
    slug = re.sub(r"[^a-z0-9]+", "_", str(product_name).casefold()).strip("_")
    return MODEL_GROUP_PREFIX + slug


def _lookup(name, device_id, extras):
    """The catalog (or gpuops_gpu_catalog_extra) product of a printed name, else of a PCI device id; None."""
    if name:
        product = find_product(name)
        if product is None:
            key = normalize_product_name(name)
            product = next((p for p in extras if normalize_product_name(p.name) == key), None)
        if product is not None:
            return product
    if device_id:
        product = find_product(device_id=device_id)
        if product is None:
            wanted = normalize_device_id(device_id)
            product = next((p for p in extras if wanted in p.pci_device_ids), None)
        return product
    return None


def _whole_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _found_models(entries):
    """{label: count} of (label, product) entries, e.g. {"NVIDIA A100-SXM4-80GB": 8}."""
    return Counter(label for label, _product in entries)


def _describe(models):
    return ", ".join(f"{count}x {label}" for label, count in sorted(models.items()))


def _smi_entries(gpus, extras):
    entries = []
    for gpu in gpus:
        product = _lookup(gpu.get("name"), gpu.get("pci_device_id"), extras)
        entries.append((product.name if product else str(gpu.get("name")), product))
    return entries


def _pci_entries(pci_gpus, extras):
    entries = []
    for gpu in pci_gpus:
        device_id = normalize_device_id(gpu.get("device_id", "")) or str(gpu.get("device_id"))
        product = _lookup(None, device_id, extras)
        entries.append((product.name if product else f"PCI device {device_id}", product))
    return entries


def check_gpus(host, expected_product, expected_count, gpu_info, pci_gpus=None, catalog_extra=None):
    """What HOST carries compared with the inventory, as a dict.

    GPU_INFO: the nvidia_gpu_info result or facts (gpu_detected/nvidia_gpu_detected, gpus/nvidia_gpus,
    reason/nvidia_gpu_reason). PCI_GPUS: [{address, device_id}] of the NVIDIA display and 3D controllers on
    the PCI bus, read when nvidia-smi detected nothing (None: not read). CATALOG_EXTRA: the inventory's
    gpuops_gpu_catalog_extra.

    Returns {host, source, found_product, found_count, model_group, problems, notes}: problems are lines
    naming host, variable, expected and found (empty when the host is as the inventory says); notes say
    what could not be told; model_group is the group the host belongs in ("" when no GPU was found).
    """
    info = gpu_info or {}
    detected = info.get("gpu_detected", info.get("nvidia_gpu_detected", False))
    gpus = info.get("gpus", info.get("nvidia_gpus")) or []
    reason = info.get("reason", info.get("nvidia_gpu_reason")) or "no GPU listed"
    extras, _problems = extra_products(catalog_extra)  # the plan reports bad entries
    result = {
        "host": host,
        "source": "",
        "found_product": "",
        "found_count": 0,
        "model_group": "",
        "problems": [],
        "notes": [],
    }
    problems, notes = result["problems"], result["notes"]

    count = _whole_number(expected_count)
    if count is None or count < 1:
        problems.append(f"{host}: gpuops_gpu_count: must be the number of GPUs of the host, got {expected_count!r}")
    if not isinstance(expected_product, str) or not expected_product.strip():
        problems.append(f"{host}: gpuops_gpu_product: not set; set the GPU model the host carries")
        expected_product = None

    if detected and gpus:
        result["source"] = SMI_SOURCE
        entries = _smi_entries(gpus, extras)
    elif pci_gpus:
        result["source"] = PCI_SOURCE
        entries = _pci_entries(pci_gpus, extras)
        notes.append(f"{host}: the driver does not answer ({reason}); GPUs read from the PCI bus")
    else:
        found = "nvidia-smi: " + reason
        if pci_gpus is not None:
            found += "; the PCI bus has no NVIDIA display or 3D controller (vendor 0x10de, class 0x0300/0x0302)"
        problems.append(
            f"{host}: no NVIDIA GPU found ({found}); the inventory expects {expected_count}x {expected_product} "
            "(gpuops_gpu_count, gpuops_gpu_product)"
        )
        return result

    models = _found_models(entries)
    result["found_count"] = len(entries)
    source = result["source"]
    if len(models) > 1:
        problems.append(
            f"{host}: found different GPU models ({source}: {_describe(models)}); a node carries one model "
            "(gpuops_gpu_product)"
        )
    if count is not None and count >= 1 and len(entries) != count:
        problems.append(
            f"{host}: gpuops_gpu_count: expected {count}, found {len(entries)} ({source}: {_describe(models)})"
        )
    if len(models) > 1:
        return result

    label, product = entries[0]
    result["found_product"] = label
    expected = _lookup(expected_product, None, extras) if expected_product else None
    if product is not None:
        result["model_group"] = model_group(product.name)
        if expected_product and (expected is None or expected.name != product.name):
            problems.append(f"{host}: gpuops_gpu_product: expected {expected_product}, found {product.name} ({source})")
    elif source == SMI_SOURCE:
        # A product neither the catalog nor gpuops_gpu_catalog_extra knows: its printed names must agree.
        result["model_group"] = model_group(label)
        if expected_product and normalize_product_name(expected_product) != normalize_product_name(label):
            problems.append(f"{host}: gpuops_gpu_product: expected {expected_product}, found {label} ({source})")
    elif expected_product:
        # A device id the catalog lacks tells no product: only the count was compared. nvidia-smi names it
        # once the driver answers, and the next preflight compares the name.
        result["model_group"] = model_group(expected.name if expected else expected_product)
        notes.append(
            f"{host}: {label} is not in the GPU catalog, so the product cannot be told before the driver answers; "
            f"the count was checked and the host is grouped as the inventory's {expected_product}"
        )
    return result


def os_problem(host, distribution, distribution_version, major_version, os_family, supported):
    """A line naming the host's OS when no entry of SUPPORTED ("Debian 12", "Ubuntu 22.04", "RedHat 9")
    matches it, else "". An entry matches by distribution or OS family, and by full or major version."""
    names = {str(distribution), str(os_family)}
    versions = {str(distribution_version), str(major_version)}
    for entry in supported:
        name, _space, version = str(entry).partition(" ")
        if name in names and version in versions:
            return ""
    return (
        f"{host}: {distribution} {distribution_version} ({os_family} family) is not a supported OS; "
        f"supported: {', '.join(map(str, supported))} (preflight_supported_os)"
    )
