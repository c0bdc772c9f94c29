# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The seam of the memory-sharing backends: every backend answers the whole interface, and a backend
registered in a test flows through the plan, the validation and the role's plugins with no other change."""

import ast
import pathlib

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.base import (
    VARIABLE,
    MemorySharingBackend,
    SharedUnit,
    SharingCapacityError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import checks, evaluate, manifests
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.memory_sharing import lint_memory_sharing
from ansible_collections.gpuops.cluster.plugins.plugin_utils.memory_sharing import backend_states, node_changes
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans

REPO = pathlib.Path(__file__).resolve().parents[5]
MODULE_UTILS = REPO / "plugins" / "module_utils"
# The generic code: it reaches a backend only through the registry.
GENERIC_FILES = (
    REPO / "plugins" / "plugin_utils" / "_plan" / "memory_sharing.py",
    MODULE_UTILS / "_validation" / "checks.py",
    MODULE_UTILS / "_validation" / "evaluate.py",
    MODULE_UTILS / "_validation" / "expectations.py",
    MODULE_UTILS / "_validation" / "manifests.py",
)
SLICE = "example.com/gpu-slice"
L4 = "NVIDIA L4"


class FakeShare(MemorySharingBackend):
    """A third backend that exists only here: `slices` pods per GPU, each asking one example.com/gpu-slice."""

    name = "fakeshare"
    title = "FakeShare"
    standing = "experimental"
    example = "{backend: fakeshare, slices: 2}"
    keys = ("slices",)
    other_keys_reason = "fakeshare takes slices only"
    node_labels = {"example.com/fakeshare": "on"}
    advertised_resources = (SLICE, "example.com/gpu-total")
    pod_resource = SLICE
    unallocatable_resources = ("example.com/gpu-total",)
    needs_helm = False
    pod_option_defaults = {"scheduler": "fake-scheduler"}

    def lint_keys(self, value):
        slices = value.get("slices", 2)
        return [] if isinstance(slices, int) and slices >= 1 else [f"{VARIABLE}.slices: must be 1 or more"]

    def normalize(self, value):
        return {"backend": self.name, "slices": value.get("slices", 2)}

    def capacity(self, memory_mib, count, sharing):
        return {SLICE: count * sharing["slices"], "example.com/gpu-total": count}, {"example.com/gpu-mib": count * 1}

    def describe(self, sharing):
        return f"fakeshare x{sharing['slices']}"

    def scheduler_extenders(self):
        return [{"urlPrefix": "http://127.0.0.1:1/fakeshare", "filterVerb": "filter"}]

    def plan_problems(self, where, node_plan):
        return [] if (node_plan.get("resources") or {}).get(SLICE) else [f"{where}: no {SLICE}"]

    def validation_unit(self, node_plan, resource):
        slices = node_plan["memory_sharing"]["slices"]
        advertised = node_plan["resources"][resource]
        return SharedUnit(slices, advertised, f"fakeshare, {slices} pods per GPU", SLICE, 1)

    def sharing_check_unit(self, unit, max_pods):
        return SharedUnit(unit.replicas, min(unit.advertised, max_pods), unit.sharing, unit.slice_resource, 1)

    def sharing_pod_limits(self, resource, slice_size, options):
        return {resource: str(slice_size)}

    def scheduler_name(self, options):
        return options["scheduler"]

    def sharing_pod_annotations(self):
        return {"example.com/fakeshare-check": "sharing"}


@pytest.fixture
def fake(monkeypatch):
    backend = FakeShare()
    monkeypatch.setitem(registry.BACKENDS, backend.name, backend)
    return backend


# Every backend answers the whole interface


def test_the_backends_in_the_order_messages_list_them():
    assert registry.names() == ("hami", "gpushare")
    assert registry.variable_keys() == ("backend", "split", "memory_scaling", "core_scaling")


@pytest.mark.parametrize("backend", registry.backends(), ids=registry.names())
def test_every_backend_implements_every_method_and_sets_every_attribute(backend):
    assert not type(backend).__abstractmethods__
    for attribute in MemorySharingBackend.__annotations__:
        assert hasattr(backend, attribute), attribute
    assert backend.name and backend.title and backend.standing and backend.example and backend.other_keys_reason
    assert backend.pod_resource in backend.advertised_resources
    assert set(backend.unallocatable_resources) <= set(backend.advertised_resources)
    sharing = backend.normalize({"backend": backend.name})
    assert backend.lint_keys(sharing) == []
    resources, _accounts = backend.capacity(23034, 2, sharing)
    assert set(resources) <= set(backend.advertised_resources)
    assert backend.describe(sharing)


def test_a_backend_without_an_attribute_or_a_method_is_refused():
    methods = {name: getattr(FakeShare, name) for name in MemorySharingBackend.__abstractmethods__}
    attributes = {name: getattr(FakeShare, name) for name in MemorySharingBackend.__annotations__}
    without_title = type("NoTitle", (MemorySharingBackend,), {**methods, **attributes, "title": None})
    del without_title.title
    with pytest.raises(TypeError, match="NoTitle does not set title"):
        without_title()  # pylint: disable=abstract-class-instantiated
    del methods["describe"]
    without_describe = type("NoDescribe", (MemorySharingBackend,), {**attributes, **methods})
    with pytest.raises(TypeError, match=r"abstract method.*describe"):
        without_describe()  # pylint: disable=abstract-class-instantiated


@pytest.mark.parametrize("path", GENERIC_FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_the_generic_code_names_no_backend(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    texts = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert texts.isdisjoint(registry.names())


# A backend registered in a test flows through everything


def test_the_plan_lints_a_new_backend_and_lists_it(fake):
    assert lint_memory_sharing({"backend": "fakeshare", "slices": 3}) == []
    assert lint_memory_sharing({"backend": "fakeshare", "slices": 0}) == [f"{VARIABLE}.slices: must be 1 or more"]
    (unknown,) = lint_memory_sharing({"backend": "nvidia"})
    assert unknown.endswith("valid: hami (maintained, recommended) or gpushare (legacy) or fakeshare (experimental)")
    (other,) = lint_memory_sharing({"backend": "fakeshare", "split": 4})
    assert other == (
        f"{VARIABLE}.split: applies to backend hami only; fakeshare takes slices only: remove split or use backend hami"
    )
    (foreign,) = lint_memory_sharing({"backend": "gpushare", "slices": 2})
    assert foreign.startswith(f"{VARIABLE}.slices: applies to backend fakeshare only; gpushare takes no other key")


def test_the_plan_gives_a_new_backend_its_capacity_labels_table_and_extenders(fake):
    cluster = plan_cluster(
        {
            "l4": {"gpuops_gpu_product": L4, "gpuops_gpu_count": 2, "gpuops_memory_sharing": {"backend": "fakeshare"}},
            "plain": {"gpuops_gpu_product": L4, "gpuops_gpu_count": 1},
        }
    )
    node = cluster.capacity["nodes"]["l4"]

    assert node["resources"] == {"example.com/gpu-total": 2, SLICE: 4}
    assert node["memory_sharing"] == {
        "backend": "fakeshare",
        "slices": 2,
        "scheduler_accounts": {"example.com/gpu-mib": 2},
    }
    assert node["labels"]["example.com/fakeshare"] == "on"
    assert node["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
    assert "fakeshare x2" in next(line for line in cluster.table.splitlines() if line.startswith("l4 "))
    assert cluster.scheduler_extenders == fake.scheduler_extenders()


class TooSmallShare(FakeShare):
    def capacity(self, memory_mib, count, sharing):
        raise SharingCapacityError(f"fakeshare cannot share {memory_mib} MiB")


def test_the_plan_says_what_a_new_backends_capacity_error_says(monkeypatch):
    monkeypatch.setitem(registry.BACKENDS, "fakeshare", TooSmallShare())
    with pytest.raises(IntentErrors) as caught:
        plan_cluster(
            {"l4": {"gpuops_gpu_product": L4, "gpuops_gpu_count": 1, "gpuops_memory_sharing": {"backend": "fakeshare"}}}
        )

    assert [str(error) for error in caught.value.errors] == [
        "l4: gpuops_memory_sharing: fakeshare cannot share 23034 MiB"
    ]


def fake_node():
    cluster = plan_cluster(
        {
            "l4": {
                "gpuops_gpu_product": L4,
                "gpuops_gpu_count": 2,
                "gpuops_memory_sharing": {"backend": "fakeshare", "slices": 3},
            }
        }
    )
    return checks.targets({"nodes": {"l4": cluster.capacity["nodes"]["l4"]}})


def test_the_validation_asks_a_new_backend_for_its_expectation_and_its_pods(fake):
    target_list = fake_node()
    (smoke,) = checks.smoke_probes(target_list)
    (group,) = checks.sharing_groups(target_list, 4)

    assert (smoke.expect.resource, smoke.expect.backend, smoke.expect.replicas, smoke.expect.advertised) == (
        SLICE,
        "fakeshare",
        3,
        6,
    )
    assert (group.expect.replicas, len(group.probes), group.capped) == (3, 4, False)
    sharing_pod = manifests.job_manifest("0123abcd", group.probes[0], "gpu-validation", plans.SETTINGS)
    template = sharing_pod["spec"]["template"]
    assert template["spec"]["containers"][0]["resources"] == {"limits": {SLICE: "1"}}
    # plans.SETTINGS was made before the backend was registered: the backend's defaults apply.
    assert template["spec"]["schedulerName"] == "fake-scheduler"
    assert template["metadata"]["annotations"]["example.com/fakeshare-check"] == "sharing"


def test_the_validation_takes_a_new_backends_pod_options_by_their_flat_names(fake):
    (smoke,) = checks.smoke_probes(fake_node())
    settings = manifests.PodSettings(**{**plans.SETTINGS.__dict__, "fakeshare_scheduler": "other-scheduler"})

    assert manifests.scheduler_name(smoke, settings) == "other-scheduler"
    assert settings.sharing_options["hami"] == {"scheduler_name": "hami-scheduler", "request_gpumem": True}
    with pytest.raises(TypeError, match="unexpected keyword arguments: fakeshare_nothing"):
        manifests.PodSettings(**{**plans.SETTINGS.__dict__, "fakeshare_nothing": 1})


def test_the_validation_checks_a_new_backends_plan_entry_and_capacity(fake):
    node = {
        "gpu_product": L4,
        "resources": {"example.com/gpu-total": 2},
        "memory_sharing": {"backend": "fakeshare", "slices": 2},
    }
    assert checks.plan_problems({"nodes": {"l4": node}}) == [f"plan.nodes.l4.memory_sharing: no {SLICE}"]
    assert evaluate.capacity_scope({SLICE: 4}) == "example.com/*, nvidia.com/*"
    verdict = evaluate.capacity({SLICE: 4}, {SLICE: "4", "example.com/gpu-total": "2"})
    assert (verdict.passed, verdict.reason) == (False, "example.com/gpu-total not planned, found 2")


def test_the_role_handles_a_new_backend(fake):
    capacity = {"nodes": {"l4": {"memory_sharing": {"backend": "fakeshare", "slices": 2}, "labels": {}}}}

    states = backend_states(capacity, {"gpu_memory_sharing_fakeshare_state": "absent"})

    assert states["backends"][-1] == {"name": "fakeshare", "state": "absent", "needs_helm": False}
    assert states["stuck"] == ["gpu_memory_sharing_fakeshare_state is absent but the plan shares l4 with FakeShare"]
    assert backend_states(capacity)["backends"][-1]["state"] == "present"
    node = {"metadata": {"name": "l4", "labels": {}, "annotations": {}}}
    (patch,) = node_changes(capacity, [node])["patches"]
    assert patch["labels"] == {"example.com/fakeshare": "on", "nvidia.com/gpu.deploy.device-plugin": "false"}
    assert patch["annotations"] == {"gpuops.cluster/memory-sharing": "fakeshare"}
