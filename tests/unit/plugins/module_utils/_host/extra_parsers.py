# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers and argv of nvidia-smi outputs the collection never reads on a host.

``-L``, ``mig -lgip``, ``mig -lgipp`` and the output of ``-mig 1|0`` are parsed here to check the
recorded real outputs, the GPU catalog and the nvidia-smi test double against each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.gpuops.cluster.plugins.module_utils._host.commands import gpu_selector
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import (
    ErrorKind,
    ParseError,
    TextEnum,
    kind_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.parsers import _table_rows


def list_gpu_instance_placements_args(gpu=None):
    """``mig -lgipp``: the placements each GPU instance profile allows."""
    return ["mig", *gpu_selector(gpu), "-lgipp"]


# ---------------------------------------------------------------- -L


@dataclass
class MigDeviceEntry:
    """A MIG device line of ``-L``; gpu/compute instance ids only in the old (R450/R460) UUID form."""

    name: str
    device_index: int
    uuid: str
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None


@dataclass
class GpuListEntry:
    index: int
    name: str
    uuid: str
    mig_devices: list = field(default_factory=list)


_L_GPU = re.compile(r"^GPU\s+(\d+):\s+(.+?)\s+\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)\s*$")
_L_MIG = re.compile(r"^\s+MIG\s+(\S+)\s+Device\s+(\d+):\s+\(UUID:\s*(MIG-[^)\s]+)\)\s*$")
_OLD_MIG_UUID = re.compile(r"^MIG-GPU-[0-9a-fA-F-]+/(\d+)/(\d+)$")


def parse_list_devices(text):
    """``nvidia-smi -L`` -> GpuListEntry list (MIG devices under their GPU).

    Both UUID forms are understood: ``MIG-<uuid>`` (R470 and later) and
    ``MIG-GPU-<gpu uuid>/<gi>/<ci>`` (R450/R460), whose GI/CI ids are kept.
    """
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        gpu = _L_GPU.match(line)
        if gpu:
            gpus.append(GpuListEntry(int(gpu.group(1)), gpu.group(2), gpu.group(3)))
            continue
        mig = _L_MIG.match(line)
        if mig and gpus:
            entry = MigDeviceEntry(mig.group(1), int(mig.group(2)), mig.group(3))
            old = _OLD_MIG_UUID.match(entry.uuid)
            if old:
                entry.gpu_instance_id, entry.compute_instance_id = int(old.group(1)), int(old.group(2))
            gpus[-1].mig_devices.append(entry)
            continue
        raise ParseError(f"unexpected line in nvidia-smi -L output: {line!r}")
    return gpus


# ---------------------------------------------------------------- mig -lgip / -lgipp


@dataclass
class GpuInstanceProfileRow:
    gpu: int
    profile_name: str
    profile_id: int
    instances_free: int
    instances_total: int
    memory_gib: float


@dataclass
class GpuInstancePlacements:
    gpu: int
    profile_id: int
    starts: tuple
    size: int


_LGIP_ROW = re.compile(
    r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(?:No|Yes)\s+\d+\s+\d+\s+\d+\s*\|$"
)
_LGIP_CONTINUATION = re.compile(r"^\|\s+\d+\s+\d+\s+\d+\s*\|$")
_LGIPP_ROW = re.compile(r"^GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}:(\d+)\s*$")


def parse_gpu_instance_profiles(text):
    """``mig -lgip`` -> GpuInstanceProfileRow list (one per GPU and profile)."""
    return [
        GpuInstanceProfileRow(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), float(m[6]))
        for m in _table_rows(text, _LGIP_ROW, "mig -lgip", _LGIP_CONTINUATION)
    ]


def parse_gpu_instance_placements(text):
    """``mig -lgipp`` -> GpuInstancePlacements list ("{0,2,4}:2" -> starts (0, 2, 4), size 2)."""
    result = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _LGIPP_ROW.match(line.strip())
        if not match:
            raise ParseError(f"unexpected line in nvidia-smi mig -lgipp output: {line!r}")
        starts = tuple(int(s) for s in match[3].replace(" ", "").split(",") if s)
        result.append(GpuInstancePlacements(int(match[1]), int(match[2]), starts, int(match[4])))
    return result


# ---------------------------------------------------------------- -mig 1|0


class MigModeOutcome(TextEnum):
    APPLIED = "applied"  # "Enabled/Disabled MIG Mode for GPU ..."
    PENDING = "pending"  # "Warning: MIG mode is in pending enable state ..." (reset or reboot needed)
    FAILED = "failed"  # "Unable to enable/disable MIG Mode for GPU ...: <reason>"


@dataclass
class MigModeChange:
    pci_bus_id: str
    enabled: bool
    outcome: MigModeOutcome
    reason: str | None = None
    kind: ErrorKind | None = None


_MODE_APPLIED = re.compile(r"^(Enabled|Disabled) MIG Mode for GPU ([0-9A-Fa-f:.]+)$")
_MODE_PENDING = re.compile(
    r"^Warning: MIG mode is in pending (enable|disable) state for GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f.]+):"
    r"\s*(.*)$"
)
_MODE_FAILED = re.compile(r"^Unable to (enable|disable) MIG Mode for GPU ([0-9A-Fa-f:.]+):\s*(.+)$")


def parse_mig_mode_change(text):
    """Output of ``-mig 1|0`` -> one MigModeChange per GPU line (applied, pending or failed)."""
    changes = []
    for line in text.splitlines():
        line = line.strip()
        if match := _MODE_APPLIED.match(line):
            changes.append(MigModeChange(match[2], match[1] == "Enabled", MigModeOutcome.APPLIED))
        elif match := _MODE_PENDING.match(line):
            reason = match[3].strip() or None
            kind = kind_of(reason) if reason else None
            changes.append(MigModeChange(match[2], match[1] == "enable", MigModeOutcome.PENDING, reason, kind))
        elif match := _MODE_FAILED.match(line):
            reason = match[3].strip()
            changes.append(
                MigModeChange(match[2], match[1] == "enable", MigModeOutcome.FAILED, reason, kind_of(reason))
            )
    return changes
