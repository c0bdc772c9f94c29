# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The preflight filters as tasks call them: the nvidia_gpu_info result or the host's facts, bad input named."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.preflight import FilterModule

FILTERS = FilterModule().filters()


def test_the_registered_result_and_the_facts_give_the_same_verdict():
    gpus = [{"index": 0, "name": "NVIDIA L4", "pci_device_id": "0x27B810DE"}]
    registered = {"gpu_detected": True, "reason": "", "gpus": gpus}
    facts = {"nvidia_gpu_detected": True, "nvidia_gpu_reason": "", "nvidia_gpus": gpus, "distribution": "Debian"}
    check = FILTERS["preflight_gpu_check"]
    assert check(registered, "gpu-l4-1", "NVIDIA L4", 2) == check(facts, "gpu-l4-1", "NVIDIA L4", 2)
    assert check(registered, "gpu-l4-1", "NVIDIA L4", 2)["problems"] == [
        "gpu-l4-1: gpuops_gpu_count: expected 2, found 1 (nvidia-smi: 1x NVIDIA L4)"
    ]


def test_bad_input_is_named():
    with pytest.raises(AnsibleFilterError, match="nvidia_gpu_info"):
        FILTERS["preflight_gpu_check"]("not a dict", "gpu-1", "NVIDIA L4", 1)
    with pytest.raises(AnsibleFilterError, match="PCI GPUs"):
        FILTERS["preflight_gpu_check"]({}, "gpu-1", "NVIDIA L4", 1, "0x27b8")
    with pytest.raises(AnsibleFilterError, match=r"expected \{driver"):
        FILTERS["upgrade_node_changes"](["driver"])


def test_os_and_model_group_filters():
    facts = {
        "distribution": "Ubuntu",
        "distribution_version": "24.04",
        "distribution_major_version": "24",
        "os_family": "Debian",
    }
    assert FILTERS["preflight_os_problem"](facts, "gpu-1", ["Ubuntu 24.04"]) == ""
    assert FILTERS["gpu_model_group"]("NVIDIA H200") == "gpu_model_nvidia_h200"
    apt = {"nvidia-container-toolkit": [{"version": "1.17.8-1"}]}
    assert FILTERS["installed_toolkit_version"](apt) == "1.17.8-1"
