# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's DRA kubelet plugin against a real API server (tests/harness/control_plane.py, Kubernetes
built from Go modules): where a DaemonSet shaped as the driver chart's kubelet plugin selects a node, the stand-in
publishes the node's ResourceSlice through resource.k8s.io/v1, and the validation's comparison
(module_utils/_validation/dra_slices.py) finds it equal to the plan, or names the node and GPU that differ."""

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.dra_slices import (
    node_differences,
    published_devices,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import controller, dra_plugin, hardware
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.cluster import Cluster
from ansible_collections.gpuops.cluster.tests.unit.harness.dra_objects import KUBELET_PLUGIN, NAMESPACE
from ansible_collections.gpuops.cluster.tests.unit.harness.test_gpu_node_memory_sharing_api import wait

NODES = {name: hardware.Node(name, "NVIDIA L4", 2, 23034, (8, 9), "0x27b810de") for name in ("gpu-dra-1", "gpu-l4-1")}
INTENT = {
    "gpuops_gpu_product": "NVIDIA L4",
    "gpuops_gpu_count": 2,
    "rke2_version": "v1.36.3+rke2r1",
    "nvidia_driver_branch": "580",
}


@pytest.fixture(scope="module")
def cluster(own_control_plane):
    api = Cluster(str(own_control_plane["dir"] / "admin.kubeconfig"))
    api.core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    return api


def slices(api):
    return list(api.resource_slices(dra_plugin.DRIVER).values())


def test_the_dra_nodes_slice_is_published_as_planned_and_a_lost_gpu_names_the_node(cluster):
    plan = plan_cluster({"gpu-dra-1": {**INTENT, "gpuops_gpu_allocation": "dra"}, "gpu-l4-1": INTENT})
    planned = plan.dra["nodes"]["gpu-dra-1"]["devices"]
    stand_in = controller.Controller(cluster, NODES, "gpu-operator")
    stand_in.register()
    # The labels the plan gives the DRA node, and the GPU Operator's.
    cluster.patch_labels(
        "gpu-dra-1", {**plan.capacity["nodes"]["gpu-dra-1"]["labels"], "nvidia.com/gpu.present": "true"}
    )
    cluster.patch_labels("gpu-l4-1", {"nvidia.com/gpu.present": "true"})
    cluster.apps.create_namespaced_daemon_set(NAMESPACE, KUBELET_PLUGIN)

    def published():
        stand_in.reconcile()
        return published_devices(slices(cluster), dra_plugin.DRIVER, "gpu-dra-1")

    devices = wait(published, "the DRA node's ResourceSlice")
    assert node_differences("gpu-dra-1", planned, devices) == []
    # The node without the label has no slice: the DaemonSet does not select it.
    assert [item["spec"]["nodeName"] for item in slices(cluster)] == ["gpu-dra-1"]

    cluster.patch_annotations("gpu-dra-1", {"gpuops.test/lost-gpus": "1"})
    wait(lambda: len(published()) == 1, "the slice without the lost GPU")
    (item,) = slices(cluster)
    assert item["spec"]["pool"]["generation"] == 2
    assert node_differences("gpu-dra-1", planned, published()) == [
        "gpu-dra-1: GPU 1 is not published; planned gpu-{minor}"
    ]

    cluster.apps.delete_namespaced_daemon_set(KUBELET_PLUGIN["metadata"]["name"], NAMESPACE)

    def deleted():
        stand_in.reconcile()
        return not slices(cluster)

    wait(deleted, "the slice of a plugin that no longer runs to go")
