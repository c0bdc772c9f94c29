# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bounds of the intent: a number or name beyond what its consumer takes is an error naming the host and the
variable, found before the plan works with it (docs/plan.md, Bounds of the intent).

The first tests are the defects a fuzzing found: crashes (float infinity to int, an index-sized integer), a
plan that looped once per GPU of gpuops_gpu_count: 2147483648, and quantities no consumer takes.
"""

import time

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import setting_problem
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import lint_mig_parted_document
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import plan_layout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import lint_time_slicing

L4 = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4}
A100 = {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 8}
INT64_MAX = 2**63 - 1
# time_slicing.MAX_REPLICAS: an int64 over the most devices of one resource a node has (32 GPUs x 8 MIG devices).
MAX_REPLICAS = INT64_MAX // 256


def plan(**hosts):
    return plan_cluster({host: {"gpuops_mig_strategy": "single", **intent} for host, intent in hosts.items()})


def errors_of(**hosts):
    """{(host, variable): message} of the plan's IntentErrors."""
    with pytest.raises(IntentErrors) as caught:
        plan(**hosts)
    return {(error.host, error.variable): error.message for error in caught.value.errors}


def hami(**settings):
    return {"gpuops_memory_sharing": {"backend": "hami", **settings}}


def test_hami_core_scaling_beyond_an_int32_is_an_intent_error():
    # Was OverflowError: cannot convert float infinity to integer.
    errors = errors_of(l4=L4 | hami(core_scaling=1.0e308))
    assert (
        "must be at most 21474836.47 (HAMi registers Devcore = int32(100 * core_scaling)"
        in (errors[("l4", "gpuops_memory_sharing.core_scaling")])
    )


def test_hami_memory_scaling_beyond_an_int32_is_an_intent_error():
    errors = errors_of(l4=L4 | hami(memory_scaling=1.0e308))
    assert "must be at most 2147483647" in errors[("l4", "gpuops_memory_sharing.memory_scaling")]


@pytest.mark.parametrize("split", [2**31, 10**30, "1" + "0" * 30])
def test_hami_split_beyond_an_int32_is_an_intent_error(split):
    errors = errors_of(l4=L4 | hami(split=split))
    assert "at most 2147483647" in errors[("l4", "gpuops_memory_sharing.split")]


def test_hami_split_of_an_int32_is_planned_within_an_int64():
    node = plan(l4=L4 | hami(split=2**31 - 1)).capacity["nodes"]["l4"]
    assert node["resources"] == {"nvidia.com/gpu": 4 * (2**31 - 1)}


def test_hami_memory_beyond_an_int32_is_an_intent_error():
    extra = [{"name": "NVIDIA L40G", "memory_mib": 2**31, "compute_capability": "8.9"}]
    errors = errors_of(
        l40g={"gpuops_gpu_product": "NVIDIA L40G", "gpuops_gpu_count": 1, "gpuops_gpu_catalog_extra": extra} | hami()
    )
    assert "32-bit integer of MiB" in errors[("l40g", "gpuops_memory_sharing")]


@pytest.mark.parametrize("replicas", [10**30, str(10**30), MAX_REPLICAS + 1])
def test_time_slicing_replicas_beyond_an_int64_capacity_are_an_intent_error(replicas):
    # 10**30 was planned as nvidia.com/gpu: 4000000000000000000000000000000.
    errors = errors_of(l4=L4 | {"gpuops_time_slicing": {"replicas": replicas}})
    assert f"must be <= {MAX_REPLICAS}" in errors[("l4", "gpuops_time_slicing.replicas")]


def test_per_resource_replicas_beyond_an_int64_capacity_are_an_intent_error():
    errors = errors_of(l4=L4 | {"gpuops_time_slicing": {"resources": {"nvidia.com/gpu": 10**30}}})
    assert f"must be <= {MAX_REPLICAS}" in errors[("l4", 'gpuops_time_slicing.resources["nvidia.com/gpu"]')]


