# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one shape of a host's GPUs as nvidia-smi reports them, for the facts module and MIG reconcile alike.

A :class:`GpuState` is one GPU with its :class:`GpuInstance` list (MIG), each with its
:class:`ComputeInstance` list; :func:`..state.read_host` fills them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENABLED, DISABLED = "enabled", "disabled"
# "1c.3g.40gb": a compute instance that holds part of its GPU instance (not what -C creates).
_PARTIAL_CI = re.compile(r"^\d+c\.")


@dataclass(frozen=True)
class ComputeInstance:
    """One compute instance (a row of ``mig -lci``)."""

    gpu: int
    gpu_instance_id: int
    profile_name: str  # "1g.10gb" for a whole-GI CI, "1c.3g.40gb" for a part of one
    profile_id: int
    instance_id: int
    placement_start: int | None  # absent in the R450 layout
    placement_size: int | None


@dataclass(frozen=True)
class GpuInstance:
    """One existing GPU instance (a row of ``mig -lgi``) with its compute instances."""

    gpu: int
    profile_name: str  # without "MIG ", e.g. "3g.40gb"
    profile_id: int
    instance_id: int
    placement_start: int
    placement_size: int
    compute_instances: tuple = ()  # ComputeInstance, as ``mig -lci`` lists them

    @property
    def key(self):
        """(profile, start): what a planned instance at the same place has too."""
        return (self.profile_name, self.placement_start)

    @property
    def full_ci(self):
        """Exactly one compute instance, and it spans the whole GPU instance (what ``-cgi ... -C`` creates)."""
        children = self.compute_instances
        return len(children) == 1 and not _PARTIAL_CI.match(children[0].profile_name)

    @property
    def ci_profile_ids(self):
        return tuple(ci.profile_id for ci in self.compute_instances)

    def describe(self):
        return describe_instance(
            self.profile_name,
            self.placement_start,
            self.placement_size,
            None if self.full_ci else [ci.profile_name for ci in self.compute_instances],
        )


def describe_instance(profile_name, start, size, ci_profiles=None):
    """A GPU instance for people and for comparing layouts; CI_PROFILES None when it holds one whole-GI CI.

    Otherwise it lists the profile of each compute instance ("1c.3g.40gb"), the same for an instance
    read from nvidia-smi and one a plan creates, so a check-mode "after" equals a real run's.
    """
    described = {"profile": profile_name, "placement": f"{start}:{size}"}
    if ci_profiles is not None:
        described["compute_instances"] = len(ci_profiles)
        described["compute_instance_profiles"] = sorted(ci_profiles)
    return described


@dataclass(frozen=True)
class ComputeProcess:
    """One compute process (a line of ``--query-compute-apps``)."""

    gpu_uuid: str
    pid: int
    process_name: str
    used_memory_mib: int | None


@dataclass(frozen=True)
class GpuState:
    """One GPU: identity and MIG modes from ``--query-gpu``, its MIG instances, and the details the
    facts module reads besides (fabric state from ``-q -x``, compute processes)."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str
    pci_device_id: str | None
    memory_total_mib: int | None
    driver_version: str | None
    mig_mode_current: str | None  # "enabled" | "disabled" | None (not MIG-capable)
    mig_mode_pending: str | None
    instances: tuple = ()  # GpuInstance
    fabric_state: str | None = None  # NVLink fabric (NVSwitch systems, Hopper and later); None when N/A
    processes: tuple = ()  # ComputeProcess
    pci_subsystem_id: str | None = None  # "0x147F10DE"; None when nvidia-smi did not report one

    @property
    def mig_capable(self):
        return self.mig_mode_current is not None

    def layout(self):
        """Mode and instances, comparable and printable."""
        return {
            "mig_enabled": self.mig_mode_current == ENABLED,
            "mig_pending": self.mig_mode_pending if self.mig_mode_pending != self.mig_mode_current else None,
            "instances": [i.describe() for i in sorted(self.instances, key=lambda i: i.placement_start)],
        }


def describe_layout(layout):
    """A GPU's ``layout()`` in words: "MIG enabled: 3g.40gb at 4:4, 1g.10gb at 6:1 (compute instances: none)"."""
    if not layout["mig_enabled"]:
        text = "MIG disabled"
    else:
        instances = ", ".join(_instance_text(i) for i in layout["instances"])
        text = "MIG enabled: " + (instances or "no instances")
    if layout.get("mig_pending"):
        text += f" (MIG mode {layout['mig_pending']} pending: takes effect at the next GPU reset or reboot)"
    return text


def _instance_text(instance):
    text = f"{instance['profile']} at {instance['placement']}"
    if "compute_instance_profiles" not in instance:
        return text
    return f"{text} (compute instances: {', '.join(instance['compute_instance_profiles']) or 'none'})"
