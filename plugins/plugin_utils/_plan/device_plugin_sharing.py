# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The interface of a way NVIDIA's device plugin shares a GPU: time-slicing (time_slicing.py) or MPS (mps.py).

Each way is one inventory variable and one section under `sharing` of the plugin's config (v1); its object says
how to lint, normalize and write it. device_plugin.py lists the ways and says which one a node uses. Also here:
the check of an inventory variable's keys, which both ways share.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.interface import RequiredAttributes


@dataclass(frozen=True)
class PluginNode:
    """One node as the per-node rules of a way of sharing see it."""

    # The cluster's MIG strategy; None where the plan refuses a combination once for the whole cluster instead.
    mig_strategy: str | None
    # Indexes of the node's GPUs with MIG enabled.
    mig_enabled_gpus: tuple
    # The resources the plugin finds on the node before any sharing; None when the plugin refuses the node's MIG
    # layout, which the plan reports instead.
    resources: tuple | None
    # {variable: value} of every way of sharing on the node (None: not set).
    settings: dict


class DevicePluginSharing(RequiredAttributes, ABC):
    """One way NVIDIA's device plugin shares a GPU; its module holds the one instance."""

    # The inventory variable that asks for it ("gpuops_time_slicing").
    variable: str
    # What GFD writes as <resource>.sharing-strategy on a node shared this way: api/config/v1/sharing.go
    # SharingStrategy ("time-slicing", "mps").
    gfd_sharing_strategy: str
    # The key of its section under `sharing` in the plugin's config v1 ("timeSlicing", "mps").
    config_key: str

    @abstractmethod
    def lint(self, value, product) -> list[str]:
        """Every problem of VALUE (the variable as the inventory gives it; None: not set), each starting with its
        key path. PRODUCT: the node's GPU (a _gpu.catalog.Product), None when unknown."""

    @abstractmethod
    def normalize(self, value):
        """VALUE (without problems) as the capacity and the config read it; None stays None."""

    @abstractmethod
    def lint_for_node(self, value, node: PluginNode) -> list[str]:
        """What the plugin refuses of VALUE (normalized) on NODE, each starting with its key path."""

    @abstractmethod
    def config_section(self, value, resources) -> dict | None:
        """Its section of the plugin's config for a node whose plugin finds RESOURCES, from VALUE (normalized);
        None: nothing to share."""

    @abstractmethod
    def replicas_limit(self, compute_capability) -> tuple[int, str]:
        """(most replicas, why) its section of the plugin's config takes on GPUs of COMPUTE_CAPABILITY ("8.0";
        None: unknown)."""


def valid_keys_hint(key, valid) -> str:
    """The valid key nearest to KEY, if one is near, then every valid key."""
    close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{hint}valid keys: {', '.join(valid)}"


def key_problems(value, variable, known, advice_by_key, misplaced) -> list[str]:
    """A problem for each key of VALUE outside KNOWN: the advice for a key the plugin's own config has, else
    the nearest known key."""
    problems = []
    for key in value:
        if key in known:
            continue
        advice = advice_by_key.get(key)
        if advice:
            problems.append(f"{variable}.{excerpt(key, bare=True)}: {misplaced}; {advice}")
        else:
            problems.append(f"{variable}.{excerpt(key, bare=True)}: unknown key; {valid_keys_hint(key, known)}")
    return problems
