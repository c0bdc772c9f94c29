# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_validation as Ansible runs it, against an in-memory API (fake_kubernetes): the Jobs it creates, its
verdicts, and that it leaves no Job or pod behind on success, failure, timeout and error."""

from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import kube, runner
from ansible_collections.gpuops.cluster.plugins.modules import gpu_validation
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_kubernetes import FakeCluster, FakeNode

L4 = "NVIDIA L4"
H100 = "NVIDIA H100 80GB HBM3"


class Exited(Exception):
    pass


class FakeTime:
    """A clock that only moves when the module sleeps."""

    def __init__(self):
        self.now, self.sleeps = 1000.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def l4_node(allocatable=16):
    devices = [(L4, f"GPU-l4-{index}", None, None) for index in range(4)]
    return FakeNode("gpu-l4-1", {"cpu": "8", "nvidia.com/gpu": str(allocatable)}, {"nvidia.com/gpu": devices},
                    replicas={"nvidia.com/gpu": 4})  # fmt: skip


def h100_node():
    devices = {
        "nvidia.com/mig-1g.10gb": [(H100, "GPU-h100-0", "1g.10gb", f"MIG-1g-{index}") for index in range(2)],
        "nvidia.com/mig-2g.20gb": [(H100, "GPU-h100-0", "2g.20gb", "MIG-2g-0")],
        "nvidia.com/mig-3g.40gb": [(H100, "GPU-h100-0", "3g.40gb", "MIG-3g-0")],
    }
    allocatable = {"nvidia.com/mig-1g.10gb": "2", "nvidia.com/mig-2g.20gb": "1", "nvidia.com/mig-3g.40gb": "1"}
    return FakeNode("gpu-h100-1", allocatable, devices)


def plan():
    return {"nodes": {"gpu-l4-1": plans.time_sliced(), "gpu-h100-1": plans.mig_mixed()}}


@pytest.fixture
def cluster():
    return FakeCluster([l4_node(), h100_node()])


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(runner, "time", fake)
    return fake


def run_module(cluster, args=None, check_mode=False):
    """Run the module against CLUSTER; returns the result (failed=True on fail_json)."""

    def leave(module, **result):
        raise Exited(result)

    module_args = dict({"plan": plan(), "kubeconfig": "/nonexistent"}, **(args or {}), _ansible_check_mode=check_mode)
    with (
        patch_module_args(module_args),
        patch.object(gpu_validation, "connect", lambda module: kube.KubeApi(cluster.core, cluster.batch)),
        patch.object(AnsibleModule, "exit_json", leave),
        patch.object(AnsibleModule, "fail_json", lambda module, **r: leave(module, failed=True, **r)),
        pytest.raises(Exited) as exited,
    ):
        gpu_validation.main()
    return exited.value.args[0]


def left_behind(cluster):
    return sorted(cluster.jobs) + sorted(cluster.pods)


def by_check(result):
    found = {}
    for item in result["results"]:
        found.setdefault(item["check"], []).append(item)
    return found


def test_every_check_passes_and_nothing_is_left(cluster, clock):
    result = run_module(cluster)

    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False
    checks = by_check(result)
    assert [len(checks[name]) for name in ("capacity", "smoke", "cuda", "sharing")] == [2, 4, 2, 1]
    assert result["summary"] == {"passed": 9, "failed": 0}
    (sharing,) = checks["sharing"]
    assert sharing["reason"] == "16 pods shared 4 devices, 4 per device (time-slicing)"
    assert sharing["devices"] == ["GPU-l4-0", "GPU-l4-1", "GPU-l4-2", "GPU-l4-3"]
    assert {item["devices"][0] for item in checks["smoke"] if item["node"] == "gpu-h100-1"} == {
        "MIG-1g-0",
        "MIG-2g-0",
        "MIG-3g-0",
    }
    # 4 smoke, 2 cuda, 16 sharing pods, one Job each; all gone.
    assert len(cluster.created_jobs) == 22
    assert left_behind(cluster) == []
    assert '"failed": 0' in result["report"] and "<testsuites" in result["junit_xml"]


def test_the_jobs_follow_the_contract(cluster, clock):
    args = {
        "checks": ["smoke"],
        "runtime_class_name": "nvidia",
        "image_pull_policy": "Never",
        "image_pull_secrets": ["pull"],
        "registry": "mirror.example.com:5000",
        "smoke_image": "localhost/gpuops-validation:test",
        "timeout": 60,
        "node_names": {"gpu-l4-1": "gpu-l4-1"},
    }

    result = run_module(cluster, args)

    assert not result.get("failed"), result.get("msg")
    job = next(
        job
        for job in cluster.created_jobs
        if job["metadata"]["annotations"]["gpuops.cluster/validation-node"] == "gpu-l4-1"
    )
    labels = job["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "gpuops.cluster"
    assert labels["app.kubernetes.io/component"] == "gpu-validation"
    assert labels["gpuops.cluster/validation-run"] == result["run_id"]
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (0, 90, 600)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and "nodeName" not in pod
    assert pod["nodeSelector"] == {"kubernetes.io/hostname": "gpu-l4-1"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["runtimeClassName"] == "nvidia" and pod["imagePullSecrets"] == [{"name": "pull"}]
    (container,) = pod["containers"]
    assert container["image"] == "mirror.example.com:5000/gpuops-validation:test"
    assert container["imagePullPolicy"] == "Never"
    assert container["command"] == ["sh", "-c", "( nvidia-smi -L ) >/dev/termination-log 2>&1"]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert (
        cluster.namespaces["gpu-validation"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    )


def test_a_failing_node_fails_the_task_naming_it_and_leaves_nothing(cluster, clock):
    node = cluster.nodes["gpu-l4-1"]
    # The node's runtime shows every GPU to every pod: isolation is broken.
    node.run = lambda command, seen: (0, "".join(f"GPU {i}: {L4} (UUID: GPU-l4-{i})\n" for i in range(4)))

    result = run_module(cluster, {"checks": ["smoke", "cuda"]})

    assert result["failed"] is True
    assert (
        "gpu-l4-1 smoke nvidia.com/gpu: expected one GPU and no MIG device of NVIDIA L4, found 4 GPU lines"
        in result["msg"]
    )
    assert "gpu-l4-1 cuda nvidia.com/gpu: exit code 0 but no 'Test PASSED'" in result["msg"]
    assert "gpu-h100-1" not in result["msg"]
    assert result["summary"] == {"passed": 4, "failed": 2} and "<failure" in result["junit_xml"]
    assert left_behind(cluster) == []


def test_a_pod_that_never_schedules_fails_with_the_scheduler_reason(cluster, clock):
    cluster.nodes["gpu-h100-1"].unschedulable = "0/2 nodes are available: 1 Insufficient nvidia.com/mig-3g.40gb."

    result = run_module(cluster, {"checks": ["cuda"], "timeout": 30, "poll_interval": 5})

    assert result["failed"] is True
    assert (
        "gpu-h100-1 cuda nvidia.com/mig-1g.10gb: no result within 30 s: not scheduled (Unschedulable): "
        "0/2 nodes are available: 1 Insufficient nvidia.com/mig-3g.40gb." in result["msg"]
    )
    assert sum(clock.sleeps[:6]) == 30
    (late,) = [item for item in result["results"] if not item["passed"]]
    assert late["seconds"] == 30.0
    assert left_behind(cluster) == []


def test_an_api_error_stops_the_run_and_still_cleans_up(cluster, clock):
    cluster.fail_create_job_after = 2

    result = run_module(cluster, {"checks": ["smoke"]})

    assert result["failed"] is True
    assert result["msg"].startswith("the validation stopped: create Job gpu-validation/gpuval-smoke-")
    assert "HTTP 403: jobs.batch is forbidden" in result["msg"]
    assert len(cluster.created_jobs) == 2
    assert left_behind(cluster) == []
    assert result["cleanup_problems"] == []


def test_an_unexpected_error_stops_the_run_and_still_cleans_up(cluster, clock):
    real_list = cluster.core.list_namespaced_pod
    calls = []

    def list_once_broken(namespace, label_selector=""):
        calls.append(label_selector)
        if len(calls) == 2:  # the first read while waiting for the smoke pods
            raise ValueError("unexpected answer")
        return real_list(namespace, label_selector)

    cluster.core.list_namespaced_pod = list_once_broken

    result = run_module(cluster, {"checks": ["smoke"]})

    assert result["failed"] is True
    assert result["msg"] == "the validation stopped: ValueError: unexpected answer"
    assert "Traceback" in result["exception"]
    assert len(cluster.created_jobs) == 4 and left_behind(cluster) == []


def test_capacity_below_the_plan_fails_without_any_pod():
    cluster = FakeCluster([l4_node(allocatable=12), h100_node()])

    result = run_module(cluster, {"checks": ["capacity"]})

    assert result["failed"] is True
    assert "gpu-l4-1 capacity nvidia.com/*: nvidia.com/gpu expected 16, found 12" in result["msg"]
    assert cluster.created_jobs == []


def test_a_node_missing_from_the_cluster_fails_the_capacity_check():
    cluster = FakeCluster([l4_node()])

    result = run_module(cluster, {"checks": ["capacity"]})

    assert "gpu-h100-1 capacity nvidia.com/*: no Node named gpu-h100-1 in the cluster" in result["msg"]


def test_leftovers_of_an_earlier_run_are_deleted_first(cluster, clock):
    old = {"metadata": {"name": "gpuval-smoke-deadbeef-0", "namespace": "gpu-validation",
                        "labels": {"app.kubernetes.io/managed-by": "gpuops.cluster",
                                   "app.kubernetes.io/component": "gpu-validation",
                                   "gpuops.cluster/validation-run": "deadbeef"}}}  # fmt: skip
    cluster.namespaces["gpu-validation"] = {"metadata": {"name": "gpu-validation"}}
    cluster.jobs[old["metadata"]["name"]] = old

    result = run_module(cluster, {"checks": ["capacity"]})

    assert not result.get("failed"), result.get("msg")
    assert cluster.calls[1] == (
        "delete_jobs",
        "app.kubernetes.io/managed-by=gpuops.cluster,app.kubernetes.io/component=gpu-validation",
        "Background",
    )
    assert left_behind(cluster) == []


def test_pods_on_a_node_without_kubelet_are_forced_out_after_half_the_cleanup_timeout(cluster, clock):
    cluster.stuck_pods = "kubelet"

    result = run_module(cluster, {"checks": ["cuda"], "cleanup_timeout": 10})

    assert not result.get("failed"), result.get("msg")
    forced = [call for call in cluster.calls if call[0] == "delete_pods" and call[2] == 0]
    assert forced and left_behind(cluster) == []


def test_pods_that_do_not_go_away_fail_the_run(cluster, clock):
    cluster.stuck_pods = "api"

    result = run_module(cluster, {"checks": ["cuda"], "cleanup_timeout": 10})

    assert result["failed"] is True
    assert (
        "after 10 s these objects of the validation are still in namespace gpu-validation: Pod gpuval-cuda-"
        in result["msg"]
    )


def test_check_mode_creates_nothing_and_lists_the_pods(cluster):
    result = run_module(cluster, {"sharing_max_pods": 8}, check_mode=True)

    assert result["changed"] is False and "results" not in result
    assert cluster.calls == [] and cluster.created_jobs == []
    sharing = [entry for entry in result["planned"] if entry["check"] == "sharing"]
    assert len(sharing) == 1 and len(sharing[0]["pods"]) == 8
    assert "ran 8 of the 16 pods" in sharing[0]["note"]
    smoke = [entry for entry in result["planned"] if entry["check"] == "smoke" and entry["host"] == "gpu-h100-1"]
    assert [entry["resource"] for entry in smoke] == [
        "nvidia.com/mig-1g.10gb",
        "nvidia.com/mig-2g.20gb",
        "nvidia.com/mig-3g.40gb",
    ]
    assert smoke[0]["command"] == "sh -c '( nvidia-smi -L ) >/dev/termination-log 2>&1'"
    # The role prints every entry's summary in check mode: capacity entries, with no pod, have one too.
    assert all(entry["summary"] for entry in result["planned"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"node_names": {"gpu-9": "x"}}, "node_names: gpu-9 are not GPU nodes of the plan"),
        ({"registry": "https://mirror.example.com"}, "registry: must be a registry host"),
        ({"timeout": 0}, "timeout: must be 1 or more, got 0"),
        ({"namespace": "GPU_Validation"}, "namespace: must be a DNS-1123 label"),
        ({"namespace": "gpu-validation-"}, "namespace: must be a DNS-1123 label"),
        ({"plan": {"nodes": {"gpu-1": {"resources": {}}}}}, "plan.nodes.gpu-1.gpu_product: missing"),
    ],
)
def test_bad_input_fails_before_any_call(cluster, args, message):
    result = run_module(cluster, args)

    assert result["failed"] is True and message in result["msg"]
    assert cluster.calls == [] and cluster.created_jobs == []
