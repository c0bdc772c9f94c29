# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The interface of a GPU memory-sharing backend (a value of gpuops_memory_sharing.backend).

A backend replaces NVIDIA's device plugin on the nodes that use it. Its object answers every question the
collection asks about it, in three groups:
- the plan: the keys it takes in gpuops_memory_sharing and their lint, its defaults, what a node advertises and
  what its scheduler accounts, the node labels, the plan table's text, the kube-scheduler extenders;
- the validation (gpu_validation): what the plan must say, what one unit looks like from inside a pod, how a
  pod asks for one, how the sharing check splits one;
- the gpu_memory_sharing role: how messages name it, the resources its device plugin registers, whether Helm
  installs it.

Pure Python: _sharing imports only _gpu and itself, so the plan, the validation module and the role's plugins
may all import it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.interface import RequiredAttributes
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import DEVICE_PLUGIN_DEPLOY_LABEL

VARIABLE = "gpuops_memory_sharing"


class SharingCapacityError(GpuError):
    """A node the backend cannot serve as asked; str() says why and what would work.

    The plan raises it again as its CapacityError, with the same message.
    """


@dataclass(frozen=True)
class SharedUnit:
    """One unit of a memory-shared resource as the validation pods see it.

    REPLICAS pods share one GPU; ADVERTISED units can be asked for; each sharing pod asks SLICE_SIZE of
    SLICE_RESOURCE (0: the size is unknown); SHARING says so in the report.
    """

    replicas: int
    advertised: int
    sharing: str
    slice_resource: str
    slice_size: int


class MemorySharingBackend(RequiredAttributes, ABC):
    """One memory-sharing backend; registry.py holds one instance of each.

    A subclass sets every attribute annotated below (the constructor refuses one that does not) and implements
    every abstract method. Methods take plain data: a normalized gpuops_memory_sharing ("sharing", with
    "backend"), or a node entry of the plan's capacity.json ("node_plan", whose "memory_sharing" names the backend).
    """

    # The value of gpuops_memory_sharing.backend.
    name: str
    # How messages name it for people ("HAMi").
    title: str
    # Its standing, which the unknown-backend message gives beside its name ("maintained, recommended").
    standing: str
    # A gpuops_memory_sharing value that selects it, as messages show one ("{backend: hami, split: 10}").
    example: str
    # The keys it takes in gpuops_memory_sharing beside backend.
    keys: tuple
    # Why a key of another backend does not apply to it ("gpushare takes no other key (...)").
    other_keys_reason: str
    # The node labels its device plugin's DaemonSet selects.
    node_labels: dict
    # Every resource its device plugin registers on a node.
    advertised_resources: tuple
    # The resource a validation pod asks one unit of.
    pod_resource: str
    # Resources a node shows that no device plugin hands out: no validation pod asks for them.
    unallocatable_resources: tuple
    # Whether the gpu_memory_sharing role installs it with Helm (and so only looks for it where helm works).
    needs_helm: bool
    # Its options of the validation pods, with their defaults; gpu_validation names each <name>_<option>.
    pod_option_defaults: dict

    # The plan

    @abstractmethod
    def lint_keys(self, value) -> list[str]:
        """The problems of this backend's keys in VALUE (a mapping), each starting with its key path."""

    @abstractmethod
    def normalize(self, value) -> dict:
        """VALUE (a mapping without problems) with this backend's defaults filled in, "backend" first."""

    @abstractmethod
    def capacity(self, memory_mib, count, sharing) -> tuple[dict, dict]:
        """(resources, scheduler_accounts) of a node of COUNT GPUs of MEMORY_MIB MiB each: what its device plugin
        advertises, and what its scheduler accounts beyond that. Raises SharingCapacityError."""

    def labels(self, sharing) -> dict:
        """The node labels that select this backend's device plugin and turn the GPU Operator's off: two plugins
        cannot both serve nvidia.com/gpu on one node."""
        return {**self.node_labels, DEVICE_PLUGIN_DEPLOY_LABEL: "false"}

    @abstractmethod
    def describe(self, sharing) -> str:
        """The SHARING column of the plan's table."""

    def scheduler_extenders(self) -> list[dict]:
        """The KubeSchedulerConfiguration extenders a cluster with a node of this backend needs, as new copies."""
        return []

    # The validation

    @abstractmethod
    def plan_problems(self, where, node_plan) -> list[str]:
        """Why the validation cannot check NODE_PLAN, each line starting with WHERE (its key path); [] if it can."""

    @abstractmethod
    def validation_unit(self, node_plan, resource) -> SharedUnit:
        """One unit of RESOURCE on NODE_PLAN, as the smoke and CUDA pods ask for it."""

    def sharing_check_unit(self, unit, max_pods) -> SharedUnit:
        """UNIT as the sharing check asks for it, with at most MAX_PODS pods; the same unit by default."""
        return unit

    @abstractmethod
    def sharing_pod_limits(self, resource, slice_size, options) -> dict:
        """The limits of a sharing pod asking one unit of RESOURCE, SLICE_SIZE its slice, quantities as strings.

        OPTIONS: this backend's pod options (pod_option_defaults, as the user set them)."""

    def scheduler_name(self, options) -> str | None:
        """The schedulerName of every validation pod on this backend's nodes; None: the cluster's default."""
        return None

    def sharing_pod_annotations(self) -> dict:
        """Annotations of the sharing check's pods."""
        return {}
