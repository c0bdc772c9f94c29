# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What NVML would report on each GPU node: read from the scenario's hardware description.

The description is YAML, one entry per node name:
  gpu-a100-1:
    product: NVIDIA A100-SXM4-80GB      # nvidia-smi's product name
    count: 8
    memory_mib: 81920                   # total framebuffer of one GPU
    compute_capability: "8.0"
    pci_device_id: "0x20B210DE"         # matched against mig-parted's device-filter
    mig_profiles: path/to/nvidia-smi-mig-lgip.txt   # recorded `nvidia-smi mig -lgip`; absent: not MIG capable
    kubelet: true                       # a real kubelet runs the node (tests/harness); default false
Paths may use environment variables ($GPUOPS_NVSMI_FIXTURES); relative ones are relative to the
repository root.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
# One profile of `nvidia-smi mig -lgip`: its first line, then the CE/JPEG/OFA line below it.
LGIP_FIRST = re.compile(
    r"^\|\s+\d+\s+MIG\s+(?P<name>\S+)\s+(?P<id>\d+)\s+\d+/(?P<total>\d+)\s+(?P<memory>[\d.]+)\s+\S+\s+"
    r"(?P<sm>\d+)\s+(?P<dec>\d+)\s+(?P<enc>\d+)\s+\|$"
)
LGIP_SECOND = re.compile(r"^\|\s+(?P<ce>\d+)\s+(?P<jpeg>\d+)\s+(?P<ofa>\d+)\s+\|$")


@dataclass(frozen=True)
class MigProfile:
    name: str  # 1g.10gb, 1g.10gb+me, ...
    instances: int  # how many fit on one GPU
    memory_mib: int
    attributes: dict  # GFD's MIG attribute labels (memory, multiprocessors, slices, engines)

    @property
    def slices(self) -> int:
        return int(self.name.split("g.", 1)[0])


@dataclass(frozen=True)
class Node:
    name: str
    product: str
    count: int
    memory_mib: int
    compute_capability: tuple[int, int]
    pci_device_id: str = ""
    profiles: dict = field(default_factory=dict)  # name -> MigProfile
    kubelet: bool = False  # a real kubelet runs the node: its device plugin is served over gRPC

    @property
    def mig_capable(self) -> bool:
        return bool(self.profiles)

    @property
    def mig_slices(self) -> int:
        """GPU instance slices of one GPU: those of its largest profile (7g.80gb: 7)."""
        return max((profile.slices for profile in self.profiles.values()), default=0)


def parse_lgip(text: str) -> dict:
    profiles, first = {}, None
    for line in text.splitlines():
        if match := LGIP_FIRST.match(line.strip()):
            first = match
        elif first and (second := LGIP_SECOND.match(line.strip())):
            memory = round(float(first["memory"]) * 1024)
            name = first["name"]
            profiles[name] = MigProfile(
                name=name,
                instances=int(first["total"]),
                memory_mib=memory,
                attributes={
                    "memory": memory,
                    "multiprocessors": int(first["sm"]),
                    "slices.gi": int(name.split("g.", 1)[0]),
                    "slices.ci": int(name.split("g.", 1)[0]),
                    "engines.copy": int(second["ce"]),
                    "engines.decoder": int(first["dec"]),
                    "engines.encoder": int(first["enc"]),
                    "engines.jpeg": int(second["jpeg"]),
                    "engines.ofa": int(second["ofa"]),
                },
            )
            first = None
    return profiles


def load(path: Path) -> dict[str, Node]:
    described = yaml.safe_load(Path(path).read_text()) or {}
    nodes = {}
    for name, entry in described.items():
        major, minor = str(entry["compute_capability"]).split(".")
        profiles = {}
        if entry.get("mig_profiles"):
            lgip = Path(os.path.expandvars(entry["mig_profiles"]))
            profiles = parse_lgip((lgip if lgip.is_absolute() else REPO_ROOT / lgip).read_text())
            if not profiles:
                raise ValueError(f"{name}: no MIG profile found in {lgip}")
        nodes[name] = Node(
            name=name,
            product=entry["product"],
            count=int(entry["count"]),
            memory_mib=int(entry["memory_mib"]),
            compute_capability=(int(major), int(minor)),
            pci_device_id=str(entry.get("pci_device_id", "")).lower(),
            profiles=profiles,
            kubelet=bool(entry.get("kubelet", False)),
        )
    return nodes
