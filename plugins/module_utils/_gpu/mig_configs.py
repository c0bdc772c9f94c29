# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""mig-parted v1 configs (NVIDIA/mig-parted api/spec/v1): the built-in configs per product, a strict
lint of a user's document, the entry that applies to one GPU, and the one merge of a user's configs
over the built-in ones.
"""

from __future__ import annotations

import copy
import json
import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import normalize_device_id
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError, excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import (
    MAX_GPUS_PER_NODE,
    MAX_MIG_DEVICES_PER_GPU,
)

# all-balanced per mig-parted deployments/systemd/config-default.yaml, keyed by that file's device-filters.
_BALANCED = (
    (("0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"), {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
    (
        (
            "0x20B210DE",
            "0x20B510DE",
            "0x233010DE",
            "0x233110DE",
            "0x232210DE",
            "0x20F310DE",
            "0x20F510DE",
            "0x232410DE",
        ),
        {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1},
    ),
    (("0x232110DE", "0x233A10DE"), {"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}),
    (("0x233510DE", "0x233B10DE"), {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
    (("0x20B710DE",), {"1g.6gb": 2, "2g.12gb": 1}),
    # GH200 (96GB), H20; MIGPARTED's group also lists H100-96GB and PG506-96GB, which the catalog lacks.
    (("0x234210DE", "0x232910DE"), {"1g.12gb": 2, "2g.24gb": 1, "3g.48gb": 1}),
    (("0x234810DE",), {"1g.18gb": 2, "2g.36gb": 1, "3g.72gb": 1}),  # GH200 144G HBM3e
    (("0x290110DE",), {"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}),  # B200
    (("0x294110DE",), {"1g.24gb": 2, "2g.47gb": 1, "3g.95gb": 1}),  # GB200 HGX
    (("0x2BB510DE",), {"1g.24gb": 2, "2g.48gb": 1}),  # RTX PRO 6000 Blackwell Server Edition
)


# Profiles whose all-<profile> config mig-parted's config-default.yaml offers only to some products of a
# profile table: its H200 configs (all-1g.18gb ... all-7g.141gb) say "H200-141GB" (and GH200 144G for
# 1g.18gb), never H200 NVL, which shares only all-balanced. No recorded output of an H200 NVL says otherwise.
_NOT_OFFERED = {
    "0x233B10DE": ("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
}


def builtin_config_name(profile):
    """mig-parted names the config of a "+me" profile with a dot: all-1g.10gb.me."""
    return "all-" + profile.name.replace("+", ".")


def builtin_mig_configs(product):
    """The named configs the collection offers for a product, in mig-parted v1 entries."""
    configs = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    if product.mig is None:
        return configs
    configs["all-enabled"] = [{"devices": "all", "mig-enabled": True, "mig-devices": {}}]
    withheld = {name for device_id in product.pci_device_ids for name in _NOT_OFFERED.get(device_id, ())}
    for profile in product.mig.profiles:
        if profile.name in withheld:
            continue
        devices = {profile.name: profile.max_instances}
        configs[builtin_config_name(profile)] = [{"devices": "all", "mig-enabled": True, "mig-devices": devices}]
    for device_ids, layout in _BALANCED:
        if set(device_ids) & set(product.pci_device_ids):
            configs["all-balanced"] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(layout)}]
    return configs


_DOC_KEYS = ("version", "mig-configs")
_ENTRY_KEYS = ("devices", "device-filter", "mig-devices", "mig-enabled")
# types.NewDeviceIDFromString (NVIDIA/mig-parted pkg/types/device.go): "<devicevendor>" or
# "<devicevendor>:<subsystemdevicevendor>", e.g. 0x20B210DE:0x147F10DE.
_DEVICE_ID = re.compile(r"0x[0-9A-Fa-f]{8}(:0x[0-9A-Fa-f]{8})?")
# go-nvlib pkg/nvlib/device/mig_profile.go parseMigProfile: [Cc.]Gg.Mgb[+attributes], and mig-parted's
# config-default.yaml also writes "-me" (RTX PRO 6000: 1g.24gb-me). ASCII digits, as Go's strconv.Atoi reads them.
_PROFILE_NAME = re.compile(r"([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\+[A-Za-z][A-Za-z0-9.]*(,[A-Za-z][A-Za-z0-9.]*)*|-me)?")


def _is_count(value, maximum):
    """VALUE is an int (bool is not one) from 0 to MAXIMUM."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= maximum


