# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpushare (AliyunContainerService's gpushare-device-plugin and gpushare-scheduler-extender): legacy sharing by
whole GiB of GPU memory.

What a node advertises is computed as the device plugin's code does: aliyun.com/gpu-mem is one fake device per
GiB of every GPU, and aliyun.com/gpu-count the number of GPUs, patched into the node status
(pkg/gpu/nvidia/nvidia.go getDevices, server.go NewNvidiaDevicePlugin, podmanager.go patchGPUCount).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import MemorySharingBackend, SharedUnit

NAME = "gpushare"
# gpushare-device-plugin pkg/gpu/nvidia/const.go: resourceName, the node's GPU memory in GiB, and
# resourceCount, its GPU count, a node status figure that no device plugin hands out.
MEMORY_RESOURCE = "aliyun.com/gpu-mem"
COUNT_RESOURCE = "aliyun.com/gpu-count"
# The node selector of gpushare's device plugin: device-plugin-ds.yaml nodeSelector.
NODE_LABELS = {"gpushare": "true"}
# gpushare-device-plugin's DaemonSet runs with --memory-unit=GiB (device-plugin-ds.yaml): MiB / 1024,
# truncated (nvidia.go setGPUMemory).
_MIB_PER_GIB = 1024

# The kube-scheduler extender of gpushare-scheduler-extender, as its
# config/scheduler-policy-config-v1.28+.yaml (and scheduler-policy-config.yaml) declares it: the
# extender's NodePort 32766 on the scheduler's host, managing aliyun.com/gpu-mem.
EXTENDER = {
    "urlPrefix": "http://127.0.0.1:32766/gpushare-scheduler",
    "filterVerb": "filter",
    "bindVerb": "bind",
    "enableHTTPS": False,
    "nodeCacheCapable": True,
    "managedResources": [{"name": MEMORY_RESOURCE, "ignoredByScheduler": False}],
    "ignorable": False,
}


def memory_gib(memory_mib):
    """aliyun.com/gpu-mem devices per GPU: whole GiB, truncated."""
    return memory_mib // _MIB_PER_GIB


def gpu_gib(node_plan):
    """GiB of one GPU as gpushare's scheduler extender counts it: the node's aliyun.com/gpu-mem over its GPU count
    (gpushare-scheduler-extender pkg/cache/nodeinfo.go, NewNodeInfo), or 0 when the plan gives neither."""
    resources = node_plan.get("resources") or {}
    count = resources.get(COUNT_RESOURCE) or node_plan.get("gpu_count") or 0
    return int(resources.get(MEMORY_RESOURCE, 0)) // count if count else 0


def _sharing_text(gib):
    return f"gpushare, {MEMORY_RESOURCE} {gib} GiB per pod"


class GpushareBackend(MemorySharingBackend):
    name = NAME
    title = "gpushare"
    standing = "legacy"
    example = "{backend: gpushare}"
    keys = ()
    other_keys_reason = "gpushare takes no other key (it shares by whole GiB of memory)"
    node_labels = NODE_LABELS
    advertised_resources = (MEMORY_RESOURCE, COUNT_RESOURCE)
    # gpushare's pods ask for memory.
    pod_resource = MEMORY_RESOURCE
    unallocatable_resources = (COUNT_RESOURCE,)
    # Its pinned manifests (tasks/gpushare_*.yml).
    needs_helm = False
    pod_option_defaults = {}

    def lint_keys(self, value):
        return []

    def normalize(self, value):
        return {"backend": NAME}

    def capacity(self, memory_mib, count, sharing):
        return {COUNT_RESOURCE: count, MEMORY_RESOURCE: count * memory_gib(memory_mib)}, {}

    def describe(self, sharing):
        return NAME

    def scheduler_extenders(self):
        return [copy.deepcopy(EXTENDER)]

    def plan_problems(self, where, node_plan):
        resources = node_plan.get("resources") if isinstance(node_plan.get("resources"), dict) else {}
        if not resources.get(MEMORY_RESOURCE) or not resources.get(COUNT_RESOURCE):
            return [
                f"{where}: gpushare nodes advertise {MEMORY_RESOURCE} and {COUNT_RESOURCE}, but "
                f"resources has {sorted(resources) or 'none'}"
            ]
        return []

    def validation_unit(self, node_plan, resource):
        # One GPU's worth of GiB, 1 GiB per pod; the sharing check picks how many pods split it.
        gib = gpu_gib(node_plan)
        return SharedUnit(
            replicas=gib, advertised=gib, sharing=_sharing_text(1), slice_resource=MEMORY_RESOURCE, slice_size=1
        )

    def sharing_check_unit(self, unit, max_pods):
        # N pods that split one GPU's GiB evenly: N is that GiB, at most MAX_PODS; the extender packs them onto
        # one GPU.
        count = min(unit.replicas, max_pods)
        size = unit.replicas // count if count else 0
        return replace(unit, replicas=count, advertised=count, slice_size=size, sharing=_sharing_text(size))

    def sharing_pod_limits(self, resource, slice_size, options):
        # gpushare's one resource is the memory slice itself, in GiB.
        return {resource: str(slice_size)}
