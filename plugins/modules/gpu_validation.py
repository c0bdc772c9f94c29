#!/usr/bin/python
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_validation: prove that every GPU node of the plan works, with real pods, through the Kubernetes API."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_validation
short_description: Validate the GPU nodes of a cluster against the plan with real pods
version_added: 0.1.0
description:
  - Runs on the controller and talks to the Kubernetes API with the C(kubernetes) Python client.
  - Compares the cluster with the plan (the content of C(capacity.json), as C(gpuops.cluster.cluster_plan)
    returns it) and returns one result per check, node and resource, each passed or failed with a reason.
  - C(capacity) needs no pod; every resource the plan gives a GPU node (C(nvidia.com/), and C(aliyun.com/gpu-mem)
    and C(aliyun.com/gpu-count) on gpushare nodes) must equal the node's allocatable; a planned resource missing
    or different fails (expected and found), so does an advertised C(nvidia.com/) or C(aliyun.com/) one the plan
    lacks.
  - C(smoke) runs, on every GPU node and for every planned GPU resource, one pod that requests one unit and
    runs O(smoke_command) (C(nvidia-smi -L)); it passes when the pod sees exactly one device of the right kind
    (one GPU and no MIG device, or one MIG device of the resource's profile) of the planned product.
  - C(cuda) runs, on every GPU node, one pod with one unit of the node's first GPU resource that runs the CUDA
    sample O(cuda_command); it passes on exit code 0 with C(Test PASSED) in the output.
  - C(sharing) runs, on every node whose plan time-slices or shares with MPS a resource R times (R > 1), one pod
    per advertised unit (R pods per physical device, at most O(sharing_max_pods)), all at once; it passes when
    every pod passes the smoke expectation and each device UUID was seen by exactly R pods.
  - Nodes that share GPUs by memory (the plan's C(memory_sharing)) are checked through what the sharing scheduler
    accounts. HAMi nodes (split S) - smoke and cuda pods request C(nvidia.com/gpu) 1 and go to HAMi's scheduler
    (O(hami_scheduler_name)); the sharing check runs one pod per advertised unit (S per GPU, at most
    O(sharing_max_pods)), each with C(nvidia.com/gpu) 1 and C(nvidia.com/gpumem) of one GPU's MiB times
    C(memory_scaling) divided by S (unless O(hami_request_gpumem) is false) and the pod annotation
    C(hami.io/gpu-scheduler-policy=binpack), and passes when each GPU UUID was seen by exactly S pods.
  - gpushare nodes - the smoke and cuda pods request C(aliyun.com/gpu-mem) 1 (gpushare's device plugin then shows
    the pod one GPU); the sharing check runs N pods of (GiB of one GPU // N) GiB each, N the GiB of one GPU but at
    most O(sharing_max_pods), which gpushare's scheduler extender packs onto one GPU, and passes when every pod
    saw that same GPU.
  - Each pod is a Job of its own (C(backoffLimit) 0, C(restartPolicy) Never, C(activeDeadlineSeconds) of
    O(timeout) plus 30 s, C(ttlSecondsAfterFinished) O(ttl_seconds_after_finished)), pinned to its node with the
    node selector C(kubernetes.io/hostname); the scheduler binds it, so taints, resources and the device plugin
    all count. The command's output and exit code come back as the container's termination message and exit
    code; pod logs are never read.
  - A pod still pending or running at the deadline fails its check with the reason the API gives (the
    C(PodScheduled) condition's message, or the container's waiting state), named by node.
  - Every Job and pod it created is deleted, and the module waits until they are gone, also when a check
    fails, times out or the module hits an error. Jobs and pods an earlier run left (same labels) are deleted
    before the first check.
  - Fails, naming every failed node and check, when any check fails; the results, the JSON report and the
    JUnit XML come back in the failure too, so they can be written before the play stops.
author:
  - gpuops.cluster maintainers (@gpuops)
requirements:
  - kubernetes >= 24.2.0 (Python client, on the controller)
options:
  plan:
    description:
      - The content of C(capacity.json), whose C(nodes) maps each GPU host to its C(gpu_product), C(gpu_count),
        C(mig_config), C(resources) and C(labels) (the C(capacity) that C(gpuops.cluster.cluster_plan) returns).
    type: dict
    required: true
  dra:
    description:
      - The content of C(dra.json) of the same plan (the C(dra) that C(gpuops.cluster.cluster_plan) returns), the
        devices NVIDIA's DRA driver is expected to publish on each node whose C(gpu_allocation) is C(dra).
      - Needed when the plan has such a node; the module fails before anything is created without it.
    type: dict
    default: {}
  node_names:
    description:
      - Kubernetes node name of each inventory host of the plan; a host not listed is its own node name.
      - A host that is not in the plan fails the module before anything is created.
    type: dict
    default: {}
  kubeconfig:
    description:
      - Kubeconfig on the controller. Without it, C(KUBECONFIG) or C(~/.kube/config), or the in-cluster
        service account when the module runs in a pod.
    type: path
  context:
    description: Context of the kubeconfig to use; default its current context.
    type: str
  namespace:
    description:
      - Namespace of the validation Jobs, created when missing (labelled Pod Security C(baseline), which the
        pods need, as they ask for no privilege, host path or host network).
    type: str
    default: gpu-validation
  checks:
    description:
      - Which checks to run, always in the order capacity, dra, smoke, cuda, sharing.
      - C(dra) needs no pod; on each DRA node it compares the ResourceSlices of the plan's driver, pool named after
        the node, newest generation, with the plan's devices, GPU by GPU (which minor number holds which GPU index
        is not checked), and names the node and GPU that differ.
      - On a DRA node the pods ask through claims instead of resource limits. C(smoke) runs one pod per DeviceClass
        (and MIG profile) the plan's devices belong to (C(gpu.nvidia.com), C(mig.nvidia.com)), each with a
        ResourceClaimTemplate for one device pinned by a CEL selector to the uuid of a device the node publishes;
        the pod must see exactly that device. C(cuda) runs its sample the same way. C(sharing) runs 3 pods that
        share one ResourceClaim for one whole GPU (the driver's default sharing, time-slicing); all must see that
        GPU at the same time.
    type: list
    elements: str
    choices: [capacity, dra, smoke, cuda, sharing]
    default: [capacity, dra, smoke, cuda, sharing]
  timeout:
    description: Seconds each check's pods get, from the creation of its Jobs until every pod has finished.
    type: int
    default: 300
  poll_interval:
    description: Seconds between two reads of the pods while waiting.
    type: int
    default: 2
  cleanup_timeout:
    description: Seconds to wait until the Jobs and pods of a check are gone from the API.
    type: int
    default: 120
  smoke_image:
    description:
      - Image of the smoke and sharing pods. It needs C(/bin/sh); the NVIDIA container runtime brings
        C(nvidia-smi) into any image.
    type: str
    default: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
  smoke_command:
    description:
      - Shell command of the smoke and sharing pods; its output must be that of C(nvidia-smi -L).
    type: str
    default: nvidia-smi -L
  cuda_image:
    description: Image of the CUDA pods.
    type: str
    default: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
  cuda_command:
    description: Shell command of the CUDA pods; it passes on exit code 0 with C(Test PASSED) in its output.
    type: str
    default: /cuda-samples/vectorAdd
  sharing_max_pods:
    description:
      - Most pods the sharing check runs per node and resource. Above it, the check runs this many and only
        checks that no device is shared by more than R pods, and its reason says so.
    type: int
    default: 32
  sharing_hold_seconds:
    description:
      - Seconds a sharing pod keeps its device after C(nvidia-smi) has run, so that all of them run at the same
        time (the kubelet hands a finished pod's device to the next one).
    type: int
    default: 10
  tolerations:
    description: Tolerations of every validation pod, as in a pod spec.
    type: list
    elements: dict
    default:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
  runtime_class_name:
    description: C(runtimeClassName) of the pods (C(nvidia) where containerd's default runtime is not NVIDIA's).
    type: str
  image_pull_policy:
    description: C(imagePullPolicy) of the containers.
    type: str
    choices: [Always, IfNotPresent, Never]
    default: IfNotPresent
  image_pull_secrets:
    description: Names of Secrets in O(namespace) to pull the images with.
    type: list
    elements: str
    default: []
  registry:
    description:
      - Registry that mirrors the images (C(registry.example.com:5000/mirror)); the registry host of every image
        is replaced by it and the path kept, an image without registry host is read as a Docker Hub one.
    type: str
  ttl_seconds_after_finished:
    description: C(ttlSecondsAfterFinished) of the Jobs, a safety net when the module cannot delete them.
    type: int
    default: 600
  hami_scheduler_name:
    description:
      - C(schedulerName) of the pods on HAMi nodes (the plan's C(memory_sharing.backend) C(hami)); HAMi's device
        plugin only serves pods its scheduler placed.
      - An empty string leaves the pods to the cluster's default scheduler (or to HAMi's admission webhook, which
        sets the name itself).
    type: str
    default: hami-scheduler
  hami_request_gpumem:
    description:
      - Whether the sharing pods on HAMi nodes request their share of GPU memory, C(nvidia.com/gpumem).
      - Keep it true with HAMi's scheduler, which gives a pod without it the whole memory of a GPU, so that no two
        pods could share one. Set it to false only where the sharing scheduler does not account HAMi's memory
        resource, such as a test stand-in for HAMi's scheduler and device plugin (no node advertises
        C(nvidia.com/gpumem), so a scheduler that does not leave it to HAMi keeps such a pod Pending); the check
        then shows only how the pods were spread over the GPUs.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reads nothing and creates nothing; returns RV(planned), the pods each check would run where.
  diff_mode:
    support: none
    description: The module leaves nothing behind, so there is nothing to diff.
  idempotent:
    support: full
    description:
      - Every object it creates is deleted before it returns, so the cluster ends as it began and C(changed) is
        always false.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller (C(delegate_to) localhost); the GPU nodes are reached through the API.
notes:
  - The validation Jobs need the GPU nodes to accept pods from O(namespace) (taints covered by O(tolerations))
    and the images to be reachable from them (O(registry), O(image_pull_secrets)).
  - A capped sharing check (more units than O(sharing_max_pods)) cannot tell whether every device is shared by
    exactly R pods; its reason says what was checked instead.
seealso:
  - name: gpu_validation role
    description: docs/roles/gpu_validation.md in the collection.
    link: https://github.com/gpuops/cluster/blob/main/docs/roles/gpu_validation.md
  - module: gpuops.cluster.cluster_plan
"""

EXAMPLES = r"""
- name: Plan the cluster
  gpuops.cluster.cluster_plan:
  delegate_to: localhost
  run_once: true
  register: plan

- name: Validate every GPU node against the plan
  gpuops.cluster.gpu_validation:
    plan: "{{ plan.capacity }}"
    kubeconfig: ~/.kube/gpu-cluster
    smoke_image: registry.example.com/nvidia/cuda:12.5.0-base-ubuntu22.04
    runtime_class_name: nvidia
    checks: [capacity, smoke]
  delegate_to: localhost
  run_once: true
  register: validation
"""

RETURN = r"""
results:
  description: One entry per check, node and resource, in the order the checks ran.
  returned: when checks ran (also on failure)
  type: list
  elements: dict
  contains:
    check:
      description: C(capacity), C(smoke), C(cuda) or C(sharing).
      type: str
    node:
      description: Kubernetes node name.
      type: str
    host:
      description: Inventory host name.
      type: str
    resource:
      description:
      - The GPU resource the pods requested; for capacity, the resources compared (C(nvidia.com/*), with
        C(aliyun.com/*) on gpushare nodes).
      type: str
    passed:
      description: Whether the check passed.
      type: bool
    reason:
      description: What was seen, or what was expected and what was found.
      type: str
      sample: "expected one MIG 1g.10gb device of NVIDIA A100-SXM4-80GB, found MIG devices ['2g.20gb'] in '...'"
    devices:
      description: UUIDs of the GPUs or MIG devices the pods saw.
      type: list
      elements: str
    seconds:
      description: Seconds from the creation of the check's Jobs until the pods finished (or the deadline).
      type: float
  sample:
    - {"check": "smoke", "node": "gpu-l4-1", "host": "gpu-l4-1", "resource": "nvidia.com/gpu", "passed": true,
       "reason": "sees one GPU and no MIG device of NVIDIA L4",
       "devices": ["GPU-491287c9-bc95-b926-a488-9503064e72a1"], "seconds": 4.2}
summary:
  description:
    - How many results passed and failed. The counts are not top-level keys because Ansible reads a result's
      C(failed) key as the task's own failure.
  returned: when checks ran
  type: dict
  contains:
    passed:
      description: How many results passed.
      type: int
    failed:
      description: How many results failed.
      type: int
  sample: {"passed": 9, "failed": 0}
report:
  description: The results as a JSON document (C(run), C(passed), C(failed), C(results)).
  returned: when checks ran
  type: str
junit_xml:
  description: The results as JUnit XML, one testsuite per check and one testcase per node and resource.
  returned: when checks ran
  type: str
run_id:
  description: Value of the C(gpuops.cluster/validation-run) label of this run's Jobs and pods.
  returned: always
  type: str
  sample: 3f9c1a2b
planned:
  description:
    - In check mode, the pods each check would run, per node and resource, with image, command, the limits each
      pod asks for (C(limits)) and the scheduler that binds it (C(scheduler_name)).
  returned: check mode
  type: list
  elements: dict
  sample:
    - {"check": "sharing", "node": "gpu-l4-2", "host": "gpu-l4-2", "resource": "nvidia.com/gpu",
       "expect": "one GPU and no MIG device of NVIDIA L4", "pods": ["gpuval-sharing-3f9c1a2b-5d1e0c2a7b"],
       "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
       "command": "sh -c '( nvidia-smi -L ) >/dev/termination-log 2>&1; rc=$?; sleep 10; exit $rc'",
       "limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "2303"}, "scheduler_name": "hami-scheduler",
       "summary": "sharing on gpu-l4-2, nvidia.com/gpu: 20 pod(s), each asking nvidia.com/gpu: 1,
       nvidia.com/gpumem: 2303 and expecting one GPU and no MIG device of NVIDIA L4"}
cleanup_problems:
  description: Objects the module could not delete; the module fails when there are any.
  returned: failure
  type: list
  elements: str
"""

import traceback
import uuid

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import fail_module
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import setting_problem
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import hami
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.registry import pod_option_names
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import CHECKS, targets
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.kube import (
    HAS_KUBERNETES,
    KubeApi,
    KubeApiError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.manifests import (
    DEFAULT_TOLERATIONS,
    PodSettings,
    registry_problem,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.report import (
    as_json,
    as_junit,
    failure_message,
    summary,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.runner import (
    RunSettings,
    ValidationRun,
    planned_checks,
)

DEFAULT_IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"


def argument_spec():
    return {
        "plan": {"type": "dict", "required": True},
        "dra": {"type": "dict", "default": {}},
        "node_names": {"type": "dict", "default": {}},
        "kubeconfig": {"type": "path"},
        "context": {"type": "str"},
        "namespace": {"type": "str", "default": "gpu-validation"},
        "checks": {"type": "list", "elements": "str", "choices": list(CHECKS), "default": list(CHECKS)},
        "timeout": {"type": "int", "default": 300},
        "poll_interval": {"type": "int", "default": 2},
        "cleanup_timeout": {"type": "int", "default": 120},
        "smoke_image": {"type": "str", "default": DEFAULT_IMAGE},
        "smoke_command": {"type": "str", "default": "nvidia-smi -L"},
        "cuda_image": {"type": "str", "default": DEFAULT_IMAGE},
        "cuda_command": {"type": "str", "default": "/cuda-samples/vectorAdd"},
        "sharing_max_pods": {"type": "int", "default": 32},
        "sharing_hold_seconds": {"type": "int", "default": 10},
        "tolerations": {"type": "list", "elements": "dict", "default": [dict(t) for t in DEFAULT_TOLERATIONS]},
        "runtime_class_name": {"type": "str"},
        "image_pull_policy": {"type": "str", "choices": ["Always", "IfNotPresent", "Never"], "default": "IfNotPresent"},
        # Names of Secrets, not their content.
        "image_pull_secrets": {"type": "list", "elements": "str", "default": [], "no_log": False},
        "registry": {"type": "str"},
        "ttl_seconds_after_finished": {"type": "int", "default": 600},
        # The memory-sharing backends' pod options (_sharing: <backend>_<option>), passed on by settings_from.
        "hami_scheduler_name": {"type": "str", "default": hami.POD_OPTION_DEFAULTS["scheduler_name"]},
        "hami_request_gpumem": {"type": "bool", "default": hami.POD_OPTION_DEFAULTS["request_gpumem"]},
    }


def option_problems(params):
    """Lines naming each bad option and what would be valid; [] when the run can start."""
    problems = []
    for name, minimum in (
        ("timeout", 1),
        ("poll_interval", 1),
        ("cleanup_timeout", 1),
        ("sharing_max_pods", 1),
        ("sharing_hold_seconds", 0),
        ("ttl_seconds_after_finished", 0),
    ):
        if params[name] < minimum:
            problems.append(f"{name}: must be {minimum} or more, got {params[name]}")
    namespace_problem = setting_problem("namespace", params["namespace"])
    if namespace_problem:
        problems.append(f"namespace: {namespace_problem}")
    if not params["checks"]:
        problems.append(f"checks: give at least one of {', '.join(CHECKS)}")
    for name in ("smoke_image", "smoke_command", "cuda_image", "cuda_command"):
        if not (params[name] or "").strip():
            problems.append(f"{name}: must not be empty")
    problem = registry_problem(params["registry"])
    if problem:
        problems.append(problem)
    return problems


def settings_from(params):
    pods = PodSettings(
        smoke_image=params["smoke_image"],
        smoke_command=params["smoke_command"],
        cuda_image=params["cuda_image"],
        cuda_command=params["cuda_command"],
        timeout=params["timeout"],
        ttl_seconds_after_finished=params["ttl_seconds_after_finished"],
        sharing_hold_seconds=params["sharing_hold_seconds"],
        tolerations=tuple(params["tolerations"]),
        runtime_class_name=params["runtime_class_name"] or None,
        image_pull_policy=params["image_pull_policy"],
        image_pull_secrets=tuple(params["image_pull_secrets"]),
        registry=params["registry"] or None,
        **{name: params[name] for name in pod_option_names()},
    )
    return RunSettings(
        namespace=params["namespace"],
        checks=tuple(params["checks"]),
        pods=pods,
        poll_interval=params["poll_interval"],
        cleanup_timeout=params["cleanup_timeout"],
        sharing_max_pods=params["sharing_max_pods"],
    )


def connect(module):
    """The API adapter; a function of its own so tests can hand the module a double."""
    if not HAS_KUBERNETES:
        module.fail_json(msg=missing_required_lib("kubernetes"))
    return KubeApi.connect(module.params["kubeconfig"], module.params["context"])


def run_module(module, run_id=None):
    params = module.params
    run_id = run_id or uuid.uuid4().hex[:8]
    try:
        target_list = targets(params["plan"], params["node_names"], params["dra"])
    except ValidationInputError as err:
        fail_module(module, err, run_id=run_id)
    problems = option_problems(params)
    if problems:
        module.fail_json(msg="; ".join(problems), run_id=run_id)
    settings = settings_from(params)
    if module.check_mode:
        module.exit_json(changed=False, run_id=run_id, planned=planned_checks(target_list, settings, run_id))

    run = None
    try:
        run = ValidationRun(connect(module), target_list, settings, run_id)
        results = run.run()
    except KubeApiError as err:
        left = run.cleanup_problems if run else []
        fail_module(module, err, msg=f"the validation stopped: {err}", run_id=run_id, cleanup_problems=left)
    except Exception as err:  # the cleanup ran (try/finally in the run); report what stopped it
        left = run.cleanup_problems if run else []
        module.fail_json(
            msg=f"the validation stopped: {type(err).__name__}: {err}",
            run_id=run_id,
            cleanup_problems=left,
            exception=traceback.format_exc(),
        )

    output = dict(
        changed=False,
        run_id=run_id,
        results=results,
        report=as_json(results, run_id),
        junit_xml=as_junit(results, run_id),
        summary=summary(results),
    )
    lines = failure_message(results)
    if run.cleanup_problems:
        lines += [f"cleanup: {problem}" for problem in run.cleanup_problems]
        output["cleanup_problems"] = run.cleanup_problems
    if lines:
        module.fail_json(
            msg=f"{summary(results)['failed']} of {len(results)} GPU validation checks failed: " + "; ".join(lines),
            **output,
        )
    module.exit_json(**output)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
