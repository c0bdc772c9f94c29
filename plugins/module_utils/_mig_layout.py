"""MIG layouts: can a set of GPU instances really be created on a product, and in which order.

A layout can fit by compute slices and still not be placeable: every profile may only start at the
memory slices `nvidia-smi mig -lgipp` lists, and instances may not overlap. The driver picks the
placement itself when instances are created one by one, so creating the largest first matters
(a100-sxm4-40gb/mig-cgi-19-19-14-9-error-insufficient-resources-nvidia-guide.txt: 1g,1g,2g then 3g
fails with "Insufficient Resources", while 3g first succeeds).

Also the mig-parted v1 configuration format (NVIDIA/mig-parted api/spec/v1): built-in configs per
product, a strict lint of a user's document, and the entry that applies to one GPU.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu_catalog import normalize_device_id


class MigLayoutError(ValueError):
    """A layout or config that cannot work; str() is one sentence: what is wrong and what is valid."""


@dataclass(frozen=True)
class PlacedInstance:
    profile: object  # GiProfile
    start: int

    @property
    def size(self):
        return self.profile.memory_slices


def _describe(counts):
    return " + ".join(f"{name} x{count}" for name, count in counts)


def _check_request(product, mig_devices):
    """Validated ((profile, count), ...) with count > 0, in the catalog's profile order."""
    if not isinstance(mig_devices, dict):
        raise MigLayoutError(f"mig-devices must be a mapping of profile name to count, got {mig_devices!r}")
    for name, count in mig_devices.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MigLayoutError(f"profile {name}: count must be a non-negative integer, got {count!r}")
    wanted = {name: count for name, count in mig_devices.items() if count}
    if product.mig is None:
        if wanted:
            raise MigLayoutError(f"{product.name} does not support MIG; valid: mig-enabled false without mig-devices")
        return ()
    valid = ", ".join(profile.name for profile in product.mig.profiles)
    for name in wanted:
        if product.mig.profile(name) is None:
            raise MigLayoutError(f"unknown profile {name} for {product.name}; valid: {valid}")
    request = tuple((p, wanted[p.name]) for p in product.mig.profiles if p.name in wanted)
    for profile, count in request:
        if count > profile.max_instances:
            raise MigLayoutError(
                f"profile {profile.name}: {count} instances requested, at most {profile.max_instances} fit on "
                f"{product.name}"
            )
    media = [p.name for p, _count in request if p.media_extensions]
    if len(media) > 1:
        # Each "+me" instance takes the GPU's only JPEG and OFA engines (GUIDE: "a single profile can
        # include media extensions"), so two different "+me" profiles cannot coexist.
        raise MigLayoutError(
            f"profiles {' and '.join(media)} both take the media extensions of {product.name}; valid: one +me instance"
        )
    return request


def _place(instances, memory_slices):
    """Starts for instances (largest first) with no overlap, or None. Exact backtracking over <= 8 slices."""
    starts = []

    def search(index, used):
        if index == len(instances):
            return True
        profile = instances[index]
        # Identical profiles take increasing starts: the same arrangement is not tried twice.
        floor = starts[-1] if index and instances[index - 1] is profile else -1
        for start in profile.placements:
            mask = ((1 << profile.memory_slices) - 1) << start
            if start <= floor or start + profile.memory_slices > memory_slices or used & mask:
                continue
            starts.append(start)
            if search(index + 1, used | mask):
                return True
            starts.pop()
        return False

    return tuple(starts) if search(0, 0) else None


def _largest_first(request):
    ordered = sorted(request, key=lambda item: (-item[0].memory_slices, -item[0].compute_slices))
    return [profile for profile, count in ordered for _instance in range(count)]


def _best_placeable_subset(request, memory_slices):
    """The placeable sub-layout with the most compute slices (ties: more instances), for error messages."""
    best, best_key = (), (-1, -1)

    def walk(index, chosen):
        nonlocal best, best_key
        if index == len(request):
            key = (sum(p.compute_slices * n for p, n in chosen), sum(n for _profile, n in chosen))
            if key > best_key and _place(_largest_first(chosen), memory_slices) is not None:
                best, best_key = tuple(chosen), key
            return
        profile, count = request[index]
        for taken in range(count, -1, -1):
            walk(index + 1, chosen + ([(profile, taken)] if taken else []))

    walk(0, [])
    return best


