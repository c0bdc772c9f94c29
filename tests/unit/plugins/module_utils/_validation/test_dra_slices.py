# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node's published ResourceSlices against the plan's dra.json (module_utils/_validation/dra_slices.py).

The published devices are built here as the driver's kubelet plugin writes them (cmd/gpu-kubelet-plugin
deviceinfo.go, mig.go): names with the GPU's minor number, more attributes than the plan predicts, a whole GPU's
memory in NVML's bytes."""

import copy

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.dra_slices import (
    node_differences,
    published_devices,
    quantity_bytes,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import predict_node_devices

NODE = "gpu-a100-1"
DRIVER = "gpu.nvidia.com"
A100 = find_product("NVIDIA A100-SXM4-80GB")
# GPU 2 with two 3g.40gb MIG devices, the others whole; minors 3 to 6 as a recorded A100-SXM4-80GB host reports.
PLANNED = predict_node_devices(
    A100, [GpuLayout.of(False), GpuLayout.of(False), GpuLayout.of(True, {"3g.40gb": 2}), GpuLayout.of(False)]
)
MINORS = (3, 4, 5, 6)


def as_published(planned, minors=MINORS):
    """The devices as the driver publishes them for PLANNED."""
    devices = []
    for device in planned:
        published = copy.deepcopy({key: device[key] for key in ("name", "attributes", "capacity")})
        published["name"] = published["name"].replace("{minor}", str(minors[device["gpu"]]))
        published["attributes"]["uuid"] = {"string": f"GPU-{device['gpu']}-{device['name']}"}
        published["attributes"]["driverVersion"] = {"version": "580.95.5"}
        if not device["memory_exact"]:
            # NVML's total is a few KiB above the whole MiB nvidia-smi prints.
            mib = quantity_bytes(device["capacity"]["memory"]["value"])
            published["capacity"]["memory"] = {"value": str(mib + 4096)}
        devices.append(published)
    return devices


def resource_slice(devices, generation=1, pool=NODE, driver=DRIVER):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "spec": {
            "driver": driver,
            "nodeName": pool,
            "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def differences(published):
    return node_differences(NODE, PLANNED, published)


def test_what_the_driver_publishes_for_the_plan_matches_it_whatever_the_minors_and_order():
    published = as_published(PLANNED, minors=(8, 9, 10, 11))

    assert differences(list(reversed(published))) == []


def test_the_newest_generation_of_the_nodes_pool_is_read_and_other_pools_ignored():
    stale = resource_slice(as_published(PLANNED[:1]), generation=1)
    current = resource_slice(as_published(PLANNED), generation=2)
    other = resource_slice(as_published(PLANNED[:1]), pool="gpu-a100-2")

    assert published_devices([stale, current, other], DRIVER, NODE) == current["spec"]["devices"]
    assert published_devices([current], "other.example.com", NODE) == []


def test_a_gpu_that_is_not_published_is_named_by_its_index():
    published = [device for device in as_published(PLANNED) if device["name"] != "gpu-6"]

    assert differences(published) == [f"{NODE}: GPU 3 is not published; planned gpu-{{minor}}"]


def test_a_different_mig_layout_names_the_gpu_and_both_device_lists():
    planned_other = predict_node_devices(A100, [GpuLayout.of(True, {"7g.80gb": 1})])
    published = [d for d in as_published(PLANNED) if "mig" not in d["name"]]
    published += as_published([{**planned_other[0], "gpu": 2}])

    assert differences(published) == [
        f"{NODE}: GPU 2 (minor 5): devices gpu-5-mig-7g80gb-0-0, planned gpu-5-mig-3g40gb-9-0, gpu-5-mig-3g40gb-9-4"
    ]


def test_an_attribute_that_differs_is_named_with_both_values():
    published = as_published(PLANNED)
    published[0]["attributes"]["productName"] = {"string": "NVIDIA A100-SXM4-40GB"}

    assert differences(published) == [
        f"{NODE}: GPU 0 (minor 3): gpu-3: productName 'NVIDIA A100-SXM4-40GB', planned 'NVIDIA A100-SXM4-80GB'"
    ]


@pytest.mark.parametrize(
    ("name", "memory", "expected"),
    [
        # A whole GPU: up to 1 MiB above the catalog's whole MiB is NVML's rounding.
        ("gpu-3", str(81920 * 2**20 + 2**20 - 1), []),
        ("gpu-3", str(81920 * 2**20 + 2**20), ["gpu-3: memory 85900394496, planned 80Gi"]),
        ("gpu-3", "79Gi", ["gpu-3: memory 79Gi, planned 80Gi"]),
        # A MIG device's memory is its profile's whole MiB, exactly.
        ("gpu-5-mig-3g40gb-9-0", "40193Mi", ["gpu-5-mig-3g40gb-9-0: memory 40193Mi, planned 40192Mi"]),
    ],
)
def test_memory_is_compared_with_the_slack_nvml_rounding_leaves(name, memory, expected):
    published = as_published(PLANNED)
    next(device for device in published if device["name"] == name)["capacity"]["memory"] = {"value": memory}
    gpu = {"gpu-3": 0, "gpu-5-mig-3g40gb-9-0": 2}[name]

    assert differences(published) == [f"{NODE}: GPU {gpu} (minor {3 + gpu}): {line}" for line in expected]


def test_published_gpus_and_names_the_plan_does_not_have_are_named():
    published = as_published(PLANNED) + as_published([{**PLANNED[0], "gpu": 4}], minors=(0, 0, 0, 0, 9))
    published.append({"name": "gpu-vfio-0", "attributes": {}})

    assert differences(published) == [
        f"{NODE}: minor 9 publishes gpu-9, not planned",
        f"{NODE}: publishes gpu-vfio-0, no GPU or MIG device name the driver gives",
    ]


def test_a_node_that_publishes_nothing_names_every_planned_gpu():
    assert differences([]) == [
        f"{NODE}: GPU 0 is not published; planned gpu-{{minor}}",
        f"{NODE}: GPU 1 is not published; planned gpu-{{minor}}",
        f"{NODE}: GPU 2 is not published; planned gpu-{{minor}}-mig-3g40gb-9-0, gpu-{{minor}}-mig-3g40gb-9-4",
        f"{NODE}: GPU 3 is not published; planned gpu-{{minor}}",
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("80Gi", 80 << 30), ("23034Mi", 23034 << 20), ("1024", 1024), ("2k", 2000), ("1.5Gi", None), ("", None)],
)
def test_quantities_are_read_as_kubernetes_writes_them(value, expected):
    assert quantity_bytes(value) == expected
