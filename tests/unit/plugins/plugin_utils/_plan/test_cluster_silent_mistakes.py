# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plan_cluster's messages point at what works for the whole cluster, and at the product a typo meant."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors

CONFIGS = {
    "version": "v1",
    "mig-configs": {
        "half-small-half-medium": [
            {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
            {"devices": [4, 5, 6, 7], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}},
        ]
    },
}
A100 = {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 8}
H100 = {"gpuops_gpu_product": "NVIDIA H100 80GB HBM3", "gpuops_gpu_count": 8}
L4_MPS = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4, "gpuops_mps": {"replicas": 4}}


def all_errors(strategy="mixed", **hosts):
    cluster_wide = {"gpuops_mig_strategy": strategy, "gpuops_mig_configs": CONFIGS}
    nodes = {host: cluster_wide | intent for host, intent in hosts.items()}
    with pytest.raises(IntentErrors) as caught:
        plan_cluster(nodes)
    return caught.value.errors


def errors_of(strategy="mixed", **hosts):
    return {(error.host, error.variable): error.message for error in all_errors(strategy, **hosts)}


def test_mps_under_mixed_names_the_mig_nodes_that_need_mixed_and_what_works_for_all():
    """k8s-device-plugin v0.20 cmd/nvidia-device-plugin/main.go validateFlags: "using --mig-strategy=mixed is not
    supported with MPS"; the strategy is the GPU Operator's one mig.strategy."""
    errors = errors_of(
        a100=A100 | {"gpuops_mig_config": "half-small-half-medium"},
        h100=H100 | {"gpuops_mig_config": "all-balanced"},
        h100_single=H100 | {"gpuops_mig_config": "all-1g.10gb"},
        l4=L4_MPS,
    )
    message = errors[("l4", "gpuops_mps")]
    assert message.startswith(
        "NVIDIA's device plugin refuses MPS with MIG strategy mixed (\"using --mig-strategy=mixed is not supported "
        'with MPS"), and gpuops_mig_strategy is one for the whole cluster: a100, h100 need mixed'
    ), message
    assert "so none or single would break them" in message
    assert "share this node with gpuops_time_slicing (or gpuops_memory_sharing) instead of gpuops_mps" in message
    assert "use none or single" not in message
    # One problem, said once: the device plugin's own wording is not repeated beside it.
    assert [key for key in errors if key[0] == "l4"] == [("l4", "gpuops_mps")]


def test_mps_under_mixed_offers_single_when_every_mig_node_takes_it():
    errors = errors_of(h100=H100 | {"gpuops_mig_config": "all-1g.10gb"}, l4=L4_MPS)
    message = errors[("l4", "gpuops_mps")]
    assert "the MIG nodes (h100) also work with single, which advertises their MIG devices as nvidia.com/gpu" in (
        message
    ), message
    assert "set gpuops_mig_strategy single" in message


def test_mps_under_mixed_without_mig_nodes_offers_none():
    errors = errors_of(l4=L4_MPS, l4_whole={"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4})
    assert "no GPU node has MIG enabled, so set gpuops_mig_strategy none" in errors[("l4", "gpuops_mps")]
    assert ("l4_whole", "gpuops_mps") not in errors


def test_mps_on_mig_enabled_gpus_is_still_refused_per_node_under_mixed():
    errors = all_errors(h100=H100 | {"gpuops_mig_config": "all-1g.10gb", "gpuops_mps": {"replicas": 2}})
    messages = [error.message for error in errors if (error.host, error.variable) == ("h100", "gpuops_mps")]
    assert any(message.startswith("MPS is not supported on GPUs with MIG enabled") for message in messages), messages


def test_a_product_typo_with_mig_gets_did_you_mean():
    errors = errors_of(typo=H100 | {"gpuops_gpu_product": "NVIDIA H100 SXM5 80GB", "gpuops_mig_config": "all-balanced"})
    message = errors[("typo", "gpuops_mig_config")]
    assert message.startswith("NVIDIA H100 SXM5 80GB is not in the GPU catalog (no MIG geometry; did you mean NVIDIA")
    assert "did you mean NVIDIA H100 80GB HBM3" in message
    assert "all-disabled" in message


def test_a_product_typo_with_memory_sharing_gets_did_you_mean():
    typo = {"gpuops_gpu_product": "NVIDIA L40-S 48GB", "gpuops_gpu_count": 4}
    typo["gpuops_memory_sharing"] = {"backend": "hami"}
    errors = errors_of("none", typo=typo)
    message = errors[("typo", "gpuops_memory_sharing")]
    assert "gpuops_gpu_product 'NVIDIA L40-S 48GB' is not in the GPU catalog: did you mean NVIDIA L40S" in message