def _lint_mig_devices(path, entry, enabled):
    """mig-devices as mig-parted api/spec/v1/spec.go MigConfigSpec.UnmarshalJSON checks it."""
    mig_devices = entry.get("mig-devices")
    if mig_devices is None:
        # spec.go: "missing required field 'mig-devices' when 'mig-enabled' is true" (null is the same).
        if enabled is True:
            return [
                f"{path}: missing required key mig-devices when mig-enabled is true; valid: a mapping of profile "
                "to count, or {} for MIG enabled without MIG devices (mig-parted rejects the whole document)"
            ]
        return []
    if not isinstance(mig_devices, dict):
        return [f"{path}.mig-devices: must be a mapping of profile name to count"]
    errors = []
    if enabled is False and mig_devices:
        # spec.go: "MIG devices included when 'mig-enabled' is false"; an empty mapping is accepted.
        errors.append(f"{path}.mig-devices: not allowed with mig-enabled false (only {{}} is)")
    for name, count in mig_devices.items():
        if not isinstance(name, str) or not _PROFILE_NAME.fullmatch(name):
            errors.append(f"{path}.mig-devices: {excerpt(name)} is not a MIG profile name like 1g.10gb or 1c.3g.40gb")
        if not _is_count(count, MAX_MIG_DEVICES_PER_GPU):
            # mig-parted reads counts as Go ints; no GPU holds more MIG devices than _gpu/limits.py says.
            errors.append(
                f"{path}.mig-devices.{excerpt(name, bare=True)}: count must be an integer >= 0, at most "
                f"{MAX_MIG_DEVICES_PER_GPU} (the most MIG devices a GPU holds), got {excerpt(count)}"
            )
    counts = list(mig_devices.values())
    if counts and all(isinstance(c, int) and not isinstance(c, bool) and c == 0 for c in counts):
        # pkg/types/mig_config.go AssertValidFormat: "all counts for all MigProfiles are 0".
        errors.append(
            f"{path}.mig-devices: all counts are 0, which mig-parted rejects (and with it the whole document); "
            "valid: at least one count > 0, or {} for MIG enabled without MIG devices"
        )
    return errors


def _lint_entry(path, entry):
    if not isinstance(entry, dict):
        return [f"{path}: must be a mapping with keys {', '.join(_ENTRY_KEYS)}"]
    errors = [
        f"{path}.{excerpt(key, bare=True)}: unknown key; valid keys: {', '.join(_ENTRY_KEYS)}"
        for key in entry
        if key not in _ENTRY_KEYS
    ]
    errors += [f"{path}: missing required key {key}" for key in ("devices", "mig-enabled") if key not in entry]
    devices = entry.get("devices", "all")
    # spec.go accepts "all" or any list of integers, [] included (it selects no GPU); GPU indexes are below
    # the driver's most GPUs per node (_gpu/limits.py).
    if devices != "all" and not (
        isinstance(devices, list) and all(_is_count(i, MAX_GPUS_PER_NODE - 1) for i in devices)
    ):
        errors.append(
            f'{path}.devices: must be "all" or a list of GPU indexes (integers from 0 to {MAX_GPUS_PER_NODE - 1}), '
            f"got {excerpt(devices)}"
        )
    enabled = entry.get("mig-enabled", True)
    if not isinstance(enabled, bool):
        errors.append(f"{path}.mig-enabled: must be true or false, got {excerpt(enabled)}")
    if "device-filter" in entry:
        filters = entry["device-filter"]
        filters = [filters] if isinstance(filters, str) else filters
        if not isinstance(filters, list) or not filters or not all(isinstance(f, str) for f in filters):
            errors.append(f"{path}.device-filter: must be a PCI device id or a non-empty list of them")
        else:
            errors += [
                f"{path}.device-filter: {excerpt(f)} is not a PCI device id like 0x20B210DE or, with a subsystem id, "
                "0x20B210DE:0x147F10DE"
                for f in filters
                if not _DEVICE_ID.fullmatch(f)
            ]
    if "mig-enabled" in entry:
        errors += _lint_mig_devices(path, entry, enabled)
    return errors


def lint_mig_parted_document(doc):
    """Format errors of a whole mig-parted v1 document, each naming its path; [] when valid."""
    if not isinstance(doc, dict):
        return ["document: must be a mapping with keys version and mig-configs"]
    errors = [
        f"{excerpt(key, bare=True)}: unknown key; valid keys: mig-configs, version"
        for key in doc
        if key not in _DOC_KEYS
    ]
    if doc.get("version") != "v1":
        errors.append(f"version: must be v1, got {excerpt(doc.get('version'))}")
    configs = doc.get("mig-configs")
    if not isinstance(configs, dict) or not configs:
        return [*errors, "mig-configs: must be a non-empty mapping of config name to a list of entries"]
    for name, entries in configs.items():
        path = f"mig-configs.{excerpt(name, bare=True)}"
        if not isinstance(name, str) or not name.isprintable() or not name.strip():
            # The mig role writes the name into the lines of a systemd unit (gpuops-mig-apply.service).
            errors.append(f"{path}: a config name must be printable text on one line, got {excerpt(name)}")
        if not isinstance(entries, list) or not entries:
            errors.append(f"{path}: must be a non-empty list of entries")
            continue
        for index, entry in enumerate(entries):
            errors += _lint_entry(f"{path}[{index}]", entry)
    return errors


