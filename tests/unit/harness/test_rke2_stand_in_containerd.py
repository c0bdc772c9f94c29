# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RKE2 stand-in writes containerd's config in the version 3 layout, as RKE2 does for containerd 2."""

import pathlib
import sys
import tomllib

from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_cluster import (
    containerd_cdi_problem,
    has_nvidia_runtime,
)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "doubles/rke2"))
from stand_in import containerd


def test_version_3_with_the_cri_plugins_of_containerd_2():
    config = tomllib.loads(containerd.render())
    assert config["version"] == 3
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    images = config["plugins"]["io.containerd.cri.v1.images"]
    assert images["pinned_images"]["sandbox"] == "localhost/pause:3.10"
    assert images["snapshotter"] == "overlayfs"
    assert runtime["containerd"]["runtimes"]["runc"] == {
        "runtime_type": "io.containerd.runc.v2",
        "options": {"SystemdCgroup": False},
    }
    assert runtime["cni"]["bin_dirs"] == ["/usr/lib/cni"]
    assert "default_runtime_name" not in runtime["containerd"]
    # containerd 2 moved these out of io.containerd.grpc.v1.cri; only the stream server stays there.
    assert set(config["plugins"]["io.containerd.grpc.v1.cri"]) == {"stream_server_address", "stream_server_port"}


def test_nvidia_runtimes_and_the_default_runtime():
    text = containerd.render("nvidia", {"nvidia": "/usr/bin/nvidia-container-runtime"})
    runtime = tomllib.loads(text)["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]
    assert runtime["default_runtime_name"] == "nvidia"
    assert runtime["runtimes"]["nvidia"]["options"]["BinaryName"] == "/usr/bin/nvidia-container-runtime"
    # What the rke2 role reads back to decide that the GPU node has its runtime.
    assert has_nvidia_runtime(text)
    assert not has_nvidia_runtime(containerd.render())


def test_runtimes_found_in_the_operator_toolkit_first(tmp_path):
    for folder in ("usr/local/nvidia/toolkit", "usr/bin"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "nvidia-container-runtime").touch()
    assert containerd.find_nvidia_runtimes(tmp_path) == {"nvidia": "/usr/local/nvidia/toolkit/nvidia-container-runtime"}


def test_the_config_rke2_writes_injects_cdi_devices_by_containerd_2_defaults():
    # k3s' template sets neither enable_cdi nor cdi_spec_dirs: containerd 2's defaults apply.
    assert containerd_cdi_problem(containerd.render("", {"nvidia": "/usr/bin/nvidia-container-runtime"})) == ""
