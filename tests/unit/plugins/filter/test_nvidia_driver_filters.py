# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kernel module flavour, load decisions and apt sources of the nvidia_driver role (its filters)."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_driver import (
    FilterModule,
    deb822_sources,
    nvidia_driver_flavour,
    nvidia_driver_flavour_fits,
    nvidia_driver_load_blocker,
)

# PCI device ids as /sys/bus/pci/devices/*/device gives them.
V100 = {"device_id": "0x1db6"}  # Volta: before Turing
T4 = {"device_id": "0x1eb8"}  # Turing: the first with open modules
A100_80GB = {"device_id": "0x20b5"}
H100_SXM = {"device_id": "0x2330"}
B200 = {"device_id": "0x2901"}  # Blackwell: open modules only


@pytest.mark.parametrize(
    ("requested", "branch", "gpus", "expected"),
    [
        pytest.param("open", "535", [V100], "open", id="asked-for-is-kept-even-if-it-does-not-fit"),
        pytest.param("proprietary", "570", [H100_SXM], "proprietary", id="asked-for-proprietary"),
        pytest.param("auto", "535", [], "proprietary", id="no-gpu-before-560"),
        pytest.param("auto", "560", [], "open", id="no-gpu-from-560"),
        pytest.param("auto", "535", [A100_80GB, H100_SXM], "open", id="all-turing-or-newer"),
        pytest.param("auto", "535", [T4], "open", id="turing-is-the-first"),
        pytest.param("auto", "570", [A100_80GB, V100], "proprietary", id="one-older-gpu"),
        pytest.param("auto", "470", [A100_80GB], "proprietary", id="branch-without-open-modules"),
        pytest.param("auto", "515", [A100_80GB], "open", id="first-branch-with-open-modules"),
    ],
)
def test_flavour(requested, branch, gpus, expected):
    assert nvidia_driver_flavour(requested, branch, gpus) == expected


@pytest.mark.parametrize(
    ("flavour", "branch", "gpus", "fits"),
    [
        pytest.param("open", "535", [], True, id="open-without-gpu"),
        pytest.param("open", "470", [], False, id="open-below-515"),
        pytest.param("open", "535", [V100], False, id="open-on-volta"),
        pytest.param("open", "535", [T4, H100_SXM], True, id="open-on-turing-and-hopper"),
        pytest.param("proprietary", "535", [V100, A100_80GB], True, id="proprietary-before-blackwell"),
        pytest.param("proprietary", "570", [B200], False, id="proprietary-on-blackwell"),
        pytest.param("open", "570", [B200], True, id="open-on-blackwell"),
    ],
)
def test_flavour_fits(flavour, branch, gpus, fits):
    assert nvidia_driver_flavour_fits(flavour, branch, gpus) is fits


def test_bad_input_names_what_was_expected():
    with pytest.raises(AnsibleFilterError, match="device_id"):
        nvidia_driver_flavour("auto", "535", [{"address": "0000:17:00.0"}])
    with pytest.raises(AnsibleFilterError, match="branch"):
        nvidia_driver_flavour("auto", "latest", [A100_80GB])
    with pytest.raises(AnsibleFilterError, match="flavour"):
        nvidia_driver_flavour_fits("auto", "535", [])


@pytest.mark.parametrize(
    ("host", "in_container", "simulated", "expected"),
    [
        pytest.param(
            {"gpus": [A100_80GB]},
            True,
            False,
            "running in a container (podman): the kernel is the container host's",
            id="container-first",
        ),
        pytest.param({"gpus": []}, False, True, "no NVIDIA GPU on the PCI bus", id="no-gpu"),
        pytest.param(
            {"gpus": [A100_80GB]}, False, True, "check mode: the driver is not installed yet", id="check-mode"
        ),
        pytest.param({"gpus": [A100_80GB]}, False, False, "", id="can-load"),
        pytest.param({"gpus": [A100_80GB]}, "False", "false", "", id="flags-as-strings"),
    ],
)
def test_load_blocker(host, in_container, simulated, expected):
    assert nvidia_driver_load_blocker(host, in_container, "podman", simulated) == expected


HEADER = "#\n# Ansible managed\n#"


def test_deb822_sources_name_each_file_text():
    # The two sources of Debian's archive (vars/main.yml) and NVIDIA's CUDA repository, whose key the role fetches.
    debian = {
        "name": "debian-nvidia",
        "uris": ["http://deb.debian.org/debian"],
        "suites": ["bookworm", "bookworm-updates"],
        "components": ["contrib", "non-free", "non-free-firmware"],
        "signed_by": "/usr/share/keyrings/debian-archive-keyring.gpg",
    }
    cuda = {
        "name": "nvidia-cuda",
        "uris": ["https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64"],
        "suites": ["/"],
        "components": [],
        "key_url": "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/3bf863cc.pub",
    }
    assert deb822_sources([debian, cuda], "/etc/apt/keyrings", HEADER) == {
        "debian-nvidia": (
            "#\n# Ansible managed\n#\nTypes: deb\nURIs: http://deb.debian.org/debian\n"
            "Suites: bookworm bookworm-updates\nComponents: contrib non-free non-free-firmware\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        ),
        "nvidia-cuda": (
            "#\n# Ansible managed\n#\nTypes: deb\n"
            "URIs: https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64\nSuites: /\n"
            "Signed-By: /etc/apt/keyrings/nvidia-cuda.asc\n"
        ),
    }


def test_deb822_sources_without_a_header_and_a_bad_source():
    assert deb822_sources([], "/etc/apt/keyrings") == {}
    with pytest.raises(AnsibleFilterError, match="expected each apt source as"):
        deb822_sources([{"name": "no-uris", "suites": ["/"]}], "/etc/apt/keyrings")


def test_filters_are_registered():
    assert set(FilterModule().filters()) == {
        "deb822_sources",
        "nvidia_driver_flavour_fits",
        "nvidia_driver_first_read",
        "nvidia_driver_chosen_version",
        "nvidia_driver_load",
    }
