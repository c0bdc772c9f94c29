# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plan_cluster: exact capacity of a good inventory, and every bad intent reported at once."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._plan import cluster as plan_module
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.module_utils._plan.errors import IntentErrors

USER_CONFIGS = {
    "version": "v1",
    "mig-configs": {
        "half-small-half-medium": [
            {"devices": [0, 1, 2, 3], "mig-enabled": True, "mig-devices": {"1g.10gb": 7}},
            {"devices": [4, 5, 6, 7], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}},
        ],
        "too-many-small": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 8}}],
        "unplaceable": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2, "1g.20gb": 1}}],
        "forty-gb-profile": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.5gb": 7}}],
    },
}
A100 = {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 8}
H100 = {"gpuops_gpu_product": "NVIDIA-H100-80GB-HBM3", "gpuops_gpu_count": 8}
L4 = {"gpuops_gpu_product": "L4", "gpuops_gpu_count": 4}


def cluster(strategy="mixed", **hosts):
    return {
        host: {"gpuops_mig_strategy": strategy, "gpuops_mig_configs": USER_CONFIGS, **intent}
        for host, intent in hosts.items()
    }


def good_cluster():
    return cluster(
        a100=A100 | {"gpuops_mig_config": "half-small-half-medium"},
        h100=H100 | {"gpuops_mig_config": "all-balanced"},
        h100_unmanaged=H100,
        l4=L4 | {"gpuops_time_slicing": {"replicas": 4, "rename_by_default": True}},
    )


