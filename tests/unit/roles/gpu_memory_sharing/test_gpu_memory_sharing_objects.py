# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_memory_sharing role against the real upstream files: gpushare's pinned manifests (their sha256 and
the objects deleted by name) and HAMi's chart 2.10.0 rendered by Helm with the values the role builds."""

import hashlib
import json
import pathlib
import subprocess

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.helm import FilterModule
from ansible_collections.gpuops.cluster.plugins.plugin_utils.memory_sharing import (
    gpushare_objects,
    hami_values,
    object_keys,
)

REPO = pathlib.Path(__file__).resolve().parents[4]
ROLE = REPO / "roles" / "gpu_memory_sharing"
# Unchanged upstream copies (../shared/manifests/README.md names the commits), beside the checkout.
MANIFESTS = REPO.parent / "shared" / "manifests" / "gpushare"
HAMI_CHART = REPO.parent / "shared" / "charts" / "hami-2.10.0.tgz"
HELM = REPO / ".cache" / "helm" / "v3.17.2" / "helm"
ROLE_VARS = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text(encoding="utf-8"))

needs_manifests = pytest.mark.skipif(not MANIFESTS.is_dir(), reason=f"gpushare's manifests are not at {MANIFESTS}")


def _manifest_objects():
    documents = []
    for item in ROLE_VARS["__gpu_memory_sharing_gpushare_files"]:
        documents += list(yaml.safe_load_all((MANIFESTS / item["file"]).read_text(encoding="utf-8")))
    return gpushare_objects(documents, DEFAULTS["gpu_memory_sharing_gpushare_extender_node_selector"])


@needs_manifests
def test_pinned_sha256_are_those_of_the_upstream_files():
    for item in ROLE_VARS["__gpu_memory_sharing_gpushare_files"]:
        assert hashlib.sha256((MANIFESTS / item["file"]).read_bytes()).hexdigest() == item["sha256"], item["file"]


def test_pinned_urls_name_a_commit_and_the_file():
    for item in ROLE_VARS["__gpu_memory_sharing_gpushare_files"]:
        repo, commit, *path = (
            item["url"].removeprefix("https://raw.githubusercontent.com/AliyunContainerService/").split("/")
        )
        assert repo in ("gpushare-scheduler-extender", "gpushare-device-plugin")
        assert len(commit) >= 7 and all(c in "0123456789abcdef" for c in commit)
        # The local name: the repository's short name for the extender's file, the upstream name otherwise.
        assert item["file"].endswith(path[-1])


@needs_manifests
def test_objects_deleted_on_removal_are_exactly_those_applied():
    assert object_keys(_manifest_objects()) == ROLE_VARS["__gpu_memory_sharing_gpushare_objects"]


@needs_manifests
def test_applied_objects_run_the_extender_on_rke2_servers_and_the_plugin_on_gpushare_nodes():
    objects = {(obj["kind"], obj["metadata"]["name"]): obj for obj in _manifest_objects()}
    extender = objects[("Deployment", "gpushare-schd-extender")]["spec"]["template"]["spec"]
    assert extender["nodeSelector"] == {"node-role.kubernetes.io/control-plane": "true"}
    plugin = objects[("DaemonSet", "gpushare-device-plugin-ds")]["spec"]["template"]["spec"]
    assert plugin["nodeSelector"] == {"gpushare": "true"}
    # The NodePort the scheduler configuration's urlPrefix calls (http://127.0.0.1:32766/gpushare-scheduler).
    assert objects[("Service", "gpushare-schd-extender")]["spec"]["ports"][0]["nodePort"] == 32766


def _render(values):
    result = subprocess.run(
        [str(HELM), "template", "hami", str(HAMI_CHART), "--namespace", "kube-system", "-f", "-"],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=True,
    )
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.mark.skipif(not (HAMI_CHART.is_file() and HELM.is_file()), reason="HAMi's chart or Helm 3 is missing")
def test_hami_chart_renders_the_plans_node_config_runtime_class_and_selector():
    capacity = {
        "nodes": {
            "gpu-l4-1": {
                "memory_sharing": {"backend": "hami", "split": 4, "memory_scaling": 1.5, "core_scaling": 1},
                "resources": {"nvidia.com/gpu": 16},
                "labels": {"gpu": "on", "nvidia.com/gpu.deploy.device-plugin": "false"},
            }
        }
    }
    rendered = _render(hami_values(capacity))
    by_kind = {}
    for doc in rendered:
        by_kind.setdefault(doc["kind"], []).append(doc)
    configmap = next(doc for doc in by_kind["ConfigMap"] if doc["metadata"]["name"] == "hami-device-plugin")
    assert json.loads(configmap["data"]["config.json"])["nodeconfig"] == [
        {
            "name": "gpu-l4-1",
            "operatingmode": "hami-core",
            "devicesplitcount": 4,
            "devicememoryscaling": 1.5,
            "devicecorescaling": 1,
            "migstrategy": "none",
        }
    ]
    daemonset = next(doc for doc in by_kind["DaemonSet"] if doc["metadata"]["name"] == "hami-device-plugin")
    assert daemonset["spec"]["template"]["spec"]["runtimeClassName"] == "nvidia"
    assert daemonset["spec"]["template"]["spec"]["nodeSelector"] == {"gpu": "on"}
    # RKE2's RuntimeClass is used, not created by the chart.
    assert "RuntimeClass" not in by_kind
    scheduler_config = yaml.safe_load(
        next(doc for doc in by_kind["ConfigMap"] if doc["metadata"]["name"] == "hami-scheduler-device")["data"][
            "device-config.yaml"
        ]
    )
    assert scheduler_config["nvidia"]["deviceSplitCount"] == 4
    assert scheduler_config["nvidia"]["runtimeClassName"] == "nvidia"


def test_helm_problem_names_this_roles_variable():
    # As the role's preflight calls it: the binary, and the role variable that names it.
    problem = FilterModule().filters()["helm_problem"]
    variable = "gpu_memory_sharing_helm_binary"
    assert problem({"rc": 0, "stdout": "v3.17.2+gcc0d3a5\n"}, "helm", variable) == ""
    message = problem({"rc": 0, "stdout": "v4.0.0+g1\n"}, "/usr/bin/helm", variable)
    assert "gpu_memory_sharing_helm_binary" in message and "gpu_operator" not in message
    assert "not found or not executable" in problem({"rc": 2, "msg": "No such file"}, "nohelm", variable)
