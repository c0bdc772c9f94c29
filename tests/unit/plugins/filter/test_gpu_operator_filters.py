# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the gpu_operator role: what the tasks hand them and what they hand back."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.gpu_operator import (
    FilterModule,
    gpu_operator_configmaps,
    gpu_operator_not_ready,
    gpu_operator_ready,
    gpu_operator_values,
    gpu_operator_values_diff,
)

PLAN_VALUES = {
    "devicePlugin": {"config": {"create": False, "name": "dp", "default": "default"}},
    "migManager": {"enabled": False},
}


def test_every_filter_is_exported():
    assert set(FilterModule().filters()) == {
        "gpu_operator_values",
        "gpu_operator_values_diff",
        "gpu_operator_configmaps",
        "gpu_operator_crds",
        "gpu_operator_ready",
        "gpu_operator_not_ready",
    }


def test_values_filter_reports_a_bad_registry_as_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="gpu_operator_image_registry: must be a registry host"):
        gpu_operator_values(PLAN_VALUES, "http://registry.example.com", {})
    assert gpu_operator_values(PLAN_VALUES, None, None)["operator"] == {"upgradeCRD": False}


def test_values_diff_of_a_release_not_installed_yet():
    assert gpu_operator_values_diff(None, {}) == ""
    assert "+migManager:" in gpu_operator_values_diff(None, PLAN_VALUES)


def test_configmaps_from_the_plan_documents():
    documents = {
        "device_plugin_configmap": {"kind": "ConfigMap", "metadata": {"name": "dp"}},
        "mig_parted_configmap": {"metadata": {"name": "mig"}},
    }
    assert gpu_operator_configmaps(documents, PLAN_VALUES) == [documents["device_plugin_configmap"]]


def test_ready_reads_the_first_resource_of_k8s_info():
    assert gpu_operator_ready([]) is False
    assert gpu_operator_ready(None) is False
    assert gpu_operator_ready([{"metadata": {"generation": 1}, "status": {"state": "ready"}}]) is True
    assert gpu_operator_not_ready([], [], [], "gpu-operator", "cluster-policy")[0].startswith(
        "ClusterPolicy cluster-policy does not exist"
    )
