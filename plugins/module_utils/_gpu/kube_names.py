# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The names NVIDIA's Kubernetes components give GPU resources and node labels, each written once.

Here, in the package every other may import, so that the plan, the validation and the roles' plugins cannot
drift apart on a name the cluster matches exactly.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt

# The domain of the resources NVIDIA's device plugin advertises and of the labels GFD and the GPU Operator write.
NVIDIA_DOMAIN = "nvidia.com"
RESOURCE_PREFIX = NVIDIA_DOMAIN + "/"
# Whole GPUs, and MIG devices too under MIG strategy single.
FULL_GPU_RESOURCE = RESOURCE_PREFIX + "gpu"
# k8s-device-plugin internal/rm/rm.go: a MIG device's resource is "mig-" + its profile, "+" written as ".".
MIG_NAME_PREFIX = "mig-"
# MIG devices under MIG strategy mixed: nvidia.com/mig-<profile>.
MIG_RESOURCE_PREFIX = RESOURCE_PREFIX + MIG_NAME_PREFIX
# consts.go DefaultSharedResourceNameSuffix: what a shared resource's name ends with when renameByDefault is true.
SHARED_SUFFIX = ".shared"

# The label the device plugin's config-manager follows to pick its config among the ConfigMap's keys.
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# The label naming the mig-parted config the GPU Operator's mig-manager applies to the node.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
# GFD's label of the MIG strategy the device plugin runs with.
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
# The GPU Operator deploys its device plugin on a node unless this label is "false" (its device-plugin
# DaemonSet selects nodes by it); a memory-sharing backend registers its own plugin there instead.
DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# The same for GFD's DaemonSet.
GFD_DEPLOY_LABEL = "nvidia.com/gpu.deploy.gpu-feature-discovery"
# The collection's label of a node that offers its GPUs through NVIDIA's DRA driver: its kubelet plugin's
# DaemonSet selects it.
GPU_ALLOCATION_LABEL = "gpuops.cluster/gpu-allocation"
# How a node offers its GPUs: capacity.json's gpu_allocation, gpuops_gpu_allocation, and GPU_ALLOCATION_LABEL's value.
DEVICE_PLUGIN_ALLOCATION = "device_plugin"
DRA_ALLOCATION = "dra"
GPU_ALLOCATIONS = (DEVICE_PLUGIN_ALLOCATION, DRA_ALLOCATION)
# What dra.json writes in a device name where the GPU's minor number goes: only the node knows it.
MINOR_PLACEHOLDER = "{minor}"


def mig_resource_name(profile):
    """The resource name of the MIG devices of PROFILE ("1g.10gb+me"), without the domain: "mig-1g.10gb.me"."""
    return MIG_NAME_PREFIX + profile.replace("+", ".")


# k8s.io/apimachinery validation: namespaces are DNS-1123 labels, ConfigMap names DNS-1123 subdomains. Used
# with fullmatch, as Go's anchored regexps match: re.match with "$" would let a trailing newline through.
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
SETTING_RULES = {
    "namespace": (DNS_LABEL, 63, "a DNS-1123 label: lower-case letters, digits and '-', at most 63"),
    "device_plugin_configmap": (DNS_SUBDOMAIN, 253, "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'"),
    "mig_configmap": (DNS_SUBDOMAIN, 253, "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'"),
}


def setting_problem(name, value):
    """Why the API server would refuse VALUE as setting NAME (a namespace, a ConfigMap name), or None."""
    pattern, limit, rule = SETTING_RULES[name]
    if not isinstance(value, str) or len(value) > limit or not pattern.fullmatch(value):
        return f"must be {rule}, got {excerpt(value)}"
    return None
