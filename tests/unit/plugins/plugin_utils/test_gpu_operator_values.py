# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU Operator release's values: plan, role, registry mirror and the user's dict, in that order."""

import copy
import io
import os
import pathlib
import tarfile

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_values import (
    IMAGE_REPOSITORIES,
    merge_values,
    referenced_configmaps,
    registry_override,
    registry_problem,
    release_values,
    values_diff,
)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[4]

# What cluster_plan hands over for gpuops_mig_manager: operator (plugins/plugin_utils/_plan/documents.py).
PLAN_VALUES = {
    "operator": {"defaultRuntime": "containerd"},
    "driver": {"enabled": False},
    "toolkit": {"enabled": False},
    "mig": {"strategy": "mixed"},
    "devicePlugin": {"config": {"create": False, "name": "gpuops-device-plugin-config", "default": "default"}},
    "migManager": {"enabled": True, "config": {"create": False, "name": "gpuops-mig-parted-config", "default": ""}},
}


def _chart_path():
    folder = os.environ.get("GPUOPS_CHARTS", str(REPO_ROOT.parent / "shared" / "charts"))
    path = pathlib.Path(folder) / "gpu-operator-v26.7.0.tgz"
    if not path.is_file():
        pytest.skip(f"the gpu-operator chart is not at {path} (set GPUOPS_CHARTS to its folder)")
    return path


def test_user_values_merge_last_and_recursively():
    user = {"devicePlugin": {"config": {"default": "time-slicing-1a2b3c4d"}}, "dcgmExporter": {"enabled": False}}
    values = release_values(PLAN_VALUES, "", user)
    # The user's key wins, its siblings from the plan stay.
    assert values["devicePlugin"]["config"] == {
        "create": False,
        "name": "gpuops-device-plugin-config",
        "default": "time-slicing-1a2b3c4d",
    }
    assert values["dcgmExporter"] == {"enabled": False}
    assert values["mig"] == {"strategy": "mixed"}


