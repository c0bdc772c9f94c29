# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuops_mps: the plan, capacity, labels and device-plugin config of MPS sharing, with exact numbers.

Each rule cites the NVIDIA/k8s-device-plugin (v0.20) file it follows.
"""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin import (
    build_device_plugin_config,
    lint_device_plugin_config,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.documents import device_plugin_config_key
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.mps import lint_mps, mps_limit

L4 = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4}
T4 = {"gpuops_gpu_product": "Tesla T4", "gpuops_gpu_count": 2}
V100 = {"gpuops_gpu_product": "Tesla V100-SXM2-32GB", "gpuops_gpu_count": 8}
A100 = {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 8}


def plan(strategy="none", **hosts):
    return plan_cluster({host: {"gpuops_mig_strategy": strategy, **intent} for host, intent in hosts.items()})


def errors_of(strategy="none", **hosts):
    with pytest.raises(IntentErrors) as caught:
        plan(strategy, **hosts)
    return {(error.host, error.variable): error.message for error in caught.value.errors}


def test_mps_multiplies_full_gpus_and_labels_sharing_strategy_mps():
    """README "With CUDA MPS": 8 GPUs x replicas 10 = 80 nvidia.com/gpu. internal/lm/resource.go: replicas label,
    -SHARED product when not renamed, sharing-strategy from api/config/v1/sharing.go SharingStrategy (mps)."""
    result = plan(l4=L4 | {"gpuops_mps": {"replicas": 4}})
    node = result.capacity["nodes"]["l4"]
    assert node["resources"] == {"nvidia.com/gpu": 16}
    assert result.capacity["totals"] == {"nvidia.com/gpu": 16}
    labels = node["labels"]
    assert labels["nvidia.com/gpu.replicas"] == "4"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "mps"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-L4-SHARED"
    assert labels["nvidia.com/gpu.count"] == "4"
    assert labels["nvidia.com/mps.capable"] == "true"
    key = labels["nvidia.com/device-plugin.config"]
    assert key.startswith("mps-") and len(key) == len("mps-") + 8
    assert result.device_plugin_configmap["data"][key] == {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    }


def test_mps_rename_by_default_advertises_shared_name_without_shared_product():
    """README "With CUDA MPS": renameByDefault advertises nvidia.com/gpu.shared; resource.go adds -SHARED only
    when not renamed."""
    result = plan(l4=L4 | {"gpuops_mps": {"replicas": 3, "rename_by_default": True}})
    node = result.capacity["nodes"]["l4"]
    assert node["resources"] == {"nvidia.com/gpu.shared": 12}
    assert node["labels"]["nvidia.com/gpu.product"] == "NVIDIA-L4"
    key = node["labels"]["nvidia.com/device-plugin.config"]
    assert result.device_plugin_configmap["data"][key]["sharing"] == {
        "mps": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}
    }


def test_mps_per_resource_replicas_override_replicas_and_text_is_accepted():
    result = plan(l4=L4 | {"gpuops_mps": {"replicas": "2", "resources": {"nvidia.com/gpu": "6"}}})
    assert result.capacity["nodes"]["l4"]["resources"] == {"nvidia.com/gpu": 24}


def test_unshared_nodes_keep_the_default_key_and_no_mps_label():
    result = plan(l4=L4)
    labels = result.capacity["nodes"]["l4"]["labels"]
    assert labels["nvidia.com/device-plugin.config"] == "default"
    assert "nvidia.com/mps.capable" not in labels
    assert labels["nvidia.com/gpu.sharing-strategy"] == "none"


def test_key_is_named_by_content():
    """cmd/config-manager follows only the node label: a changed replicas value must be a new key."""
    keys = {
        replicas: plan(l4=L4 | {"gpuops_mps": {"replicas": replicas}}).capacity["nodes"]["l4"]["labels"][
            "nvidia.com/device-plugin.config"
        ]
        for replicas in (4, 5)
    }
    assert keys[4] != keys[5]
    sliced = plan(l4=L4 | {"gpuops_time_slicing": {"replicas": 4}}).capacity["nodes"]["l4"]["labels"]
    assert sliced["nvidia.com/device-plugin.config"].startswith("time-slicing-")
    assert (
        device_plugin_config_key(build_device_plugin_config("none", None, ["nvidia.com/gpu"], {"replicas": 4}))
        == (keys[4])
    )


@pytest.mark.parametrize(
    ("compute_capability", "limit"),
    [("6.1", 16), ("7.0", 16), ("7.2", 16), ("7.5", 48), ("8.0", 48), ("9.0", 48), ("10.0", 48), (None, 48)],
)
def test_mps_limit_by_compute_capability(compute_capability, limit):
    """cmd/mps-control-daemon/mps/device.go maxClients: 48 when the compute capability is >= v7.5, else 16."""
    assert mps_limit(compute_capability) == limit


def test_v100_takes_16_mps_replicas_and_not_17():
    assert plan(v100=V100 | {"gpuops_mps": {"replicas": 16}}).capacity["nodes"]["v100"]["resources"] == {
        "nvidia.com/gpu": 128
    }
    errors = errors_of(v100=V100 | {"gpuops_mps": {"replicas": 17}})
    assert errors[("v100", "gpuops_mps.replicas")] == (
        "must be <= 16, the most MPS clients per GPU the device plugin's MPS daemon accepts on compute capability "
        "7.0 (48 from compute capability 7.5, else 16), got 17"
    )


def test_t4_takes_48_mps_replicas_and_not_49():
    assert plan(t4=T4 | {"gpuops_mps": {"replicas": 48}}).capacity["nodes"]["t4"]["resources"] == {"nvidia.com/gpu": 96}
    errors = errors_of(t4=T4 | {"gpuops_mps": {"resources": {"nvidia.com/gpu": 49}}})
    assert "must be <= 48" in errors[("t4", 'gpuops_mps.resources["nvidia.com/gpu"]')]


def test_mps_replicas_must_be_two_or_more():
    """api/config/v1/replicas.go: "number of replicas must be >= 2"."""
    errors = errors_of(l4=L4 | {"gpuops_mps": {"replicas": 1}})
    assert errors[("l4", "gpuops_mps.replicas")] == (
        "number of replicas must be >= 2, got 1; 1 replica means no MPS: omit gpuops_mps"
    )


def test_mps_and_time_slicing_on_one_node_are_refused():
    """README "Shared Access to GPUs": time-slicing and MPS are mutually exclusive (sharing.go: MPS wins)."""
    errors = errors_of(l4=L4 | {"gpuops_mps": {"replicas": 2}, "gpuops_time_slicing": {"replicas": 2}})
    assert "gpuops_mps and gpuops_time_slicing are both set" in errors[("l4", "gpuops_mps")]


def test_mps_with_mig_strategy_mixed_is_refused():
    """cmd/nvidia-device-plugin/main.go validateFlags: "using --mig-strategy=mixed is not supported with MPS"."""
    errors = errors_of("mixed", l4=L4 | {"gpuops_mps": {"replicas": 2}})
    assert errors[("l4", "gpuops_mps")].startswith("NVIDIA's device plugin refuses MPS with MIG strategy mixed")


def test_mps_on_mig_enabled_gpus_is_refused_and_on_mig_disabled_accepted():
    """README "With CUDA MPS": not supported on devices with MIG enabled; only nvidia.com/gpu on full GPUs."""
    errors = errors_of("single", a100=A100 | {"gpuops_mig_config": "all-1g.10gb", "gpuops_mps": {"replicas": 2}})
    assert errors[("a100", "gpuops_mps")].startswith(
        "MPS is not supported on GPUs with MIG enabled (GPU 0, 1, 2, 3, 4, 5, 6, 7 of this node)"
    )
    result = plan("single", a100=A100 | {"gpuops_mig_config": "all-disabled", "gpuops_mps": {"replicas": 2}})
    assert result.capacity["nodes"]["a100"]["resources"] == {"nvidia.com/gpu": 16}


@pytest.mark.parametrize(
    ("value", "path", "expected"),
    [
        (
            {"replicas": 2, "fail_requests_greater_than_one": True},
            "gpuops_mps.fail_requests_greater_than_one",
            "drop it",
        ),
        ({"resources": {"nvidia.com/mig-1g.10gb": 2}}, 'gpuops_mps.resources["nvidia.com/mig-1g.10gb"]', "only"),
        ({"replica": 2}, "gpuops_mps.replica", "did you mean 'replicas'?"),
        ({"replicas": 2, "rename_by_default": "yes"}, "gpuops_mps.rename_by_default", "true or false"),
        ([2], "gpuops_mps", "must be a mapping"),
    ],
)
def test_bad_gpuops_mps_values(value, path, expected):
    problems = lint_mps(value, "8.9")
    assert any(problem.startswith(path + ":") and expected in problem for problem in problems), problems


def test_linter_refuses_mps_resources_other_than_full_gpus():
    doc = {
        "version": "v1",
        "sharing": {"mps": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}},
    }
    assert lint_device_plugin_config(doc) == [
        "sharing.mps.resources[0].name: MPS shares only nvidia.com/gpu, got nvidia.com/mig-1g.10gb"
    ]
