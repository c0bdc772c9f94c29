# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plan_cluster: exact capacity of a good inventory, and every bad intent reported at once."""

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan import cluster as plan_module
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors

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


def test_manifests_hold_each_embedded_config_as_the_text_the_plan_file_has():
    plan = plan_cluster(good_cluster())
    manifests = plan.manifests(yaml.safe_dump)
    device_plugin = manifests["device_plugin_configmap"]
    assert device_plugin["metadata"] == plan.device_plugin_configmap["metadata"]
    assert {key: yaml.safe_load(text) for key, text in device_plugin["data"].items()} == (
        plan.device_plugin_configmap["data"]
    )
    assert all(isinstance(text, str) for text in manifests["mig_parted_configmap"]["data"].values())
    files = plan.files(yaml.safe_dump, str)
    assert yaml.safe_load(files["device-plugin-configmap.yaml"]) == device_plugin


def test_gpu_operator_values_and_mig_parted_document():
    plan = plan_cluster(good_cluster())
    values = plan.gpu_operator_values
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["mig"] == {"strategy": "mixed"}
    assert values["devicePlugin"]["config"]["default"] == "default"
    # The collection's mig role owns MIG: the operator's mig-manager must not run beside it.
    assert values["migManager"] == {"enabled": False}
    configs = plan.mig_parted_config["mig-configs"]
    assert configs["half-small-half-medium"] == USER_CONFIGS["mig-configs"]["half-small-half-medium"]
    assert configs["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    assert "all-balanced" in configs
    assert "CONTAINERD_CONFIG" not in str(values)


def test_operator_values_set_no_toolkit_env_while_the_toolkit_is_disabled():
    """NVIDIA/gpu-operator controllers/state_manager.go, ClusterPolicyController.isStateEnabled.

    state-container-toolkit runs only when Toolkit.IsEnabled(); toolkit.env feeds that state's
    DaemonSet (controllers/object_controls.go, TransformToolkit), so with toolkit.enabled false a
    CONTAINERD_SOCKET there configures nothing.
    """
    values = plan_cluster(good_cluster()).gpu_operator_values
    assert values["toolkit"] == {"enabled": False}


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


def test_cdi_is_enabled_in_the_operator_values_unless_the_inventory_turns_it_off():
    assert plan_cluster(good_cluster()).gpu_operator_values["cdi"] == {"enabled": True}
    nodes = good_cluster()
    for intent in nodes.values():
        intent["gpuops_cdi"] = False
    assert plan_cluster(nodes).gpu_operator_values["cdi"] == {"enabled": False}


def test_cdi_must_be_a_boolean_and_cluster_wide():
    nodes = cluster(a=L4, b=L4, c=L4)
    nodes["a"]["gpuops_cdi"] = False
    nodes["c"]["gpuops_cdi"] = "yes"
    errors, _text = errors_of(nodes)
    assert errors[("c", "gpuops_cdi")] == "'yes' is not valid; valid: true, false"
    nodes["c"]["gpuops_cdi"] = 1
    errors, _text = errors_of(nodes)
    # 1 == True in Python, but it is not a YAML boolean.
    assert errors[("c", "gpuops_cdi")] == "1 is not valid; valid: true, false"
    nodes["c"]["gpuops_cdi"] = True
    errors, _text = errors_of(nodes)
    assert "same on every GPU node" in errors[("a", "gpuops_cdi")]
    assert "same on every GPU node" in errors[("b", "gpuops_cdi")]


def test_mps_without_cdi_is_refused_naming_the_plugins_rule():
    nodes = cluster("none", l4=L4 | {"gpuops_mps": {"replicas": 4}, "gpuops_cdi": False})
    errors, _text = errors_of(nodes)
    assert "using MPS requires CDI" in errors[("l4", "gpuops_mps")]
    nodes["l4"]["gpuops_cdi"] = True
    assert plan_cluster(nodes).capacity["nodes"]["l4"]["resources"] == {"nvidia.com/gpu": 16}


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
            unknown_product=A100 | {"gpuops_gpu_product": "NVIDIA A200", "gpuops_mig_config": "all-1g.10gb"},
            unset_product={"gpuops_gpu_count": 1},
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
        ("unknown_product", "gpuops_mig_config"): "NVIDIA A200 is not in the GPU catalog",
        ("unset_product", "gpuops_gpu_product"): "is not set; valid: NVIDIA A100-SXM4-40GB",
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


def test_mixed_plans_all_enabled_and_warns_which_gpus_advertise_nothing():
    """NVIDIA/k8s-device-plugin internal/rm/device_map.go, assertAllMigDevicesAreValid (v0.16 and later).

    NVIDIA's own mig-parted config all-enabled (MIG on, no MIG device) only makes the plugin log
    "device N has no MIG devices configured" under mixed; single refuses it.
    """
    plan = plan_cluster(
        cluster(
            a100=A100 | {"gpuops_mig_config": "all-enabled"},
            a100_2=A100 | {"gpuops_mig_config": "all-enabled"},
            h100=H100 | {"gpuops_mig_config": "all-balanced"},
        )
    )
    assert plan.capacity["nodes"]["a100"]["resources"] == {}
    assert plan.capacity["totals"] == plan.capacity["nodes"]["h100"]["resources"]
    (note,) = [note for note in plan.notes if "no MIG device" in note]
    assert note.startswith("a100, a100_2: config all-enabled enables MIG with no MIG device on GPU 0, 1, 2, 3, 4, 5")
    assert "advertises nothing for those GPUs" in note
    errors, _text = errors_of(cluster("single", a100=A100 | {"gpuops_mig_config": "all-enabled"}))
    assert "refuses to start with mig strategy single" in errors[("a100", "gpuops_mig_config")]


def test_unknown_product_is_planned_whole_with_a_warning_and_did_you_mean():
    plan = plan_cluster(
        cluster(
            h100=H100 | {"gpuops_mig_config": "all-balanced"},
            typo=H100 | {"gpuops_gpu_product": "H100-SXM5-80GB", "gpuops_time_slicing": {"replicas": 2}},
        )
    )
    node = plan.capacity["nodes"]["typo"]
    assert node["gpu_product"] == "H100-SXM5-80GB"
    assert node["resources"] == {"nvidia.com/gpu": 16}
    # No catalog data: no memory, family or compute-capability labels are predicted.
    assert not any(key.endswith((".memory", ".family", "compute.major")) for key in node["labels"])
    assert node["labels"]["nvidia.com/mig.capable"] == "false"
    warning = next(note for note in plan.notes if "H100-SXM5-80GB" in note)
    assert "did you mean NVIDIA H100 80GB HBM3" in warning and "gpuops_gpu_catalog_extra" in warning
    # The other node's plan is untouched by the unknown one.
    assert plan.capacity["nodes"]["h100"]["gpu_product"] == "NVIDIA H100 80GB HBM3"


def test_unknown_product_refuses_mig_but_takes_all_disabled():
    errors, _text = errors_of(
        cluster(odd=L4 | {"gpuops_gpu_product": "NVIDIA X9", "gpuops_mig_config": "all-balanced"})
    )
    assert "all-disabled" in errors[("odd", "gpuops_mig_config")]
    plan = plan_cluster(cluster(odd=L4 | {"gpuops_gpu_product": "NVIDIA X9", "gpuops_mig_config": "all-disabled"}))
    assert plan.capacity["nodes"]["odd"]["resources"] == {"nvidia.com/gpu": 4}


EXTRA = [{"name": "NVIDIA X9", "memory_mib": 49152, "compute_capability": "8.9", "pci_device_id": "0x2FFF10DE"}]


def test_catalog_extra_describes_a_product_for_labels_without_a_warning():
    plan = plan_cluster(cluster(odd=L4 | {"gpuops_gpu_product": "NVIDIA X9", "gpuops_gpu_catalog_extra": EXTRA}))
    labels = plan.capacity["nodes"]["odd"]["labels"]
    assert labels["nvidia.com/gpu.memory"] == "49152"
    assert labels["nvidia.com/gpu.family"] == "ada-lovelace"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-X9"
    assert not any("NVIDIA X9" in note for note in plan.notes)
    errors, _text = errors_of(
        cluster(
            odd=L4
            | {"gpuops_gpu_product": "NVIDIA X9", "gpuops_gpu_catalog_extra": EXTRA, "gpuops_mig_config": "all-1g.10gb"}
        )
    )
    assert "described by gpuops_gpu_catalog_extra" in errors[("odd", "gpuops_mig_config")]


@pytest.mark.parametrize(
    ("extra", "variable", "fragment"),
    [
        ("NVIDIA X9", "gpuops_gpu_catalog_extra", "must be a list"),
        ([{"name": "NVIDIA X9"}], "gpuops_gpu_catalog_extra[0].memory_mib", "memory in MiB"),
        ([EXTRA[0] | {"compute_capability": 8.9}], "gpuops_gpu_catalog_extra[0].compute_capability", '"8.9"'),
        ([EXTRA[0] | {"pci_device_id": "x"}], "gpuops_gpu_catalog_extra[0].pci_device_id", "like 0x26B910DE"),
        ([EXTRA[0] | {"name": "NVIDIA L4"}], "gpuops_gpu_catalog_extra[0].name", "already in the catalog"),
        ([EXTRA[0] | {"mig": {}}], "gpuops_gpu_catalog_extra[0].mig", "unknown key"),
        ([EXTRA[0], EXTRA[0] | {"name": "nvidia-x9"}], "gpuops_gpu_catalog_extra[1].name", "described twice"),
    ],
)
def test_catalog_extra_is_validated(extra, variable, fragment):
    errors, _text = errors_of(cluster(odd=L4 | {"gpuops_gpu_catalog_extra": extra}))
    assert fragment in errors[("odd", variable)]


def test_undefined_mig_config_suggests_the_near_name():
    errors, _text = errors_of(cluster(h100=H100 | {"gpuops_mig_config": "all-balance"}))
    assert errors[("h100", "gpuops_mig_config")].endswith("did you mean all-balanced?")


def _one_config(name, *entries, **intent):
    configs = {"version": "v1", "mig-configs": {name: list(entries)}}
    return {"gpuops_mig_strategy": "mixed", "gpuops_mig_configs": configs, "gpuops_mig_config": name} | intent


def test_partial_config_leaves_unselected_gpus_alone_and_plans_them_as_mig_off():
    """NVIDIA/mig-parted cmd/nvidia-mig-parted/assert/assert.go WalkSelectedMigConfigForEachGPU applies an
    entry only to the GPUs api/spec/v1/helpers.go MatchesDevices/MatchesDeviceFilter select: GPU 2-7 of an
    8-GPU node stay as they are (the nvidia_mig module does the same)."""
    nodes = {"a100": A100 | _one_config("two", {"devices": [0, 1], "mig-enabled": True, "mig-devices": {"3g.40gb": 2}})}
    plan = plan_cluster(nodes)
    assert plan.capacity["nodes"]["a100"]["resources"] == {"nvidia.com/gpu": 6, "nvidia.com/mig-3g.40gb": 4}
    assert "two: 2x[2x3g.40gb]; 6x[not selected, left as is (planned as MIG off)]" in plan.table
    assert any(
        note.startswith("a100: no entry of config two selects GPU 2, 3, 4, 5, 6, 7")
        and "assumes they have MIG off" in note
        for note in plan.notes
    )


def test_config_that_selects_no_gpu_of_the_node_is_still_an_error():
    errors, _text = errors_of(
        {
            "a100": A100
            | _one_config("h100-only", {"devices": "all", "device-filter": "0x233010DE", "mig-enabled": False})
        }
    )
    assert (
        "no entry of config h100-only selects any GPU of NVIDIA A100-SXM4-80GB" in errors[("a100", "gpuops_mig_config")]
    )


def test_compute_instance_profile_is_planned_as_its_own_mig_device():
    """k8s-device-plugin internal/rm/device_map.go buildMigDeviceMap matches the MIG device's profile string,
    go-nvlib pkg/nvlib/device/mig_profile.go MigProfileInfo.String "1c.3g.40gb": resource mig-1c.3g.40gb."""
    config = _one_config(
        "ci", {"devices": "all", "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 1, "3g.40gb": 1}}
    ) | {"gpuops_mig_manager": "operator"}
    plan = plan_cluster({"a100": A100 | config})
    node = plan.capacity["nodes"]["a100"]
    assert node["resources"] == {"nvidia.com/mig-1c.3g.40gb": 8, "nvidia.com/mig-3g.40gb": 8}
    assert node["labels"]["nvidia.com/mig-1c.3g.40gb.slices.gi"] == "3"
    assert node["labels"]["nvidia.com/mig-1c.3g.40gb.slices.ci"] == "1"
    assert node["labels"]["nvidia.com/mig-1c.3g.40gb.product"] == "NVIDIA-A100-SXM4-80GB-MIG-1c.3g.40gb"
    # The mig role's nvidia_mig module creates them as mig-parted does (pkg/mig/config/config.go SetMigConfig):
    # the same plan with gpuops_mig_manager host.
    on_host = plan_cluster({"a100": A100 | config | {"gpuops_mig_manager": "host"}})
    assert on_host.capacity["nodes"]["a100"]["resources"] == node["resources"]


def test_compute_instances_of_one_gi_profile_share_it_in_the_plan():
    """mig-parted pkg/mig/config/config.go SetMigConfig creates "1c.3g.40gb": 3 as one 3g.40gb GI holding three
    1-slice CIs (reuseGI), and GetMigConfig counts them as three MIG devices: the plan accepts it on an
    A100-SXM4-80GB (three GIs of 3g.40gb would not fit, at most 2) and advertises 3 devices per GPU."""
    config = _one_config("ci", {"devices": "all", "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 3}})
    plan = plan_cluster({"a100": A100 | config})
    assert plan.capacity["nodes"]["a100"]["resources"] == {"nvidia.com/mig-1c.3g.40gb": 3 * 8}

    too_many = _one_config("ci", {"devices": "all", "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 7}})
    errors, _text = errors_of({"a100": A100 | too_many})
    message = errors[("a100", "gpuops_mig_config")]
    assert "profile 3g.40gb: 3 instances requested, at most 2 fit on NVIDIA A100-SXM4-80GB (7x1c.3g.40gb " in message


@pytest.mark.parametrize(
    "name",
    ["x" * 64, "my config", "team/a", "-leading-dash", "trailing."],
    ids=["long", "space", "slash", "dash", "dot"],
)
def test_operator_mode_rejects_config_names_that_are_not_label_values(name):
    """k8s.io/apimachinery pkg/util/validation/validation.go IsValidLabelValue: at most 63 characters,
    (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?; the name becomes the value of nvidia.com/mig.config
    (NVIDIA/gpu-operator mig-manager selects the config by that label)."""
    config = _one_config(name, {"devices": "all", "mig-enabled": False}) | {"gpuops_mig_manager": "operator"}
    errors, text = errors_of({"a100": A100 | config})
    assert "cannot be the value of the node label nvidia.com/mig.config" in errors[("a100", "gpuops_mig_config")]
    assert "a100: gpuops_mig_config: config name" in text
    # The same name is fine when the collection's mig role applies it (no label).
    assert plan_cluster({"a100": A100 | (config | {"gpuops_mig_manager": "host"})})


def test_plan_writes_the_mig_manager_configmap():
    """NVIDIA/gpu-operator: the mig-manager reads the mig-parted document from key config.yaml of the ConfigMap
    migManager.config.name (deployments/gpu-operator values.yaml, assets/state-mig-manager)."""
    plan = plan_cluster(good_cluster(), {"mig_configmap": "my-mig", "namespace": "gpus"})
    configmap = plan.mig_parted_configmap
    assert configmap["kind"] == "ConfigMap"
    assert configmap["metadata"]["name"] == "my-mig"
    assert configmap["metadata"]["namespace"] == "gpus"
    assert configmap["data"] == {"config.yaml": plan.mig_parted_config}
    files = plan.files(repr, repr)
    assert set(files) == set(plan_module.FILES)
    assert "'config.yaml': \"{'version': 'v1'" in files["mig-parted-configmap.yaml"]
