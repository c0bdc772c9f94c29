# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the rke2 role for kube-scheduler extenders: the servers' lists checked, the files written."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_scheduler import (
    check_servers,
    config_settings,
    scheduler_configuration,
)


def rke2_scheduler_check(views):
    """Problems (host: variable: what is wrong; valid: ...) of rke2_scheduler_extenders in the servers' VIEWS."""
    return check_servers(plain(views or []))


def rke2_scheduler_config(extenders):
    """The KubeSchedulerConfiguration (a mapping) calling EXTENDERS, with RKE2's scheduler kubeconfig."""
    return scheduler_configuration(plain(extenders or []))


def rke2_scheduler_settings(config_file):
    """The config.yaml.d settings passing CONFIG_FILE to kube-scheduler and mounting its folder read-only."""
    text = str(config_file)
    return config_settings(text, text.rsplit("/", 1)[0])


class FilterModule:
    """kube-scheduler extenders of the rke2 role."""

    def filters(self):
        return {
            "rke2_scheduler_check": rke2_scheduler_check,
            "rke2_scheduler_config": rke2_scheduler_config,
            "rke2_scheduler_settings": rke2_scheduler_settings,
        }
