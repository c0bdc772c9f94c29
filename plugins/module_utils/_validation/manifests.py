# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Job of each validation pod, as a dict the Kubernetes API takes.

Every Job runs one pod with one container, never restarted or retried, pinned to its node by the
kubernetes.io/hostname label (the scheduler still binds it, so taints, resources and the device plugin all
count). The command's output and exit code come back as the container's termination message and exit code.

On memory-shared nodes the pods ask what the sharing scheduler reads: HAMi's pods go to HAMi's scheduler, and
its sharing pods add their nvidia.com/gpumem slice; gpushare's pods ask for aliyun.com/gpu-mem in GiB.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import CUDA, SHARING
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import GPUSHARE, HAMI

MANAGED_BY = ("app.kubernetes.io/managed-by", "gpuops.cluster")
COMPONENT = ("app.kubernetes.io/component", "gpu-validation")
RUN_LABEL = "gpuops.cluster/validation-run"
CHECK_LABEL = "gpuops.cluster/validation-check"
JOB_LABEL = "gpuops.cluster/validation-job"
ANNOTATION_PREFIX = "gpuops.cluster/validation-"
TERMINATION_LOG = "/dev/termination-log"
CONTAINER_NAME = "validation"
# Seconds the Job's own deadline adds to the timeout, so the module reads a late pod's state before the Job
# controller kills it; the deadline itself only matters when the module is gone.
DEADLINE_MARGIN = 30
# A pod stopped at cleanup has only a shell to stop: no reason to wait the default 30 s.
GRACE_SECONDS = 1
DEFAULT_TOLERATIONS = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
_REGISTRY_HOST = re.compile(r"[.:]|^localhost$")
DEFAULT_HAMI_SCHEDULER = "hami-scheduler"
# HAMi's scheduler spreads a node's pods over its GPUs by default; binpack fills one GPU before the next, so
# that even a capped sharing check puts `split` pods on its first GPU.
HAMI_GPU_POLICY = ("hami.io/gpu-scheduler-policy", "binpack")


@dataclass(frozen=True)
class PodSettings:
    """Everything a validation pod takes from the user; see the module's options."""

    smoke_image: str
    smoke_command: str
    cuda_image: str
    cuda_command: str
    timeout: int
    ttl_seconds_after_finished: int = 600
    sharing_hold_seconds: int = 10
    tolerations: tuple = DEFAULT_TOLERATIONS
    runtime_class_name: str | None = None
    image_pull_policy: str = "IfNotPresent"
    image_pull_secrets: tuple = ()
    registry: str | None = None
    # schedulerName of the pods on HAMi nodes; None leaves it to the cluster (HAMi's webhook sets it too).
    hami_scheduler_name: str | None = DEFAULT_HAMI_SCHEDULER
    # Whether HAMi's sharing pods ask for nvidia.com/gpumem: HAMi's scheduler needs it to put several pods on
    # one GPU. No node advertises it, so a scheduler that does not leave it to HAMi's extender keeps the pod
    # Pending (Insufficient nvidia.com/gpumem).
    hami_request_gpumem: bool = True


def pod_limits(probe, settings: PodSettings):
    """The container's limits, quantities as strings (the client refuses an int)."""
    expect = probe.expect
    if probe.check != SHARING or not expect.slice_resource:
        return {expect.resource: "1"}
    if expect.backend == GPUSHARE:
        # gpushare's one resource is the memory slice itself, in GiB.
        return {expect.resource: str(expect.slice_size)}
    limits = {expect.resource: "1"}
    if settings.hami_request_gpumem and expect.slice_size:
        limits[expect.slice_resource] = str(expect.slice_size)
    return limits


def scheduler_name(probe, settings: PodSettings):
    if probe.expect.backend == HAMI and settings.hami_scheduler_name:
        return settings.hami_scheduler_name
    return None


def mirrored_image(image, registry):
    """IMAGE pulled through REGISTRY (host[:port][/path]): the registry host is replaced, the path kept.

    nvcr.io/nvidia/k8s/cuda-sample:tag -> mirror.example.com/nvidia/k8s/cuda-sample:tag;
    an image without a registry host is a Docker Hub one: busybox -> mirror.example.com/library/busybox.
    """
    if not registry:
        return image
    first, _slash, rest = image.partition("/")
    if rest and _REGISTRY_HOST.search(first):
        path = rest
    elif rest:
        path = image
    else:
        path = f"library/{image}"
    return f"{registry.rstrip('/')}/{path}"


