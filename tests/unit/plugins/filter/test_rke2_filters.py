# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the rke2 role: what they read from hostvars and what they hand back."""

from ansible_collections.gpuops.cluster.plugins.filter.rke2 import (
    FilterModule,
    rke2_cluster_check,
    rke2_image_archives,
    rke2_views,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.inventory_paths import beside_inventory


def _view(host, **changes):
    return {
        "host": host,
        "role": "agent",
        "version": "v1.33.5+rke2r1",
        "state": "present",
        "installed_version": "",
        "needs_install": True,
        "arch": "amd64",
        "cluster_init": False,
        "token_set": True,
        "api_endpoint": "",
        "address": "192.0.2.21",
        "release_url": "https://github.com/rancher/rke2/releases/download",
        "airgap_dir": "",
        "node_name": host,
        "tls_san": [],
        "node_labels": [],
        "node_taints": [],
        "kubelet_args": [],
        "config_extra": {},
        "registries_keys": [],
        "wait_timeout": 600,
        **changes,
    }


def test_servers_outside_the_run_are_read_from_the_inventory():
    hostvars = {
        "cp-1": {"ansible_host": "192.0.2.10"},
        "gpu-1": {"__rke2_host_view": _view("gpu-1")},
    }
    groups = {"rke2_servers": ["cp-1"], "rke2_agents": ["gpu-1"]}
    result = rke2_cluster_check(hostvars, groups, ["gpu-1"])
    assert result["problems"] == []
    assert result["join_url"] == "https://192.0.2.10:9345"


def test_hosts_without_a_view_are_left_out():
    assert rke2_views({"a": {}, "b": {"__rke2_host_view": {"host": "b"}}}, ["a", "b"]) == [{"host": "b"}]


def test_image_archives_of_the_host_architecture_only():
    names = [
        "rke2-images-core.linux-amd64.tar.zst",
        "rke2-images-core.linux-arm64.tar.zst",
        "rke2-images.linux-amd64.tar.gz",
        "rke2-images.linux-amd64.txt",
        "rke2.linux-amd64.tar.gz",
    ]
    assert rke2_image_archives(names, "amd64") == [
        "rke2-images-core.linux-amd64.tar.zst",
        "rke2-images.linux-amd64.tar.gz",
    ]


def test_beside_inventory(tmp_path):
    hosts = tmp_path / "hosts.yml"
    hosts.write_text("all: {}\n")
    assert beside_inventory([str(hosts)], ".gpuops-kubeconfig") == str(tmp_path / ".gpuops-kubeconfig")
    assert beside_inventory([str(tmp_path)], ".gpuops-kubeconfig") == str(tmp_path / ".gpuops-kubeconfig")
    assert beside_inventory(["a,b,"], "x", cwd="/srv") == "/srv/x"


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {
        "rke2_cluster_check",
        "rke2_views",
        "rke2_airgap_artifacts",
        "rke2_config",
        "rke2_installed_version",
        "rke2_sha256sums",
        "rke2_arch",
        "rke2_nvidia_runtime",
        "rke2_containerd_cdi_problem",
        "rke2_image_archives",
    }
