# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Job of each validation pod, as a dict the Kubernetes API takes.

Every Job runs one pod with one container, never restarted or retried, pinned to its node by the
kubernetes.io/hostname label (the scheduler still binds it, so taints, resources and the device plugin all
count). The command's output and exit code come back as the container's termination message and exit code.

On memory-shared nodes the pods ask what the sharing scheduler reads, as the node's backend says
(module_utils/_sharing): HAMi's pods go to HAMi's scheduler, and its sharing pods add their nvidia.com/gpumem
slice; gpushare's pods ask for aliyun.com/gpu-mem in GiB. On DRA nodes they ask through a claim instead of a limit
(dra_claims.py): a ResourceClaimTemplate of the Job's name, or for the sharing check one ResourceClaim per group.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import MISSING, dataclass, field, fields, replace

# As sharing_backends: `registry` here is the image registry of the pods.
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import FULL_GPU_RESOURCE
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing import registry as sharing_backends
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import dra_claims
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import CUDA, SHARING

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
DEFAULT_TOLERATIONS = ({"key": FULL_GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},)
_REGISTRY_HOST = re.compile(r"[.:]|^localhost$")


@dataclass(frozen=True, init=False)
class PodSettings:
    """Everything a validation pod takes from the user; see the module's options.

    Keyword arguments only. A memory-sharing backend's own options (its pod_option_defaults) are given flat, as
    the module names them (hami_scheduler_name), or by backend in sharing_options; sharing_options keeps them by
    backend name, each backend's defaults filled in.
    """

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
    # Backend name -> its pod options (module_utils/_sharing: pod_option_defaults).
    sharing_options: dict = field(default_factory=dict)

    def __init__(self, **values):
        flat = {name: values.pop(name) for name in sharing_backends.pod_option_names() if name in values}
        values["sharing_options"] = sharing_backends.pod_options(values.get("sharing_options"), flat)
        for item in fields(self):
            if item.name in values:
                value = values.pop(item.name)
            elif item.default is not MISSING:
                value = item.default
            else:
                raise TypeError(f"PodSettings() is missing the keyword argument {item.name!r}")
            object.__setattr__(self, item.name, value)
        if values:
            raise TypeError(f"PodSettings() got unexpected keyword arguments: {', '.join(sorted(values))}")

    def options_of(self, backend):
        """BACKEND's pod options: its defaults, then what was given."""
        return {**backend.pod_option_defaults, **self.sharing_options.get(backend.name, {})}


def _backend(probe):
    """The memory-sharing backend of PROBE's node, or None."""
    return sharing_backends.get(probe.expect.backend)


def claim_ref(run_id, probe):
    """("template" or "claim", name) of the claim object a DRA probe's pod uses: its own ResourceClaimTemplate, or
    the ResourceClaim its sharing group shares (named after the group's first pod)."""
    if probe.check == SHARING:
        return "claim", job_name(run_id, replace(probe, index=0)) + "-shared"
    return "template", job_name(run_id, probe)


def pod_limits(probe, settings: PodSettings):
    """The container's limits, quantities as strings (the client refuses an int)."""
    expect, backend = probe.expect, _backend(probe)
    if probe.check != SHARING or not expect.slice_resource or backend is None:
        return {expect.resource: "1"}
    return backend.sharing_pod_limits(expect.resource, expect.slice_size, settings.options_of(backend))


def scheduler_name(probe, settings: PodSettings):
    backend = _backend(probe)
    return backend.scheduler_name(settings.options_of(backend)) if backend is not None else None


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


def _resources(probe, settings):
    if probe.expect.device_class:
        return {"claims": [{"name": dra_claims.CLAIM_NAME}]}
    return {"limits": pod_limits(probe, settings)}


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
    backend = _backend(probe)
    if probe.check == SHARING and backend is not None:
        pod_annotations.update(backend.sharing_pod_annotations())
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
                "resources": _resources(probe, settings),
                "terminationMessagePath": TERMINATION_LOG,
                "terminationMessagePolicy": "File",
            }
        ],
    }
    if probe.expect.device_class:
        pod_spec["resourceClaims"] = [dra_claims.pod_claim(*claim_ref(run_id, probe))]
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
