# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The devices the plan predicts for NVIDIA's DRA driver (plugin_utils/_plan/dra.py), allocated by the real
kube-scheduler of the test bed's Kubernetes (tests/harness/control_plane.py, resource.k8s.io/v1).

A ResourceSlice holding the predicted devices of one A100-SXM4-80GB node is published through the API, as the
driver's kubelet plugin publishes it, with the minor numbers a real host of that product reports; the
DeviceClasses select devices as the driver's chart does (type "gpu" or "mig" under gpu.nvidia.com). Pods whose
claims select by the predicted attributes are then bound to the node with the predicted devices, and a claim no
predicted device satisfies leaves its pod unschedulable. No kubelet runs: what is proven is the scheduler's
allocation, not a container seeing its device.
"""

import re
import time

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.capacity import GpuLayout
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.dra import (
    DRIVER_NAME,
    device_names,
    predict_node_devices,
)

NODE = "gpu-dra-1"
NAMESPACE = "default"
PRODUCT = find_product("NVIDIA A100-SXM4-80GB")
# GPU 2 in MIG mode with two 3g.40gb instances, the others whole.
LAYOUTS = [GpuLayout.of(False), GpuLayout.of(False), GpuLayout.of(True, {"3g.40gb": 2}), GpuLayout.of(False)]
NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}


def recorded_minors(published_nvsmi_dir):
    text = (published_nvsmi_dir / "a100-sxm4-80gb" / "nvidia-smi-a-gls.txt").read_text(encoding="utf-8")
    return [int(value) for value in re.findall(r"^\s*Minor Number\s*:\s*(\d+)\s*$", text, re.M)]


@pytest.fixture(scope="module")
def api(own_control_plane):
    from kubernetes import client, config

    return config.new_client_from_config(config_file=str(own_control_plane["dir"] / "admin.kubeconfig")), client


@pytest.fixture(scope="module")
def published(api, published_nvsmi_dir):
    """The node, the chart's two DeviceClasses and the ResourceSlice of the predicted devices."""
    api_client, client = api
    core, resource = client.CoreV1Api(api_client), client.ResourceV1Api(api_client)
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    # What a kubelet reports: without room for pods the scheduler fits none ("Too many pods"). The pods tolerate the
    # not-ready taint the API gives a Node it creates.
    room = {"pods": "110", "cpu": "8", "memory": "64Gi"}
    core.patch_node_status(NODE, {"status": {"capacity": room, "allocatable": room}})
    for kind in ("gpu", "mig"):
        resource.create_device_class(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": f"{kind}.nvidia.com"},
                "spec": {
                    "selectors": [
                        {
                            "cel": {
                                "expression": f"device.driver == '{DRIVER_NAME}' && "
                                f"device.attributes['{DRIVER_NAME}'].type == '{kind}'"
                            }
                        }
                    ]
                },
            }
        )
    devices = predict_node_devices(PRODUCT, LAYOUTS)
    names = device_names(devices, recorded_minors(published_nvsmi_dir))
    resource.create_resource_slice(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{NODE}-{DRIVER_NAME}"},
            "spec": {
                "driver": DRIVER_NAME,
                "nodeName": NODE,
                "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": name, "attributes": device["attributes"], "capacity": device["capacity"]}
                    for name, device in zip(names, devices, strict=True)
                ],
            },
        }
    )
    return names


def claim_pod(api, name, device_class, expression, count=1):
    """A ResourceClaim asking COUNT devices of DEVICE_CLASS that match the CEL EXPRESSION, and a pod using it."""
    api_client, client = api
    client.ResourceV1Api(api_client).create_namespaced_resource_claim(
        NAMESPACE,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": device_class,
                                "selectors": [{"cel": {"expression": expression}}],
                                "allocationMode": "ExactCount",
                                "count": count,
                            },
                        }
                    ]
                }
            },
        },
    )
    client.CoreV1Api(api_client).create_namespaced_pod(
        NAMESPACE,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "tolerations": [NOT_READY],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
                # Never pulled: no kubelet runs here.
                "containers": [
                    {"name": "main", "image": "registry.invalid/none", "resources": {"claims": [{"name": "gpu"}]}}
                ],
            },
        },
    )


def scheduled(api, name, timeout=60):
    """(node the pod is bound to, allocated device names) once the scheduler decided, or (None, reason)."""
    api_client, client = api
    core, resource = client.CoreV1Api(api_client), client.ResourceV1Api(api_client)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = core.read_namespaced_pod(name, NAMESPACE)
        if pod.spec.node_name:
            claim = resource.read_namespaced_resource_claim(name, NAMESPACE)
            results = claim.status.allocation.devices.results
            return pod.spec.node_name, sorted((result.driver, result.pool, result.device) for result in results)
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.reason == "Unschedulable":
                return None, condition.message
        time.sleep(0.5)
    pytest.fail(f"pod {name}: neither bound nor unschedulable after {timeout} s")


def test_the_scheduler_allocates_a_whole_gpu_by_the_predicted_product_name(api, published):
    claim_pod(api, "whole-gpu", "gpu.nvidia.com", f"device.attributes['{DRIVER_NAME}'].productName == '{PRODUCT.name}'")

    node, allocated = scheduled(api, "whole-gpu")

    assert node == NODE, allocated  # else the scheduler's reason
    assert len(allocated) == 1
    assert allocated[0][:2] == (DRIVER_NAME, NODE)
    # Whole GPUs are the MIG-disabled ones: minors 3, 4 and 6 of the recorded host.
    assert allocated[0][2] in {"gpu-3", "gpu-4", "gpu-6"}


def test_the_scheduler_allocates_both_predicted_mig_devices_by_profile_and_memory(api, published):
    expression = (
        f"device.attributes['{DRIVER_NAME}'].profile == '3g.40gb' && "
        f"device.capacity['{DRIVER_NAME}'].memory.compareTo(quantity('40Gi')) < 0 && "
        f"device.attributes['{DRIVER_NAME}'].cudaComputeCapability.isGreaterThan(semver('7.5.0'))"
    )
    claim_pod(api, "two-mig", "mig.nvidia.com", expression, count=2)

    node, allocated = scheduled(api, "two-mig")

    assert node == NODE
    assert [device for _driver, _pool, device in allocated] == ["gpu-5-mig-3g40gb-9-0", "gpu-5-mig-3g40gb-9-4"]


def test_a_device_the_prediction_does_not_hold_leaves_the_pod_unschedulable(api, published):
    claim_pod(api, "no-7g", "mig.nvidia.com", f"device.attributes['{DRIVER_NAME}'].profile == '7g.80gb'")

    node, reason = scheduled(api, "no-7g")

    assert node is None
    assert "cannot allocate all claims" in reason