@functools.lru_cache(maxsize=4096)
def _plan_cached(product, request_items):
    request = tuple((product.mig.profile(name), count) for name, count in request_items)
    request = tuple(sorted(request, key=lambda item: (-item[0].memory_slices, -item[0].compute_slices)))
    mig = product.mig
    instances = _largest_first(request)
    starts = _place(instances, mig.memory_slices)
    if starts is not None:
        # _place returns one start per instance. map, unlike zip(strict=), also runs on Python 3.9 targets.
        return tuple(map(PlacedInstance, instances, starts)), None
    shown = _describe((p.name, n) for p, n in request)
    compute = sum(p.compute_slices * n for p, n in request)
    memory = sum(p.memory_slices * n for p, n in request)
    subset = _describe((p.name, n) for p, n in _best_placeable_subset(request, mig.memory_slices))
    if compute > mig.compute_slices:
        reason = f"needs {compute} compute slices but {product.name} has {mig.compute_slices}"
    elif memory > mig.memory_slices:
        reason = (
            f"uses {compute} of {mig.compute_slices} compute slices but cannot be placed: it needs {memory} "
            f"memory slices and {product.name} has {mig.memory_slices}"
        )
    else:
        rules = "; ".join(
            f"{p.name} starts at {{{','.join(map(str, p.placements))}}} and takes {p.memory_slices}"
            for p, _count in request
        )
        reason = (
            f"uses {compute} of {mig.compute_slices} compute slices but cannot be placed: {rules} of the "
            f"{mig.memory_slices} memory slices of {product.name} and no arrangement avoids an overlap"
        )
    return None, f"{shown} {reason}; valid: {subset or 'fewer instances'}"


def plan_layout(product, mig_devices):
    """One valid creation order (largest first) with placements, or MigLayoutError."""
    request = _check_request(product, mig_devices)
    if not request:
        return ()
    plan, error = _plan_cached(product, tuple((p.name, n) for p, n in request))
    if error:
        raise MigLayoutError(error)
    return plan


