# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpushare's kube-scheduler extender entry, as AliyunContainerService/gpushare-scheduler-extender's
config/scheduler-policy-config.yaml declares it: what the plan's scheduler_extenders and the rke2 role's
KubeSchedulerConfiguration must carry."""

GPUSHARE_EXTENDER = {
    "urlPrefix": "http://127.0.0.1:32766/gpushare-scheduler",
    "filterVerb": "filter",
    "bindVerb": "bind",
    "enableHTTPS": False,
    "nodeCacheCapable": True,
    "managedResources": [{"name": "aliyun.com/gpu-mem", "ignoredByScheduler": False}],
    "ignorable": False,
}