def test_good_inventory_exact_capacity():
    plan = plan_cluster(good_cluster())
    nodes = plan.capacity["nodes"]
    assert {host: node["resources"] for host, node in nodes.items()} == {
        "a100": {"nvidia.com/mig-1g.10gb": 28, "nvidia.com/mig-3g.40gb": 8},
        "h100": {"nvidia.com/mig-1g.10gb": 16, "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8},
        "h100_unmanaged": {"nvidia.com/gpu": 8},
        "l4": {"nvidia.com/gpu.shared": 16},
    }
    assert plan.capacity["totals"] == {
        "nvidia.com/gpu": 8,
        "nvidia.com/gpu.shared": 16,
        "nvidia.com/mig-1g.10gb": 44,
        "nvidia.com/mig-2g.20gb": 8,
        "nvidia.com/mig-3g.40gb": 16,
    }
    assert nodes["a100"]["gpu_product"] == "NVIDIA A100-SXM4-80GB"
    # gpuops_mig_manager host (default): the mig role applies layouts, no node carries the operator's label.
    assert not any("nvidia.com/mig.config" in node["labels"] for node in nodes.values())
    assert nodes["h100_unmanaged"]["mig_config"] is None
    assert any(
        "h100_unmanaged" in note and "does not touch MIG" in note and "assumes MIG off" in note for note in plan.notes
    )


def test_device_plugin_configmap_one_key_per_distinct_config():
    plan = plan_cluster(good_cluster())
    data = plan.device_plugin_configmap["data"]
    nodes = plan.capacity["nodes"]
    l4_key = nodes["l4"]["labels"]["nvidia.com/device-plugin.config"]
    assert set(data) == {"default", l4_key}
    assert nodes["a100"]["labels"]["nvidia.com/device-plugin.config"] == "default"
    assert data["default"] == {"version": "v1", "flags": {"migStrategy": "mixed"}}
    assert data[l4_key]["sharing"]["timeSlicing"] == {
        "renameByDefault": True,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
    }
    assert plan.device_plugin_configmap["metadata"] == {
        "name": "gpuops-device-plugin-config",
        "namespace": "gpu-operator",
        "labels": {"app.kubernetes.io/managed-by": "gpuops.cluster"},
    }


def test_gpu_operator_values_and_mig_parted_document():
    plan = plan_cluster(good_cluster(), {"rke2": True})
    values = plan.gpu_operator_values
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {
        "enabled": False,
        "env": [{"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}],
    }
    assert values["mig"] == {"strategy": "mixed"}
    assert values["devicePlugin"]["config"]["default"] == "default"
    # The collection's mig role owns MIG: the operator's mig-manager must not run beside it.
    assert values["migManager"] == {"enabled": False}
    configs = plan.mig_parted_config["mig-configs"]
    assert configs["half-small-half-medium"] == USER_CONFIGS["mig-configs"]["half-small-half-medium"]
    assert configs["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    assert "all-balanced" in configs
    assert "CONTAINERD_CONFIG" not in str(values)
    assert "env" not in plan_cluster(good_cluster(), {"rke2": False}).gpu_operator_values["toolkit"]


def test_operator_mig_manager_gets_the_configmap_labels_and_leaves_unlabelled_nodes_alone():
    nodes = good_cluster()
    for intent in nodes.values():
        intent["gpuops_mig_manager"] = "operator"
    plan = plan_cluster(nodes)
    assert plan.gpu_operator_values["migManager"] == {
        "enabled": True,
        # An empty default: the operator labels unlabelled nodes only for the default all-disabled.
        "config": {"create": False, "name": "gpuops-mig-parted-config", "default": ""},
    }
    labels = {host: node["labels"] for host, node in plan.capacity["nodes"].items()}
    assert labels["h100"]["nvidia.com/mig.config"] == "all-balanced"
    assert labels["a100"]["nvidia.com/mig.config"] == "half-small-half-medium"
    assert "nvidia.com/mig.config" not in labels["h100_unmanaged"]
    assert "nvidia.com/mig.config" not in labels["l4"]


def test_mig_manager_must_be_valid_and_cluster_wide():
    nodes = cluster(a=L4, b=L4, c=L4)
    nodes["a"]["gpuops_mig_manager"] = "operator"
    nodes["c"]["gpuops_mig_manager"] = "mig-parted"
    errors, _text = errors_of(nodes)
    assert errors[("c", "gpuops_mig_manager")] == "'mig-parted' is not valid; valid: host, operator"
    assert "same on every GPU node" in errors[("a", "gpuops_mig_manager")]
    assert "same on every GPU node" in errors[("b", "gpuops_mig_manager")]


def test_all_disabled_is_accepted_on_gpus_without_mig():
    no_mig = {"version": "v1", "mig-configs": {"plain": [{"devices": "all", "mig-enabled": False}]}}
    nodes = cluster(
        l4=L4 | {"gpuops_mig_config": "all-disabled", "gpuops_time_slicing": {"replicas": 2}},
        l4_own=L4 | {"gpuops_mig_config": "plain"},
        a100=A100 | {"gpuops_mig_config": "all-disabled"},
    )
    nodes["l4_own"]["gpuops_mig_configs"] = no_mig
    plan = plan_cluster(nodes)
    resources = {host: node["resources"] for host, node in plan.capacity["nodes"].items()}
    assert resources == {
        "l4": {"nvidia.com/gpu": 8},
        "l4_own": {"nvidia.com/gpu": 4},
        "a100": {"nvidia.com/gpu": 8},
    }
    assert plan.table.count("no MIG") == 2


def test_one_invalid_user_config_does_not_hide_the_others():
    configs = {
        "version": "v1",
        "mig-configs": {
            "broken": [{"devices": "all", "mig-enabled": "yes"}],
            "good": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}],
            "too-many": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 8}}],
        },
    }
    nodes = cluster(
        uses_broken=A100 | {"gpuops_mig_config": "broken"},
        uses_good=A100 | {"gpuops_mig_config": "good"},
        uses_too_many=A100 | {"gpuops_mig_config": "too-many"},
    )
    for intent in nodes.values():
        intent["gpuops_mig_configs"] = configs
    errors, _text = errors_of(nodes)
    assert "mig-configs.broken[0]" in errors[("uses_broken", "gpuops_mig_configs")]
    assert errors[("uses_broken", "gpuops_mig_config")] == (
        "MIG config 'broken' in gpuops_mig_configs is invalid (see the gpuops_mig_configs errors)"
    )
    # The valid configs stay defined and are checked in full: the good one passes, the other's own
    # problem (8 x 1g.10gb) is reported, not "undefined".
    assert ("uses_good", "gpuops_mig_config") not in errors
    assert "at most 7" in errors[("uses_too_many", "gpuops_mig_config")]


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (None, "is not set; give the number of GPUs per node, a whole number such as 8"),
        ("\u00b2", "must be a whole number of GPUs per node such as 8 or \"8\", got '\u00b2'"),
        ("x", "must be a whole number of GPUs per node"),
        ("4.0", "must be a whole number of GPUs per node"),
        (4.0, "must be a whole number of GPUs per node"),
        (True, "must be a whole number of GPUs per node"),
        ("-2", "must be a whole number of GPUs per node"),
        (-2, "must be 1 or more GPUs per node, got -2"),
    ],
)
def test_bad_gpu_counts_are_reported_not_raised(count, expected):
    intent = dict(L4)
    if count is None:
        del intent["gpuops_gpu_count"]
    else:
        intent["gpuops_gpu_count"] = count
    errors, _text = errors_of(cluster(bad=intent, bad_too=L4 | {"gpuops_time_slicing": {"replicas": "x"}}))
    assert expected in errors[("bad", "gpuops_gpu_count")]
    # The rest of the list survives.
    assert "whole number" in errors[("bad_too", "gpuops_time_slicing.replicas")]


