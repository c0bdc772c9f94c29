# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test double of the kubernetes client's CoreV1Api, BatchV1Api and ResourceV1Api for the gpu_validation run loop.

It keeps Nodes, Jobs and pods in memory. A Job gets its pod when the pods are next listed; the pod's fate is
decided by the node: which device of the requested resource it is given (time-sliced devices go round-robin
until every replica is taken) and what the command prints, in `nvidia-smi -L`'s recorded format. A pod that asks
through a DRA claim gets the published device whose uuid the claim's CEL selector names, as the kube-scheduler
would allocate it (FakeResource holds the ResourceSlices and the claim objects).
"""

from __future__ import annotations

import copy
import json
import re

_PINNED_UUID = re.compile(r'\.uuid == "([^"]+)"')

# The vectorAdd sample's output recorded in ../shared/seeds/002_76a4f94e83636ced.txt, lines 340-345.
VECTOR_ADD_PASSED = (
    "[Vector addition of 50000 elements]\n"
    "Copy input data from the host memory to the CUDA device\n"
    "CUDA kernel launch with 196 blocks of 256 threads\n"
    "Copy output data from the CUDA device to the host memory\n"
    "Test PASSED\n"
    "Done\n"
)


class FakeApiException(Exception):
    """Like kubernetes.client.rest.ApiException: status, reason and a JSON body."""

    def __init__(self, status, message):
        super().__init__(f"({status}) {message}")
        self.status, self.reason, self.body = status, message, json.dumps({"message": message})


def listing(gpus):
    """`nvidia-smi -L` text for GPUS: [(name, uuid, [(profile, mig uuid)])], spaced as the recorded outputs."""
    lines = []
    for index, (name, uuid, migs) in enumerate(gpus):
        lines.append(f"GPU {index}: {name} (UUID: {uuid})")
        for mig_index, (profile, mig_uuid) in enumerate(migs):
            lines.append(f"  MIG {profile:<12}Device {mig_index:>2}: (UUID: {mig_uuid})")
    return "\n".join(lines) + "\n"


class FakeNode:
    """A GPU node: allocatable, and per resource its devices [(gpu name, gpu uuid, mig profile, mig uuid)]."""

    def __init__(self, name, allocatable, devices, replicas=None, hostname=None):
        self.name, self.allocatable, self.devices = name, allocatable, devices
        self.replicas = replicas or {}
        self.hostname = hostname or name
        self.handed = {}
        # What the pods print and exit with, given the devices they see; tests replace it to inject faults.
        self.run = self.default_run
        # Set to a PodScheduled message to keep every pod of this node pending.
        self.unschedulable = None

    def resource_object(self):
        return {
            "metadata": {"name": self.name, "labels": {"kubernetes.io/hostname": self.hostname}},
            "status": {"allocatable": dict(self.allocatable)},
        }

    def allocate(self, resource):
        units = self.devices[resource]
        taken = self.handed.get(resource, 0)
        self.handed[resource] = taken + 1
        # A shared device is handed out `replicas` times: unit n lands on device n // replicas.
        return units[(taken // self.replicas.get(resource, 1)) % len(units)]

    def default_run(self, command, seen):
        if "nvidia-smi -L" in command:
            return 0, listing(seen)
        if "vectorAdd" in command:
            return 0, VECTOR_ADD_PASSED
        return 127, f"sh: 1: {command.split()[0]}: not found\n"


class FakeCluster:
    def __init__(self, nodes):
        self.nodes = {node.hostname: node for node in nodes}
        self.namespaces = {}
        self.jobs = {}
        self.pods = {}
        self.created_jobs = []
        self.calls = []
        self.fail_create_job_after = None
        self.stuck_pods = None
        self.core = FakeCore(self)
        self.batch = FakeBatch(self)
        self.resource = FakeResource(self)

    def _claimed(self, entry):
        """What a pod sees through its claim ENTRY: the published device its claim's selector pins, or nothing."""
        if "resourceClaimTemplateName" in entry:
            found = self.resource.objects.get(("ResourceClaimTemplate", entry["resourceClaimTemplateName"]))
            spec = (found or {}).get("spec", {}).get("spec")
        else:
            spec = (self.resource.objects.get(("ResourceClaim", entry["resourceClaimName"])) or {}).get("spec")
        if spec is None:
            return None
        expression = spec["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
        uuid = _PINNED_UUID.search(expression).group(1)
        for device in self.resource.devices():
            attributes = {name: value.get("string") for name, value in device.get("attributes", {}).items()}
            if attributes.get("uuid") != uuid:
                continue
            if attributes.get("type") == "mig":
                return (attributes["productName"], attributes["parentUUID"], attributes["profile"], uuid)
            return (attributes["productName"], uuid, None, None)
        return None

    def _make_pods(self):
        for name, job in self.jobs.items():
            if any(
                pod["metadata"]["labels"].get("gpuops.cluster/validation-job") == name for pod in self.pods.values()
            ):
                continue
            template = job["spec"]["template"]
            spec = template["spec"]
            pod = {
                "metadata": {
                    "name": f"{name}-x1",
                    "namespace": job["metadata"]["namespace"],
                    "labels": dict(template["metadata"]["labels"]),
                },
                "spec": copy.deepcopy(spec),
                "status": {},
            }
            self.pods[pod["metadata"]["name"]] = pod
            node = self.nodes.get(spec["nodeSelector"]["kubernetes.io/hostname"])
            if node is None or node.unschedulable:
                message = (
                    node.unschedulable
                    if node
                    else "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
                )
                pod["status"] = {
                    "phase": "Pending",
                    "conditions": [
                        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
                    ],
                }
                continue
            container = spec["containers"][0]
            if spec.get("resourceClaims"):
                claimed = self._claimed(spec["resourceClaims"][0])
                if claimed is None:
                    pod["status"] = {
                        "phase": "Pending",
                        "conditions": [
                            {
                                "type": "PodScheduled",
                                "status": "False",
                                "reason": "Unschedulable",
                                "message": "0/1 nodes are available: cannot allocate all claims",
                            }
                        ],
                    }
                    continue
                gpu_name, gpu_uuid, profile, mig_uuid = claimed
            else:
                # The one limit the node has devices for (HAMi's sharing pods add nvidia.com/gpumem, which only its
                # scheduler reads).
                (resource,) = [name for name in container["resources"]["limits"] if name in node.devices]
                gpu_name, gpu_uuid, profile, mig_uuid = node.allocate(resource)
            seen = [(gpu_name, gpu_uuid, [(profile, mig_uuid)] if profile else [])]
            exit_code, message = node.run(container["command"][2], seen)
            pod["spec"]["nodeName"] = node.name
            pod["status"] = {
                "phase": "Succeeded" if exit_code == 0 else "Failed",
                "containerStatuses": [
                    {
                        "name": container["name"],
                        "state": {
                            "terminated": {
                                "exitCode": exit_code,
                                "message": message,
                                "reason": "Completed" if exit_code == 0 else "Error",
                                "startedAt": "2026-01-01T00:00:01Z",
                                "finishedAt": "2026-01-01T00:00:11Z",
                            }
                        },
                    }
                ],
            }

    @staticmethod
    def matches(obj, label_selector):
        labels = obj["metadata"].get("labels") or {}
        wanted = dict(part.split("=", 1) for part in label_selector.split(",")) if label_selector else {}
        return all(labels.get(key) == value for key, value in wanted.items())


class FakeCore:
    def __init__(self, cluster):
        self.cluster = cluster

    def read_namespace(self, name):
        self.cluster.calls.append(("read_namespace", name))
        if name not in self.cluster.namespaces:
            raise FakeApiException(404, f'namespaces "{name}" not found')
        return self.cluster.namespaces[name]

    def create_namespace(self, body):
        self.cluster.calls.append(("create_namespace", body["metadata"]["name"]))
        self.cluster.namespaces[body["metadata"]["name"]] = body
        return body

    def list_node(self):
        return {"items": [node.resource_object() for node in self.cluster.nodes.values()]}

    def list_namespaced_pod(self, namespace, label_selector=""):
        self.cluster._make_pods()
        return {
            "items": [
                copy.deepcopy(pod)
                for pod in self.cluster.pods.values()
                if pod["metadata"]["namespace"] == namespace and self.cluster.matches(pod, label_selector)
            ]
        }

    def delete_collection_namespaced_pod(self, namespace, label_selector="", grace_period_seconds=None):
        self.cluster.calls.append(("delete_pods", label_selector, grace_period_seconds))
        # "kubelet": pods stay until their node's kubelet confirms; "api": even a forced deletion is refused.
        if self.cluster.stuck_pods == "api" or (self.cluster.stuck_pods == "kubelet" and grace_period_seconds != 0):
            return {}
        for name, pod in list(self.cluster.pods.items()):
            if pod["metadata"]["namespace"] == namespace and self.cluster.matches(pod, label_selector):
                del self.cluster.pods[name]
        if not self.cluster.pods:
            # Every device is free again: the next check's pods are handed out from the first device.
            for node in self.cluster.nodes.values():
                node.handed = {}
        return {}


class FakeBatch:
    def __init__(self, cluster):
        self.cluster = cluster

    def create_namespaced_job(self, namespace, body):
        cluster = self.cluster
        if cluster.fail_create_job_after is not None and len(cluster.created_jobs) >= cluster.fail_create_job_after:
            raise FakeApiException(
                403, f'jobs.batch is forbidden: User "validator" cannot create resource "jobs" in "{namespace}"'
            )
        if namespace not in cluster.namespaces:
            raise FakeApiException(404, f'namespaces "{namespace}" not found')
        cluster.created_jobs.append(copy.deepcopy(body))
        cluster.jobs[body["metadata"]["name"]] = copy.deepcopy(body)
        return body

    def list_namespaced_job(self, namespace, label_selector=""):
        return {
            "items": [
                copy.deepcopy(job)
                for job in self.cluster.jobs.values()
                if job["metadata"]["namespace"] == namespace and self.cluster.matches(job, label_selector)
            ]
        }

    def delete_collection_namespaced_job(self, namespace, label_selector="", propagation_policy=None):
        self.cluster.calls.append(("delete_jobs", label_selector, propagation_policy))
        for name, job in list(self.cluster.jobs.items()):
            if job["metadata"]["namespace"] == namespace and self.cluster.matches(job, label_selector):
                del self.cluster.jobs[name]
        return {}


class FakeResource:
    """resource.k8s.io/v1: ResourceSlices listed by driver, and the claim objects the validation creates."""

    def __init__(self, cluster, slices=()):
        self.cluster, self.slices = cluster, list(slices)
        self.objects = {}
        self.calls = []

    def devices(self):
        return [device for item in self.slices for device in item["spec"].get("devices") or ()]

    def list_resource_slice(self, field_selector=""):
        self.calls.append(field_selector)
        driver = field_selector.removeprefix("spec.driver=")
        return {"items": [item for item in self.slices if item["spec"]["driver"] == driver]}

    def _create(self, namespace, body):
        self.calls.append(("create", body["kind"], body["metadata"]["name"]))
        if namespace not in self.cluster.namespaces:
            raise FakeApiException(404, f'namespaces "{namespace}" not found')
        self.objects[(body["kind"], body["metadata"]["name"])] = copy.deepcopy(body)
        return body

    def create_namespaced_resource_claim_template(self, namespace, body):
        return self._create(namespace, body)

    def create_namespaced_resource_claim(self, namespace, body):
        return self._create(namespace, body)

    def _delete(self, kind, namespace, label_selector):
        self.calls.append(("delete", kind, label_selector))
        for key, found in list(self.objects.items()):
            if (
                key[0] == kind
                and found["metadata"]["namespace"] == namespace
                and self.cluster.matches(found, label_selector)
            ):
                del self.objects[key]
        return {}

    def delete_collection_namespaced_resource_claim_template(self, namespace, label_selector=""):
        return self._delete("ResourceClaimTemplate", namespace, label_selector)

    def delete_collection_namespaced_resource_claim(self, namespace, label_selector=""):
        return self._delete("ResourceClaim", namespace, label_selector)