def test_the_most_replicas_keep_the_densest_node_within_an_int64():
    # 8 A100 of 7 MIG devices each, advertised as nvidia.com/gpu under strategy single.
    sharing = {"gpuops_mig_config": "all-1g.10gb", "gpuops_time_slicing": {"replicas": MAX_REPLICAS}}
    node = plan(a100=A100 | sharing).capacity["nodes"]["a100"]
    assert node["resources"] == {"nvidia.com/gpu": 56 * MAX_REPLICAS}
    assert 56 * MAX_REPLICAS <= INT64_MAX


def huge_mig_config(**entry):
    return {
        "gpuops_mig_config": "huge",
        "gpuops_mig_configs": {
            "version": "v1",
            "mig-configs": {"huge": [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 1}, **entry}]},
        },
    }


def test_mig_device_count_beyond_a_gpu_is_an_intent_error():
    # Was OverflowError: cannot fit 'int' into an index-sized integer.
    errors = errors_of(a100=A100 | huge_mig_config(**{"mig-devices": {"1g.10gb": 10**29}}))
    assert "count must be an integer >= 0, at most 8" in errors[("a100", "gpuops_mig_configs")]
    assert "is invalid" in errors[("a100", "gpuops_mig_config")]


def test_plan_layout_refuses_a_mig_device_count_no_gpu_holds():
    with pytest.raises(MigLayoutError, match="no GPU holds more than 8"):
        plan_layout(find_product("NVIDIA A100-SXM4-80GB"), {"1g.10gb": 10**29})


def test_a_compute_instance_count_too_long_for_int_is_an_unknown_profile():
    # Was ValueError: Exceeds the limit (4300 digits) for integer string conversion.
    errors = errors_of(a100=A100 | huge_mig_config(**{"mig-devices": {"9" * 5000 + "c.3g.40gb": 1}}))
    assert "unknown profile '9999" in errors[("a100", "gpuops_mig_config")]


def test_a_mig_profile_name_of_other_digits_than_ascii_is_refused():
    # go-nvlib reads the numbers with strconv.Atoi, which takes ASCII digits only.
    problems = lint_mig_parted_document(
        {
            "version": "v1",
            "mig-configs": {"a": [{"devices": "all", "mig-enabled": True, "mig-devices": {"\u0663g.40gb": 1}}]},
        }
    )
    assert any("is not a MIG profile name" in problem for problem in problems)


def test_mig_parted_gpu_index_beyond_a_node_is_an_intent_error():
    errors = errors_of(a100=A100 | huge_mig_config(devices=[0, 10**30]))
    assert "integers from 0 to 31" in errors[("a100", "gpuops_mig_configs")]


def test_mig_config_name_must_be_one_printable_line():
    # The mig role writes the name into a systemd unit's lines.
    problems = lint_mig_parted_document(
        {"version": "v1", "mig-configs": {"two\nlines": [{"devices": "all", "mig-enabled": False}]}}
    )
    assert any("a config name must be printable text on one line" in problem for problem in problems)


@pytest.mark.parametrize("count", [33, 2147483648, "2147483648", 10**30])
def test_gpu_count_beyond_a_node_is_refused_before_the_plan_loops(count):
    # 2147483648 looped once per GPU (10**7 took 22 s and 1 GB).
    started = time.monotonic()
    errors = errors_of(l4={"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": count})
    assert time.monotonic() - started < 1
    assert "must be at most 32 GPUs per node" in errors[("l4", "gpuops_gpu_count")]


def test_the_most_gpus_a_node_has_are_planned():
    assert plan(l4=L4 | {"gpuops_gpu_count": 32}).capacity["nodes"]["l4"]["resources"] == {"nvidia.com/gpu": 32}


def test_a_digit_string_too_long_for_int_is_an_intent_error():
    # Was ValueError: Exceeds the limit (4300 digits) for integer string conversion.
    errors = errors_of(l4=L4 | {"gpuops_time_slicing": {"replicas": "9" * 5000}})
    assert "must be a whole number" in errors[("l4", "gpuops_time_slicing.replicas")]