def test_ascii_digit_strings_from_ini_or_extra_vars_are_numbers():
    nodes = cluster(
        l4=L4
        | {"gpuops_gpu_count": "4", "gpuops_time_slicing": {"replicas": "3", "resources": {"nvidia.com/gpu": "2"}}}
    )
    plan = plan_cluster(nodes)
    assert plan.capacity["nodes"]["l4"]["gpu_count"] == 4
    assert plan.capacity["nodes"]["l4"]["resources"] == {"nvidia.com/gpu": 8}
    key = plan.capacity["nodes"]["l4"]["labels"]["nvidia.com/device-plugin.config"]
    assert plan.device_plugin_configmap["data"][key]["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 2}
    ]


def test_user_config_overrides_builtin_of_same_name():
    own = {"version": "v1", "mig-configs": {"all-balanced": [{"devices": "all", "mig-enabled": False}]}}
    nodes = cluster(h100=H100 | {"gpuops_mig_config": "all-balanced"})
    nodes["h100"]["gpuops_mig_configs"] = own
    plan = plan_cluster(nodes)
    assert plan.mig_parted_config["mig-configs"]["all-balanced"] == own["mig-configs"]["all-balanced"]
    assert plan.capacity["nodes"]["h100"]["resources"] == {"nvidia.com/gpu": 8}


def test_builtins_of_different_products_are_kept_apart_by_device_filter():
    nodes = cluster(
        a40=A100 | {"gpuops_gpu_product": "NVIDIA A100-SXM4-40GB", "gpuops_mig_config": "all-balanced"},
        a80=A100 | {"gpuops_mig_config": "all-balanced"},
    )
    plan = plan_cluster(nodes)
    entries = plan.mig_parted_config["mig-configs"]["all-balanced"]
    assert {tuple(entry["device-filter"]) for entry in entries} == {("0x20B010DE",), ("0x20B210DE",)}
    assert plan.capacity["nodes"]["a40"]["resources"]["nvidia.com/mig-1g.5gb"] == 16
    assert plan.capacity["nodes"]["a80"]["resources"]["nvidia.com/mig-1g.10gb"] == 16


def errors_of(nodes):
    with pytest.raises(IntentErrors) as raised:
        plan_cluster(nodes)
    return {(error.host, error.variable): error.message for error in raised.value.errors}, str(raised.value)