def _filter_matches(device_filter, device_id, subsystem_id, gpu_index):
    """mig-parted pkg/types/device.go DeviceID.Matches for one filter and the ids a GPU reported.

    A filter without a subsystem id compares the device id only; one with a subsystem id
    ("0x20B210DE:0x147F10DE") must match both. MigLayoutError when it needs the subsystem id and the
    GPU did not report one (nvidia-smi printed N/A): refused rather than guessed.
    """
    device, _colon, subsystem = device_filter.partition(":")
    if normalize_device_id(device) != normalize_device_id(device_id):
        return False
    if not subsystem:
        return True
    if subsystem_id is None:
        raise MigLayoutError(
            f"device-filter {device_filter} names a subsystem id, and nvidia-smi reported none for GPU {gpu_index} "
            f"(PCI {device_id}, pci.sub_device_id N/A); valid: the device id alone ({device_id})"
        )
    return normalize_device_id(subsystem) == normalize_device_id(subsystem_id)


def entry_selects_gpu(entry, gpu_index, product, device_id=None, subsystem_id=None):
    """True when a mig-parted entry's devices and device-filter select this GPU.

    As mig-parted (api/spec/v1/helpers.go MatchesDeviceFilter, MatchesDevices), the filter is matched
    against the PCI ids the GPU reports (``device_id`` and ``subsystem_id``, from nvidia-smi), as
    DeviceID.Matches does (:func:`_filter_matches`). Without a reported id (the offline plan), it is
    matched against every id the catalog lists for the product, by the device id alone: the plan
    cannot know a GPU's subsystem id.
    """
    devices = entry.get("devices", "all")
    if devices != "all" and gpu_index not in devices:
        return False
    if "device-filter" not in entry:
        return True
    filters = entry["device-filter"]
    filters = [filters] if isinstance(filters, str) else filters
    if not device_id:
        return any(normalize_device_id(f.partition(":")[0]) in product.pci_device_ids for f in filters)
    # Filters without a subsystem id first: one of them matching needs no subsystem id at all.
    ordered = sorted(filters, key=lambda f: ":" in f)
    return any(_filter_matches(f, device_id, subsystem_id, gpu_index) for f in ordered)


def gpu_layout(entries, gpu_index, product, device_id=None, subsystem_id=None):
    """(mig_enabled, mig_devices) of the one entry that selects this GPU; MigLayoutError otherwise."""
    chosen = [
        index
        for index, entry in enumerate(entries)
        if entry_selects_gpu(entry, gpu_index, product, device_id, subsystem_id)
    ]
    if len(chosen) != 1:
        how_many = (
            "no entry of the MIG config selects"
            if not chosen
            else (f"entries {', '.join(map(str, chosen))} of the MIG config select")
        )
        reported = f"{device_id}:{subsystem_id}" if device_id and subsystem_id else device_id
        raise MigLayoutError(
            f"{how_many} GPU {gpu_index} ({product.name}, PCI "
            f"{reported or ', '.join(product.pci_device_ids)}); valid: exactly one entry whose devices and "
            "device-filter match it"
        )
    entry = entries[chosen[0]]
    return bool(entry.get("mig-enabled")), dict(entry.get("mig-devices") or {})


def _canonical(entries):
    return json.dumps(entries, sort_keys=True)


def builtin_configs_for(products):
    """Built-in MIG configs of every product in PRODUCTS, as one set of named configs.

    A config name whose entries differ between products (all-balanced, all-1g.10gb on a 40GB and an
    80GB A100) gets one entry per product, each limited to it by device-filter, as mig-parted's own
    default config does. No product at all: all-disabled only.
    """
    if not products:
        return {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    by_name = {}
    for product in sorted(products, key=lambda p: p.name):
        for name, entries in builtin_mig_configs(product).items():
            by_name.setdefault(name, []).append((product, entries))
    configs = {}
    for name, variants in sorted(by_name.items()):
        if len(variants) == len(products) and len({_canonical(e) for _product, e in variants}) == 1:
            configs[name] = variants[0][1]
            continue
        configs[name] = [
            {**entry, "device-filter": list(product.pci_device_ids)}
            for product, entries in variants
            for entry in entries
        ]
    return configs


def merged_mig_configs(products, user_configs=None):
    """The built-in configs of PRODUCTS with USER_CONFIGS ({name: entries}) over them: a user's config
    replaces the built-in one of the same name. The one place where the two meet.
    """
    merged = copy.deepcopy(builtin_configs_for(products))
    merged.update(copy.deepcopy(user_configs or {}))
    return merged


def mig_parted_document(products, user_configs=None):
    """The mig-parted v1 document of :func:`merged_mig_configs`."""
    return {"version": "v1", "mig-configs": merged_mig_configs(products, user_configs)}


def config_entries(config_name, product, user_document=None):
    """The entries of CONFIG_NAME on PRODUCT, a user's mig-parted document overriding the built-ins."""
    configs = merged_mig_configs([product], (user_document or {}).get("mig-configs"))
    if config_name in configs:
        return configs[config_name]
    raise MigLayoutError(
        f"config {excerpt(config_name)} is not defined for {product.name}; valid: {', '.join(sorted(configs))}"
    )
