# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU node stand-in's HAMi and gpushare device plugins against a real API server
(tests/harness/control-plane, on ports of its own): the objects rendered from chart hami-2.10.0 and
gpushare's DaemonSet are created through the API, and the stand-in finds them, writes the nodes'
status and HAMi's annotation through it. Skipped where the control plane's binaries are missing."""

import copy
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("kubernetes.client")  # .client: tests/testbed/kubernetes, a folder, would pass for "kubernetes"
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node import controller, hardware
from ansible_collections.gpuops.cluster.tests.doubles.gpu_node.cluster import Cluster

REPO = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
HAMI_OBJECTS = json.loads((FIXTURES / "hami-2.10.0-device-plugin.json").read_text())
GPUSHARE_DS = json.loads((FIXTURES / "gpushare-device-plugin-ds.json").read_text())[0]
REGISTER = "hami.io/node-nvidia-register"
NODES = {
    name: hardware.Node(name, "NVIDIA L4", 2, 23034, (8, 9), "0x27b810de")
    for name in ("gpu-hami-1", "gpu-gpushare-1", "gpu-plain-1")
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def api(tmp_path_factory, test_kubernetes):
    directory = tmp_path_factory.mktemp("control-plane")
    environment = {
        **os.environ,
        "GPUOPS_HARNESS_ETCD_PORT": str(free_port()),
        "GPUOPS_HARNESS_API_PORT": str(free_port()),
        "GPUOPS_HARNESS_START_TIMEOUT": "120",
    }
    script = [sys.executable, str(REPO / "tests/harness/control_plane.py")]
    started = subprocess.run(
        [*script, "start", str(directory)], env=environment, capture_output=True, text=True, check=False
    )
    if started.returncode != 0:
        subprocess.run([*script, "stop", str(directory)], env=environment, check=False)
        pytest.fail(f"control plane did not start: {started.stdout}{started.stderr}")
    try:
        yield Cluster(str(directory / "admin.kubeconfig"))
    finally:
        subprocess.run([*script, "stop", str(directory)], env=environment, check=False)


def wait(check, what: str, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def without_privileged(item: dict) -> dict:
    """The harness's kube-apiserver runs without --allow-privileged, which refuses the chart's
    privileged device-plugin container; the stand-in does not read that field."""
    item = copy.deepcopy(item)
    if item["kind"] == "DaemonSet":
        for container in item["spec"]["template"]["spec"]["containers"]:
            (container.get("securityContext") or {}).pop("privileged", None)
    return item


def test_hami_and_gpushare_nodes_through_a_real_api_server(api):
    for item in [without_privileged(item) for item in [*HAMI_OBJECTS, GPUSHARE_DS]]:
        if item["kind"] == "ConfigMap":
            api.core.create_namespaced_config_map(item["metadata"]["namespace"], item)
        else:
            api.apps.create_namespaced_daemon_set(item["metadata"]["namespace"], item)
    stand_in = controller.Controller(api, NODES, "gpu-operator")
    stand_in.register()
    deploy_off = {"nvidia.com/gpu.deploy.device-plugin": "false"}
    api.patch_labels("gpu-hami-1", {"gpu": "on", **deploy_off})
    api.patch_labels("gpu-gpushare-1", {"gpushare": "true", **deploy_off})

    def reconciled():
        stand_in.reconcile()
        nodes = api.nodes()
        return REGISTER in (nodes["gpu-hami-1"]["metadata"].get("annotations") or {})

    wait(reconciled, "HAMi's registration annotation")
    stand_in.reconcile()
    nodes = api.nodes()
    hami, gpushare, plain = (nodes[name] for name in NODES)
    assert hami["status"]["allocatable"]["nvidia.com/gpu"] == "20"  # 2 GPUs x the chart's split 10
    registered = json.loads(hami["metadata"]["annotations"][REGISTER])
    assert [(device.get("index", 0), device["count"], device["devmem"]) for device in registered] == [
        (0, 10, 23034),
        (1, 10, 23034),
    ]
    assert {key: gpushare["status"]["capacity"][key] for key in ("aliyun.com/gpu-mem", "aliyun.com/gpu-count")} == {
        "aliyun.com/gpu-mem": "44",
        "aliyun.com/gpu-count": "2",
    }
    assert "nvidia.com/gpu" not in gpushare["status"]["capacity"]
    # No ClusterPolicy and no sharing label: no plugin advertises anything there.
    assert not [key for key in plain["status"]["capacity"] if "/" in key]