@pytest.mark.parametrize(
    ("intent", "variable"),
    [
        ({"gpuops_gpu_count": True}, "gpuops_gpu_count"),
        ({"gpuops_time_slicing": {"replicas": True}}, "gpuops_time_slicing.replicas"),
        ({"gpuops_mps": {"replicas": True}}, "gpuops_mps.replicas"),
        (hami(split=True), "gpuops_memory_sharing.split"),
        (hami(memory_scaling=True), "gpuops_memory_sharing.memory_scaling"),
        (hami(core_scaling=True), "gpuops_memory_sharing.core_scaling"),
    ],
)
def test_a_boolean_is_not_a_number(intent, variable):
    assert ("l4", variable) in errors_of(l4=L4 | intent)


@pytest.mark.parametrize("entry", [{"mig-devices": {"1g.10gb": True}}, {"devices": [True]}])
def test_a_boolean_is_not_a_mig_count_nor_a_gpu_index(entry):
    assert ("a100", "gpuops_mig_configs") in errors_of(a100=A100 | huge_mig_config(**entry))


@pytest.mark.parametrize(
    ("intent", "variable"),
    [
        ({"gpuops_mig_strategy": "x" * 10000}, "gpuops_mig_strategy"),
        ({"gpuops_gpu_count": "x" * 10000}, "gpuops_gpu_count"),
        ({"gpuops_time_slicing": {"replicas": "x" * 10000}}, "gpuops_time_slicing.replicas"),
        (hami(core_scaling="x" * 10000), "gpuops_memory_sharing.core_scaling"),
        ({"gpuops_memory_sharing": {"backend": "x" * 10000}}, "gpuops_memory_sharing.backend"),
        ({"gpuops_mig_config": "x" * 10000}, "gpuops_mig_config"),
        ({"gpuops_gpu_product": "x" * 10000}, "gpuops_gpu_product"),
    ],
)
def test_a_message_quotes_a_short_excerpt_of_a_long_value(intent, variable):
    message = errors_of(l4=L4 | intent)[("l4", variable)]
    assert "xxxx" in message
    assert len(message) < 400, message


def test_a_product_name_longer_than_nvml_prints_is_an_intent_error():
    errors = errors_of(x={"gpuops_gpu_product": "NVIDIA " + "X" * 100, "gpuops_gpu_count": 1})
    assert "nvidia-smi prints a product name of at most 95" in errors[("x", "gpuops_gpu_product")]


def test_catalog_extra_memory_beyond_what_nvml_reports_is_an_intent_error():
    extra = [{"name": "NVIDIA L40G", "memory_mib": 2**44, "compute_capability": "8.9"}]
    errors = errors_of(
        x={"gpuops_gpu_product": "NVIDIA L40G", "gpuops_gpu_count": 1, "gpuops_gpu_catalog_extra": extra}
    )
    assert "NVML reports a GPU's memory in bytes" in errors[("x", "gpuops_gpu_catalog_extra[0].memory_mib")]


def test_a_product_label_the_api_server_refuses_is_not_predicted():
    # GFD writes "NVIDIA-TITAN-X-(Pascal)" and node-feature-discovery drops it (k8s-device-plugin#514).
    labels = plan(x={"gpuops_gpu_product": "NVIDIA TITAN X (Pascal)", "gpuops_gpu_count": 1}).capacity["nodes"]["x"][
        "labels"
    ]
    assert "nvidia.com/gpu.product" not in labels
    assert labels["nvidia.com/gpu.count"] == "1"


@pytest.mark.parametrize(
    ("name", "value"),
    [("namespace", "gpu-operator\n"), ("device_plugin_configmap", "gpuops\n"), ("mig_configmap", "a.b\n")],
)
def test_a_setting_with_a_trailing_newline_is_refused(name, value):
    # re.match with "$" accepted the newline; the API server refuses it.
    assert setting_problem(name, value) is not None


def test_a_resource_name_with_a_trailing_newline_is_refused():
    assert lint_time_slicing({"resources": {"nvidia.com/gpu\n": 2}})
