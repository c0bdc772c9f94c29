# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `nvidia-smi -L`: the GPUs and MIG devices a container sees.

Recorded lines (tests/fixtures/nvidia-smi/*-L*.txt):
    GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-9f0cc172-1db7-8b47-7302-fa9b2ade0c7b)
      MIG 1g.10gb     Device  0: (UUID: MIG-5a6ef5fb-e69b-5021-a35e-ad1781308f59)
A MIG line belongs to the GPU line above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GPU_LINE = re.compile(r"^GPU (?P<index>\d+): (?P<name>.+?) \(UUID: (?P<uuid>GPU-[^)\s]+)\)\s*$")
# Drivers before R470 print "MIG 1g.5gb Device 0: (UUID: MIG-GPU-<uuid>/7/0)"; the same pattern reads both.
_MIG_LINE = re.compile(r"^\s+MIG (?P<profile>\S+)\s+Device\s+(?P<index>\d+): \(UUID: (?P<uuid>MIG-[^)\s]+)\)\s*$")


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    uuid: str


@dataclass(frozen=True)
class MigDevice:
    gpu_uuid: str
    profile: str
    index: int
    uuid: str


@dataclass(frozen=True)
class Listing:
    """What one `nvidia-smi -L` printed: GPUs, MIG devices, and the lines that were neither."""

    gpus: tuple[Gpu, ...]
    mig_devices: tuple[MigDevice, ...]
    other_lines: tuple[str, ...]


def parse_listing(text):
    gpus, migs, other = [], [], []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        gpu = _GPU_LINE.match(line)
        mig = _MIG_LINE.match(line)
        if gpu:
            gpus.append(Gpu(int(gpu["index"]), gpu["name"], gpu["uuid"]))
        elif mig and gpus:
            migs.append(MigDevice(gpus[-1].uuid, mig["profile"], int(mig["index"]), mig["uuid"]))
        else:
            other.append(line.strip())
    return Listing(tuple(gpus), tuple(migs), tuple(other))