def registry_problem(registry):
    if registry and ("://" in registry or registry.endswith("/") or any(ch.isspace() for ch in registry)):
        return (
            f"registry: must be a registry host with an optional path, without a scheme or a trailing '/', got "
            f"{registry!r} (e.g. registry.example.com:5000/mirror)"
        )
    return None


def wrapped_command(command, hold_seconds=0):
    """sh -c text that sends COMMAND's output to the termination message and exits with its exit code.

    HOLD_SECONDS keeps the pod (and its device) after the command, so pods that share a device overlap.
    """
    # A subshell, so that a command of several parts (or one that exits) is redirected and timed as a whole.
    script = f"( {command} ) >{TERMINATION_LOG} 2>&1"
    if hold_seconds:
        script += f"; rc=$?; sleep {int(hold_seconds)}; exit $rc"
    return ["sh", "-c", script]


def job_name(run_id, probe):
    """A DNS-1123 name of at most 63 characters, unique per run and probe."""
    digest = hashlib.sha256("\0".join(map(str, probe.key)).encode()).hexdigest()[:10]
    return f"gpuval-{probe.check}-{run_id}-{digest}"


def labels(run_id, check=None, job=None):
    found = dict([MANAGED_BY, COMPONENT, (RUN_LABEL, run_id)])
    if check:
        found[CHECK_LABEL] = check
    if job:
        found[JOB_LABEL] = job
    return found


def selector(values):
    return ",".join(f"{key}={value}" for key, value in values.items())


# Selects what any run of the validation left behind.
LEFTOVER_SELECTOR = selector(dict([MANAGED_BY, COMPONENT]))


def job_manifest(run_id, probe, namespace, settings: PodSettings):
    name = job_name(run_id, probe)
    object_labels = labels(run_id, probe.check, name)
    annotations = {
        f"{ANNOTATION_PREFIX}node": probe.target.node,
        f"{ANNOTATION_PREFIX}host": probe.target.host,
        f"{ANNOTATION_PREFIX}resource": probe.expect.resource,
    }
    cuda = probe.check == CUDA
    image = settings.cuda_image if cuda else settings.smoke_image
    command = settings.cuda_command if cuda else settings.smoke_command
    hold = settings.sharing_hold_seconds if probe.check == SHARING else 0
    pod_annotations = dict(annotations)
    if probe.check == SHARING and probe.expect.backend == HAMI:
        pod_annotations.update([HAMI_GPU_POLICY])
    pod_spec = {
        "restartPolicy": "Never",
        "nodeSelector": {"kubernetes.io/hostname": probe.target.node},
        "tolerations": [dict(toleration) for toleration in settings.tolerations],
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "containers": [
            {
                "name": CONTAINER_NAME,
                "image": mirrored_image(image, settings.registry),
                "imagePullPolicy": settings.image_pull_policy,
                "command": wrapped_command(command, hold),
                "resources": {"limits": pod_limits(probe, settings)},
                "terminationMessagePath": TERMINATION_LOG,
                "terminationMessagePolicy": "File",
            }
        ],
    }
    if scheduler_name(probe, settings):
        pod_spec["schedulerName"] = scheduler_name(probe, settings)
    if settings.runtime_class_name:
        pod_spec["runtimeClassName"] = settings.runtime_class_name
    if settings.image_pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": secret} for secret in settings.image_pull_secrets]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": object_labels, "annotations": annotations},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(settings.timeout) + DEADLINE_MARGIN,
            "ttlSecondsAfterFinished": int(settings.ttl_seconds_after_finished),
            "template": {
                "metadata": {"labels": object_labels, "annotations": pod_annotations},
                "spec": pod_spec,
            },
        },
    }


def describe_command(manifest):
    """The container's command as one shell line, for check mode and messages."""
    return shlex.join(manifest["spec"]["template"]["spec"]["containers"][0]["command"])