# all-balanced per mig-parted deployments/systemd/config-default.yaml, keyed by that file's device-filters.
_BALANCED = (
    (("0x20B010DE", "0x20B110DE", "0x20F110DE"), {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
    (("0x20B210DE", "0x20B510DE", "0x233010DE", "0x233110DE"), {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    (("0x232110DE",), {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}),
    (("0x233510DE", "0x233B10DE"), {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
    (("0x20B710DE",), {"1g.6gb": 2, "2g.12gb": 1}),
)


def builtin_config_name(profile):
    """mig-parted names the config of a "+me" profile with a dot: all-1g.10gb.me."""
    return "all-" + profile.name.replace("+", ".")


def builtin_mig_configs(product):
    """The named configs the collection offers for a product, in mig-parted v1 entries."""
    configs = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    if product.mig is None:
        return configs
    configs["all-enabled"] = [{"devices": "all", "mig-enabled": True, "mig-devices": {}}]
    for profile in product.mig.profiles:
        devices = {profile.name: profile.max_instances}
        configs[builtin_config_name(profile)] = [{"devices": "all", "mig-enabled": True, "mig-devices": devices}]
    for device_ids, layout in _BALANCED:
        if set(device_ids) & set(product.pci_device_ids):
            configs["all-balanced"] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(layout)}]
    return configs


_DOC_KEYS = ("version", "mig-configs")
_ENTRY_KEYS = ("devices", "device-filter", "mig-devices", "mig-enabled")
_DEVICE_ID = re.compile(r"0x[0-9A-Fa-f]{8}")


def _lint_entry(path, entry):
    if not isinstance(entry, dict):
        return [f"{path}: must be a mapping with keys {', '.join(_ENTRY_KEYS)}"]
    errors = [
        f"{path}.{key}: unknown key; valid keys: {', '.join(_ENTRY_KEYS)}" for key in entry if key not in _ENTRY_KEYS
    ]
    errors += [f"{path}: missing required key {key}" for key in ("devices", "mig-enabled") if key not in entry]
    devices = entry.get("devices", "all")
    if devices != "all" and not (
        isinstance(devices, list)
        and devices
        and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in devices)
    ):
        errors.append(f'{path}.devices: must be "all" or a non-empty list of GPU indexes (integers >= 0)')
    enabled = entry.get("mig-enabled", True)
    if not isinstance(enabled, bool):
        errors.append(f"{path}.mig-enabled: must be true or false, got {enabled!r}")
    if "device-filter" in entry:
        filters = entry["device-filter"]
        filters = [filters] if isinstance(filters, str) else filters
        if not isinstance(filters, list) or not filters or not all(isinstance(f, str) for f in filters):
            errors.append(f"{path}.device-filter: must be a PCI device id or a non-empty list of them")
        else:
            errors += [
                f"{path}.device-filter: {f!r} is not a PCI device id like 0x20B210DE"
                for f in filters
                if not _DEVICE_ID.fullmatch(f)
            ]
    if "mig-devices" in entry:
        mig_devices = entry["mig-devices"]
        if enabled is False:
            errors.append(f"{path}.mig-devices: not allowed with mig-enabled false")
        if not isinstance(mig_devices, dict):
            errors.append(f"{path}.mig-devices: must be a mapping of profile name to count")
        else:
            for name, count in mig_devices.items():
                if not isinstance(name, str) or not re.fullmatch(r"\d+g\.\d+gb(\+[a-z.]+|-me)?", name):
                    errors.append(f"{path}.mig-devices: {name!r} is not a MIG profile name like 1g.10gb")
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    errors.append(f"{path}.mig-devices.{name}: count must be an integer >= 0, got {count!r}")
    return errors


def lint_mig_parted_document(doc):
    """Format errors of a whole mig-parted v1 document, each naming its path; [] when valid."""
    if not isinstance(doc, dict):
        return ["document: must be a mapping with keys version and mig-configs"]
    errors = [f"{key}: unknown key; valid keys: mig-configs, version" for key in doc if key not in _DOC_KEYS]
    if doc.get("version") != "v1":
        errors.append(f"version: must be v1, got {doc.get('version')!r}")
    configs = doc.get("mig-configs")
    if not isinstance(configs, dict) or not configs:
        return [*errors, "mig-configs: must be a non-empty mapping of config name to a list of entries"]
    for name, entries in configs.items():
        path = f"mig-configs.{name}"
        if not isinstance(entries, list) or not entries:
            errors.append(f"{path}: must be a non-empty list of entries")
            continue
        for index, entry in enumerate(entries):
            errors += _lint_entry(f"{path}[{index}]", entry)
    return errors


def entry_selects_gpu(entry, gpu_index, product, device_id=None):
    """True when a mig-parted entry's devices and device-filter select this GPU.

    As mig-parted, the filter is matched against the PCI device id the GPU reports (``device_id``,
    from nvidia-smi); without one, against every id the catalog lists for the product.
    """
    devices = entry.get("devices", "all")
    if devices != "all" and gpu_index not in devices:
        return False
    if "device-filter" not in entry:
        return True
    filters = entry["device-filter"]
    filters = [filters] if isinstance(filters, str) else filters
    reported = {normalize_device_id(device_id)} if device_id else set(product.pci_device_ids)
    return bool({normalize_device_id(f) for f in filters} & reported)


def gpu_layout(entries, gpu_index, product, device_id=None):
    """(mig_enabled, mig_devices) of the one entry that selects this GPU; MigLayoutError otherwise."""
    chosen = [index for index, entry in enumerate(entries) if entry_selects_gpu(entry, gpu_index, product, device_id)]
    if len(chosen) != 1:
        how_many = (
            "no entry of the MIG config selects"
            if not chosen
            else (f"entries {', '.join(map(str, chosen))} of the MIG config select")
        )
        raise MigLayoutError(
            f"{how_many} GPU {gpu_index} ({product.name}, PCI "
            f"{device_id or ', '.join(product.pci_device_ids)}); valid: exactly one entry whose devices and "
            "device-filter match it"
        )
    entry = entries[chosen[0]]
    return bool(entry.get("mig-enabled")), dict(entry.get("mig-devices") or {})


def merged_mig_parted_document(configs, user_document=None):
    """A mig-parted v1 document of configs; a user's document (same format) overrides names it defines."""
    merged = copy.deepcopy(dict(configs))
    if user_document:
        merged.update(copy.deepcopy(user_document.get("mig-configs") or {}))
    return {"version": "v1", "mig-configs": merged}