def test_every_bad_input_is_reported_at_once_with_host_variable_and_valid_values():
    errors, text = errors_of(
        cluster(
            beyond_limit=A100 | {"gpuops_mig_config": "too-many-small"},
            unplaceable=A100 | {"gpuops_mig_config": "unplaceable"},
            mig_on_l4=L4 | {"gpuops_mig_config": "all-1g.10gb"},
            unknown_product=A100 | {"gpuops_gpu_product": "NVIDIA A200"},
            undefined_config=A100 | {"gpuops_mig_config": "all-tiny"},
            replicas_one=L4 | {"gpuops_time_slicing": {"replicas": 1}},
            replicas_text=L4 | {"gpuops_time_slicing": {"replicas": "four"}},
            misspelt=L4 | {"gpuops_time_slicing": {"replica": 4}},
            zero_gpus=A100 | {"gpuops_gpu_count": 0},
            other_memory_size=A100 | {"gpuops_mig_config": "forty-gb-profile"},
        )
    )
    expected = {
        ("beyond_limit", "gpuops_mig_config"): "at most 7",
        ("unplaceable", "gpuops_mig_config"): "cannot be placed",
        ("mig_on_l4", "gpuops_mig_config"): "does not support MIG",
        ("unknown_product", "gpuops_gpu_product"): "valid: NVIDIA A100-SXM4-40GB",
        ("undefined_config", "gpuops_mig_config"): "valid for NVIDIA A100-SXM4-80GB: all-1g.10gb",
        ("replicas_one", "gpuops_time_slicing.replicas"): ">= 2",
        ("replicas_text", "gpuops_time_slicing.replicas"): "whole number",
        ("misspelt", "gpuops_time_slicing.replica"): "did you mean 'replicas'?",
        ("zero_gpus", "gpuops_gpu_count"): "1 or more",
        ("other_memory_size", "gpuops_mig_config"): "valid: 1g.10gb",
    }
    for (host, variable), fragment in expected.items():
        assert fragment in errors[(host, variable)], (host, variable, errors.get((host, variable)))
        assert f"{host}: {variable}: " in text
    assert len(text.splitlines()) >= len(expected)


def test_single_strategy_refuses_two_profiles_on_a_node():
    errors, _text = errors_of(cluster("single", h100=H100 | {"gpuops_mig_config": "all-balanced"}))
    assert "one MIG profile per node" in errors[("h100", "gpuops_mig_config")]


def test_strategy_must_be_cluster_wide():
    nodes = cluster(a=L4, b=L4)
    nodes["b"]["gpuops_mig_strategy"] = "single"
    errors, _text = errors_of(nodes)
    assert "same on every GPU node" in errors[("a", "gpuops_mig_strategy")]
    assert "same on every GPU node" in errors[("b", "gpuops_mig_strategy")]


def test_time_slicing_override_for_a_resource_the_node_lacks():
    ts = {"resources": {"nvidia.com/mig-1g.5gb": 3}}
    errors, _text = errors_of(cluster(a100=A100 | {"gpuops_mig_config": "all-1g.10gb", "gpuops_time_slicing": ts}))
    message = errors[("a100", 'gpuops_time_slicing.resources["nvidia.com/mig-1g.5gb"]')]
    assert "nvidia.com/mig-1g.10gb" in message


def test_identical_nodes_are_planned_once(monkeypatch):
    calls = []
    real = plan_module._plan_node
    monkeypatch.setattr(plan_module, "_plan_node", lambda *args: calls.append(args) or real(*args))
    nodes = cluster(**{f"n{i:04d}": A100 | {"gpuops_mig_config": "all-balanced"} for i in range(1000)})
    plan = plan_cluster(nodes)
    assert len(calls) == 1
    assert plan.capacity["totals"]["nvidia.com/mig-1g.10gb"] == 16000


def test_errors_of_many_hosts_are_grouped_on_one_line():
    _errors, text = errors_of(cluster(**{f"n{i:02d}": A100 | {"gpuops_gpu_count": 0} for i in range(25)}))
    assert text == "n00, n01, n02, n03, n04, n05, n06, n07, n08, n09 and 15 more hosts: gpuops_gpu_count: " + (
        "must be 1 or more GPUs per node, got 0; remove the host from gpu_nodes if it has none"
    )
