# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuops_memory_sharing: what HAMi and gpushare nodes advertise and account, and every bad intent refused.

Memory figures are the GPU catalog's, each from a recorded nvidia-smi output (docs/gpu-catalog.md):
NVIDIA L4 23034 MiB, NVIDIA H100 80GB HBM3 81559 MiB. The expected numbers below are worked by hand
from the upstream arithmetic cited in plugins/plugin_utils/_plan/memory_sharing.py.
"""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import DEVICE_PLUGIN_CONFIG_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.gpushare import EXTENDER as GPUSHARE_EXTENDER
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.gpushare import memory_gib as gpushare_memory_gib
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.hami import (
    registered_memory as hami_registered_memory,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors
from ansible_collections.gpuops.cluster.tests.unit.gpushare_upstream import GPUSHARE_EXTENDER as UPSTREAM_EXTENDER

L4 = {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4}
H100 = {"gpuops_gpu_product": "NVIDIA H100 80GB HBM3", "gpuops_gpu_count": 8}
HAMI = {"backend": "hami"}
GPUSHARE = {"backend": "gpushare"}


def plan(strategy="mixed", **hosts):
    return plan_cluster({host: {"gpuops_mig_strategy": strategy, **intent} for host, intent in hosts.items()})


def problems(**hosts):
    with pytest.raises(IntentErrors) as caught:
        plan(**hosts)
    return [str(error) for error in caught.value.errors]


def test_catalog_memory_the_figures_below_rest_on():
    assert find_product("NVIDIA L4").memory_mib == 23034
    assert find_product("NVIDIA H100 80GB HBM3").memory_mib == 81559


def test_hami_l4_with_defaults_registers_ten_devices_per_gpu_and_accounts_all_memory_and_cores():
    node = plan(l4=L4 | {"gpuops_memory_sharing": HAMI}).capacity["nodes"]["l4"]
    assert node["resources"] == {"nvidia.com/gpu": 40}
    assert node["memory_sharing"] == {
        "backend": "hami",
        "split": 10,
        "memory_scaling": 1,
        "core_scaling": 1,
        "scheduler_accounts": {"nvidia.com/gpucores": 400, "nvidia.com/gpumem": 4 * 23034},
    }


def test_hami_h100_scaling_truncates_per_gpu_as_register_go_does():
    sharing = {"backend": "hami", "split": 7, "memory_scaling": 1.5, "core_scaling": 0.5}
    node = plan(h100=H100 | {"gpuops_mig_config": "all-disabled", "gpuops_memory_sharing": sharing}).capacity["nodes"][
        "h100"
    ]
    assert node["resources"] == {"nvidia.com/gpu": 56}
    # int32(float64(81559) * 1.5) = 122338 (122338.5 truncated) per GPU, 50 cores per GPU.
    assert node["memory_sharing"]["scheduler_accounts"] == {"nvidia.com/gpucores": 400, "nvidia.com/gpumem": 8 * 122338}


def test_hami_split_may_be_text_from_an_ini_inventory():
    node = plan(l4=L4 | {"gpuops_memory_sharing": {"backend": "hami", "split": "3"}}).capacity["nodes"]["l4"]
    assert node["resources"] == {"nvidia.com/gpu": 12}
    assert node["memory_sharing"]["split"] == 3


@pytest.mark.parametrize(
    ("core_scaling", "cores_per_gpu"),
    [(1, 100), (2, 200), (0.29, 28), (0.01, 1)],  # int32(0.29 * 100) is 28: 0.29 * 100 = 28.999999999999996
)
def test_hami_cores_per_gpu_are_truncated_like_go(core_scaling, cores_per_gpu):
    sharing = {"backend": "hami", "core_scaling": core_scaling}
    accounts = plan(l4=L4 | {"gpuops_memory_sharing": sharing}).capacity["nodes"]["l4"]["memory_sharing"][
        "scheduler_accounts"
    ]
    assert accounts["nvidia.com/gpucores"] == 4 * cores_per_gpu


def test_hami_memory_of_one_gpu():
    assert hami_registered_memory(23034, 1) == 23034
    assert hami_registered_memory(23034, 1.0) == 23034
    assert hami_registered_memory(23034, 2) == 46068
    assert hami_registered_memory(23034, 0.3) == 6910  # 6910.2 truncated


def test_gpushare_counts_whole_gib_per_gpu():
    # nvidia.go setGPUMemory with --memory-unit=GiB: MiB / 1024 as unsigned integers.
    assert gpushare_memory_gib(23034) == 22
    assert gpushare_memory_gib(81559) == 79
    assert gpushare_memory_gib(1023) == 0


def test_gpushare_l4_and_h100_advertise_gpu_mem_in_gib_and_gpu_count():
    nodes = plan(
        l4=L4 | {"gpuops_memory_sharing": GPUSHARE},
        h100=H100 | {"gpuops_memory_sharing": GPUSHARE},
    ).capacity["nodes"]
    assert nodes["l4"]["resources"] == {"aliyun.com/gpu-count": 4, "aliyun.com/gpu-mem": 88}
    assert nodes["h100"]["resources"] == {"aliyun.com/gpu-count": 8, "aliyun.com/gpu-mem": 632}
    assert nodes["l4"]["memory_sharing"] == {"backend": "gpushare", "scheduler_accounts": {}}


def test_labels_select_the_backend_and_turn_nvidia_device_plugin_off_but_keep_gfd_labels():
    nodes = plan(
        hami=L4 | {"gpuops_memory_sharing": HAMI},
        share=L4 | {"gpuops_memory_sharing": GPUSHARE},
        plain=L4,
    ).capacity["nodes"]
    hami, share, plain = nodes["hami"]["labels"], nodes["share"]["labels"], nodes["plain"]["labels"]
    assert hami["gpu"] == "on" and "gpushare" not in hami
    assert share["gpushare"] == "true" and "gpu" not in share
    for labels in (hami, share):
        assert labels["nvidia.com/gpu.deploy.device-plugin"] == "false"
        assert DEVICE_PLUGIN_CONFIG_LABEL not in labels
        # GFD still runs there and labels the GPUs unshared.
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-L4"
        assert labels["nvidia.com/gpu.memory"] == "23034"
        assert labels["nvidia.com/gpu.replicas"] == "1"
    assert "nvidia.com/gpu.deploy.device-plugin" not in plain
    assert plain[DEVICE_PLUGIN_CONFIG_LABEL] == "default"
    assert nodes["plain"]["memory_sharing"] is None


def test_memory_shared_nodes_get_no_device_plugin_config_key():
    cluster = plan(
        hami=L4 | {"gpuops_memory_sharing": HAMI},
        sliced=L4 | {"gpuops_time_slicing": {"replicas": 2}},
    )
    keys = set(cluster.device_plugin_configmap["data"])
    assert keys == {"default", cluster.capacity["nodes"]["sliced"]["labels"][DEVICE_PLUGIN_CONFIG_LABEL]}
    # The GPU Operator values stay as they are: its device plugin is off on those nodes by their label.
    assert cluster.gpu_operator_values["devicePlugin"]["config"]["default"] == "default"


def test_scheduler_extenders_only_when_a_node_uses_gpushare():
    assert plan(hami=L4 | {"gpuops_memory_sharing": HAMI}, plain=L4).scheduler_extenders == []
    extenders = plan(share=L4 | {"gpuops_memory_sharing": GPUSHARE}, other=H100 | {"gpuops_memory_sharing": GPUSHARE})
    # One entry, as gpushare-scheduler-extender's config/scheduler-policy-config.yaml declares it.
    assert extenders.scheduler_extenders == [UPSTREAM_EXTENDER]
    # A copy: a caller changing it leaves the module's entry alone.
    extenders.scheduler_extenders[0]["managedResources"].append({})
    assert len(GPUSHARE_EXTENDER["managedResources"]) == 1


def test_table_says_the_sharing_and_totals_add_the_new_resources():
    cluster = plan(
        hami=L4 | {"gpuops_memory_sharing": {"backend": "hami", "split": 4, "memory_scaling": 2}},
        share=L4 | {"gpuops_memory_sharing": GPUSHARE},
        plain=L4,
    )
    rows = {line.split()[0]: line for line in cluster.table.splitlines()[2:-1]}
    assert "hami x4 memory x2" in rows["hami"]
    assert "gpushare" in rows["share"] and "aliyun.com/gpu-mem=88" in rows["share"]
    assert " - " in rows["plain"]
    assert cluster.capacity["totals"] == {"aliyun.com/gpu-count": 4, "aliyun.com/gpu-mem": 88, "nvidia.com/gpu": 20}


def test_mig_all_disabled_is_fine_and_mig_enabled_is_refused():
    assert plan(h100=H100 | {"gpuops_mig_config": "all-disabled", "gpuops_memory_sharing": HAMI})
    found = problems(h100=H100 | {"gpuops_mig_config": "all-1g.10gb", "gpuops_memory_sharing": HAMI})
    assert found == [
        "h100: gpuops_memory_sharing: cannot be combined with gpuops_mig_config all-1g.10gb, which enables MIG on "
        "GPU 0, 1, 2, 3, 4, 5, 6, 7: memory sharing splits whole GPUs; use all-disabled or remove gpuops_mig_config"
    ]


def test_time_slicing_and_mps_on_a_memory_shared_node_are_refused():
    found = problems(
        sliced=L4 | {"gpuops_time_slicing": {"replicas": 2}, "gpuops_memory_sharing": HAMI},
        mps=L4 | {"gpuops_mps": {"replicas": 2}, "gpuops_memory_sharing": GPUSHARE},
    )
    assert any(
        p.startswith("sliced: gpuops_memory_sharing: cannot be combined with gpuops_time_slicing") for p in found
    )
    assert any(p.startswith("mps: gpuops_memory_sharing: cannot be combined with gpuops_mps") for p in found)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hami", "gpuops_memory_sharing: must be a mapping such as {backend: hami, split: 10}"),
        ({}, "gpuops_memory_sharing.backend: is not set; valid: hami, gpushare"),
        ({"backend": "hamy"}, "gpuops_memory_sharing.backend: unknown backend 'hamy'; did you mean 'hami'?"),
        ({"backend": "nvidia"}, "gpuops_memory_sharing.backend: unknown backend 'nvidia'; valid: hami"),
        ({"backend": "hami", "split": 0}, "gpuops_memory_sharing.split: must be a whole number of 1 or more"),
        ({"backend": "hami", "split": -2}, "gpuops_memory_sharing.split: must be a whole number of 1 or more"),
        ({"backend": "hami", "split": 2.5}, "gpuops_memory_sharing.split: must be a whole number of 1 or more"),
        ({"backend": "hami", "split": True}, "gpuops_memory_sharing.split: must be a whole number of 1 or more"),
        ({"backend": "hami", "splits": 4}, "gpuops_memory_sharing.splits: unknown key; did you mean 'split'?"),
        ({"backend": "hami", "memory_scaling": 0}, "gpuops_memory_sharing.memory_scaling: must be a number greater"),
        ({"backend": "hami", "memory_scaling": "2"}, "gpuops_memory_sharing.memory_scaling: must be a number greater"),
        ({"backend": "hami", "core_scaling": -1}, "gpuops_memory_sharing.core_scaling: must be a number greater"),
        ({"backend": "hami", "core_scaling": 0.001}, "gpuops_memory_sharing.core_scaling: must be 0.01 or more"),
        ({"backend": "gpushare", "split": 4}, "gpuops_memory_sharing.split: applies to backend hami only"),
        (
            {"backend": "gpushare", "memory_scaling": 2},
            "gpuops_memory_sharing.memory_scaling: applies to backend hami only",
        ),
    ],
)
def test_bad_values_name_host_and_key_path(value, expected):
    found = problems(l4=L4 | {"gpuops_memory_sharing": value})
    assert any(p.startswith(f"l4: {expected}") for p in found), found


def test_every_problem_of_every_host_is_reported_at_once():
    found = problems(
        a=L4 | {"gpuops_memory_sharing": {"backend": "hami", "split": 0, "core_scaling": 0}},
        b=L4 | {"gpuops_memory_sharing": {"backend": "gpu-share"}, "gpuops_time_slicing": {"replicas": 2}},
    )
    assert [p.split(":")[0:2] for p in found] == [
        ["a", " gpuops_memory_sharing.split"],
        ["a", " gpuops_memory_sharing.core_scaling"],
        ["b", " gpuops_memory_sharing.backend"],
        ["b", " gpuops_memory_sharing"],
    ]


def test_a_product_without_recorded_memory_is_refused_with_the_way_out():
    found = problems(h800={"gpuops_gpu_product": "NVIDIA H800", "gpuops_gpu_count": 8, "gpuops_memory_sharing": HAMI})
    assert found == [
        "h800: gpuops_memory_sharing: memory sharing needs the memory of NVIDIA H800, which the GPU catalog does not "
        "record; record it in the catalog from the product's nvidia-smi output (docs/gpu-catalog.md)"
    ]
    found = problems(
        new={"gpuops_gpu_product": "NVIDIA Example 48GB", "gpuops_gpu_count": 1, "gpuops_memory_sharing": HAMI}
    )
    assert found == [
        "new: gpuops_memory_sharing: memory sharing needs the memory of NVIDIA Example 48GB, which the GPU catalog "
        "does not record; describe the product in gpuops_gpu_catalog_extra (name, memory_mib, compute_capability)"
    ]


def test_a_product_described_by_the_inventory_is_shared_with_its_memory():
    extra = [{"name": "NVIDIA Example 48GB", "memory_mib": 49140, "compute_capability": "8.9"}]
    intent = {
        "gpuops_gpu_product": "NVIDIA Example 48GB",
        "gpuops_gpu_count": 2,
        "gpuops_gpu_catalog_extra": extra,
        "gpuops_memory_sharing": GPUSHARE,
    }
    assert plan(rtx=intent).capacity["nodes"]["rtx"]["resources"] == {
        "aliyun.com/gpu-count": 2,
        "aliyun.com/gpu-mem": 2 * 47,
    }


def test_memory_scaling_beyond_what_hami_registers_is_refused():
    found = problems(h100=H100 | {"gpuops_memory_sharing": {"backend": "hami", "memory_scaling": 30000}})
    assert len(found) == 1 and "more than HAMi registers per GPU (a 32-bit integer" in found[0]


def test_null_means_no_memory_sharing():
    node = plan(l4=L4 | {"gpuops_memory_sharing": None}).capacity["nodes"]["l4"]
    assert node["memory_sharing"] is None and node["resources"] == {"nvidia.com/gpu": 4}