def test_lists_and_scalars_are_replaced_not_merged():
    base = {"daemonsets": {"tolerations": [{"key": "a"}], "priorityClassName": "x"}}
    merged = merge_values(base, {"daemonsets": {"tolerations": [{"key": "b"}]}})
    assert merged == {"daemonsets": {"tolerations": [{"key": "b"}], "priorityClassName": "x"}}
    # A dict replaces a scalar and the other way round, as a values file over the chart's values.
    assert merge_values({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}
    assert merge_values({"a": {"b": 2}}, {"a": None}) == {"a": None}


def test_merge_changes_neither_input():
    plan = copy.deepcopy(PLAN_VALUES)
    user = {"mig": {"strategy": "single"}}
    release_values(plan, "registry.example.com", user)
    assert plan == PLAN_VALUES
    assert user == {"mig": {"strategy": "single"}}


def test_the_role_turns_the_crd_upgrade_hook_off():
    values = release_values(PLAN_VALUES)
    assert values["operator"] == {"defaultRuntime": "containerd", "upgradeCRD": False}
    # A user who wants the chart's hook back can have it: the user's dict is last.
    assert release_values(PLAN_VALUES, "", {"operator": {"upgradeCRD": True}})["operator"]["upgradeCRD"] is True


def test_registry_override_keeps_each_image_path():
    values = release_values(PLAN_VALUES, "registry.example.com:5000/mirror")
    assert values["devicePlugin"]["repository"] == "registry.example.com:5000/mirror/nvidia"
    assert values["migManager"]["repository"] == "registry.example.com:5000/mirror/nvidia/cloud-native"
    assert values["dcgmExporter"]["repository"] == "registry.example.com:5000/mirror/nvidia/k8s"
    assert values["driver"]["manager"]["repository"] == "registry.example.com:5000/mirror/nvidia/cloud-native"
    assert (
        values["node-feature-discovery"]["image"]["repository"]
        == "registry.example.com:5000/mirror/nfd/node-feature-discovery"
    )
    # The plan's settings of the same sections stay.
    assert values["devicePlugin"]["config"]["name"] == "gpuops-device-plugin-config"
    assert values["migManager"]["enabled"] is True


def test_user_repository_beats_the_registry_override():
    values = release_values(PLAN_VALUES, "mirror.example.com", {"devicePlugin": {"repository": "other.example.com/dp"}})
    assert values["devicePlugin"]["repository"] == "other.example.com/dp"
    assert values["gfd"]["repository"] == "mirror.example.com/nvidia"


def test_no_registry_changes_no_repository():
    assert registry_override("") == {}
    assert "repository" not in release_values(PLAN_VALUES)["devicePlugin"]


@pytest.mark.parametrize(
    ("registry", "problem"),
    [
        ("registry.example.com", None),
        ("registry.example.com:5000/mirror/nvcr", None),
        ("https://registry.example.com", "without a scheme"),
        ("registry.example.com/", "must not end with '/'"),
        ("registry example.com", "contain spaces"),
    ],
)
def test_registry_is_checked(registry, problem):
    found = registry_problem(registry)
    if problem is None:
        assert found is None
    else:
        assert problem in found
        with pytest.raises(ValueError, match="gpu_operator_image_registry"):
            release_values(PLAN_VALUES, registry)


def _repositories(values, path=()):
    """{values path: repository} of every non-empty `repository` string in a values document."""
    found = {}
    if isinstance(values, dict):
        for key, value in values.items():
            if key == "repository" and isinstance(value, str) and value:
                found[path] = value
            else:
                found.update(_repositories(value, (*path, key)))
    return found


def test_override_covers_every_image_of_the_pinned_chart():
    """Every image repository in the chart's values.yaml (and its NFD subchart's) is in the table, with its default."""
    with tarfile.open(_chart_path(), "r:gz") as archive:
        values = yaml.safe_load(archive.extractfile("gpu-operator/values.yaml").read())
        nfd = yaml.safe_load(archive.extractfile("gpu-operator/charts/node-feature-discovery/values.yaml").read())
    found = _repositories(values)
    found.update({("node-feature-discovery", *path): repo for path, repo in _repositories(nfd).items()})
    assert found == IMAGE_REPOSITORIES


def test_values_diff_is_empty_for_equal_values_in_any_key_order():
    reordered = dict(reversed(list(release_values(PLAN_VALUES).items())))
    assert values_diff(release_values(PLAN_VALUES), reordered) == ""


def test_values_diff_shows_what_changes():
    diff = values_diff(
        release_values(PLAN_VALUES), release_values(PLAN_VALUES, "", {"dcgmExporter": {"enabled": False}})
    )
    assert "+dcgmExporter:\n+  enabled: false\n" in diff
    assert diff.startswith("--- gpu-operator values (installed)\n+++ gpu-operator values (this run)\n")
    # A first install compares with nothing: every value is new.
    assert "+mig:" in values_diff({}, PLAN_VALUES)


def _configmap(name):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "gpu-operator"},
        "data": {},
    }


DOCUMENTS = {
    "device_plugin_configmap": _configmap("gpuops-device-plugin-config"),
    "mig_parted_configmap": _configmap("gpuops-mig-parted-config"),
    "gpu_operator_values": PLAN_VALUES,
}


def test_configmaps_the_values_name_are_created():
    names = [doc["metadata"]["name"] for doc in referenced_configmaps(DOCUMENTS, release_values(PLAN_VALUES))]
    assert names == ["gpuops-device-plugin-config", "gpuops-mig-parted-config"]


def test_mig_configmap_only_while_the_mig_manager_runs():
    host_managed = merge_values(PLAN_VALUES, {"migManager": {"enabled": False}})
    assert [doc["metadata"]["name"] for doc in referenced_configmaps(DOCUMENTS, host_managed)] == [
        "gpuops-device-plugin-config"
    ]


def test_configmaps_the_chart_creates_or_the_user_renamed_are_left_alone():
    chart_creates = merge_values(
        PLAN_VALUES, {"devicePlugin": {"config": {"create": True}}, "migManager": {"config": {"name": "mine"}}}
    )
    assert referenced_configmaps(DOCUMENTS, chart_creates) == []


def test_values_survive_a_yaml_round_trip_as_helm_returns_them():
    """kubernetes.core.helm compares `helm get values` (YAML) with the values it is given: equal means unchanged."""
    values = release_values(
        PLAN_VALUES, "registry.example.com", {"daemonsets": {"tolerations": [{"operator": "Exists"}]}}
    )
    assert yaml.safe_load(io.StringIO(yaml.safe_dump(values))) == values
