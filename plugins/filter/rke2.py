# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the rke2 role: the cluster checked across hosts, RKE2's files and outputs read and written."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_cluster import (
    SERVER_GROUP,
    check_cluster,
    config_document,
    containerd_cdi_problem,
    has_nvidia_runtime,
    installed_version,
    is_image_archive,
    parse_sha256sums,
    read_airgap_folder,
    rke2_arch,
)

# What each host of the run records in preflight, read back here for every host at once.
VIEW_FACT = "__rke2_host_view"


def _get(host_vars, name, default=None):
    # hostvars of a host are not a dict: membership first, then the templated value.
    return host_vars[name] if name in host_vars else default  # noqa: SIM401


def rke2_cluster_check(hostvars, groups, play_hosts, artifacts=None):
    """check_cluster() on the views the hosts of PLAY_HOSTS recorded, with the inventory's servers outside the run."""
    views = rke2_views(hostvars, play_hosts)
    declared = {}
    for server in (groups or {}).get(SERVER_GROUP) or []:
        if server in play_hosts:
            continue
        host_vars = hostvars[server]
        address = _get(host_vars, "rke2_node_ip") or _get(host_vars, "ansible_host") or server
        declared[server] = plain({"cluster_init": _get(host_vars, "rke2_cluster_init"), "address": address})
    return check_cluster(views, plain(groups or {}), list(play_hosts), declared, plain(artifacts or {}))


def rke2_views(hostvars, hosts):
    """The views the hosts of HOSTS recorded in preflight (hosts that have not run it yet are left out)."""
    return [plain(hostvars[host][VIEW_FACT]) for host in hosts if VIEW_FACT in hostvars[host]]


def rke2_airgap_artifacts(folders):
    """{folder: {"sums": {name: text}, "files": {name: sha256}}} for each air-gap folder, read on the controller."""
    return {str(folder): read_airgap_folder(str(folder)) for folder in folders or ()}


def rke2_config(view, cluster):
    """RKE2's config.yaml of the host of VIEW as a mapping, given the result of rke2_cluster_check."""
    return config_document(plain(view), plain(cluster))


def rke2_image_archives(names, arch):
    """The names among NAMES that are RKE2 image archives of ARCH, sorted."""
    return sorted(name for name in names or () if is_image_archive(name, arch))


class FilterModule:
    """Decisions of the rke2 role."""

    def filters(self):
        return {
            "rke2_cluster_check": rke2_cluster_check,
            "rke2_views": rke2_views,
            "rke2_airgap_artifacts": rke2_airgap_artifacts,
            "rke2_config": rke2_config,
            "rke2_installed_version": installed_version,
            "rke2_sha256sums": parse_sha256sums,
            "rke2_arch": rke2_arch,
            "rke2_nvidia_runtime": has_nvidia_runtime,
            "rke2_containerd_cdi_problem": containerd_cdi_problem,
            "rke2_image_archives": rke2_image_archives,
        }
