# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The few Kubernetes API calls the validation makes, through the kubernetes Python client, as plain dicts.

The only file of _validation that touches the client; the run loop (runner.py) takes any object with these
methods, which is how the unit tests drive it.
"""

from __future__ import annotations

import json
import os

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError

try:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.config.config_exception import ConfigException
except ImportError:
    HAS_KUBERNETES = False
else:
    HAS_KUBERNETES = True

# Background: the Job goes at once and the garbage collector removes its pods; the run deletes them as well.
PROPAGATION = "Background"


class KubeApiError(GpuopsError, RuntimeError):
    """A call the API refused or could not answer; str() names the call and the API's reason."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def _api_message(err):
    body = getattr(err, "body", None)
    try:
        return json.loads(body).get("message") or body
    except (TypeError, ValueError, AttributeError):
        return body or getattr(err, "reason", None) or str(err)


class KubeApi:
    """CORE, BATCH and RESOURCE are the client's CoreV1Api, BatchV1Api and ResourceV1Api (or doubles with their
    methods); RESOURCE is needed only where a node offers its GPUs through DRA."""

    def __init__(self, core, batch, serialize=None, resource=None):
        self.core, self.batch, self.resource = core, batch, resource
        self.serialize = serialize or (lambda obj: obj)

    @classmethod
    def connect(cls, kubeconfig=None, context=None):
        """A client from KUBECONFIG (default: $KUBECONFIG or ~/.kube/config) and CONTEXT, or the in-cluster one."""
        try:
            if kubeconfig or context or not _in_cluster():
                api_client = k8s_config.new_client_from_config(config_file=kubeconfig, context=context)
            else:
                k8s_config.load_incluster_config()
                api_client = k8s_client.ApiClient()
        except (ConfigException, OSError, TypeError, ValueError) as err:
            raise KubeApiError(f"cannot load the kubeconfig {kubeconfig or '(default)'}: {err}") from err
        return cls(
            k8s_client.CoreV1Api(api_client),
            k8s_client.BatchV1Api(api_client),
            api_client.sanitize_for_serialization,
            k8s_client.ResourceV1Api(api_client),
        )

    def _call(self, what, method, *args, **kwargs):
        try:
            return self.serialize(method(*args, **kwargs))
        except Exception as err:
            status = getattr(err, "status", None)
            if status is None:
                raise
            raise KubeApiError(f"{what}: HTTP {status}: {_api_message(err)}", status) from err

    def namespace_exists(self, name):
        try:
            self._call(f"read namespace {name}", self.core.read_namespace, name)
        except KubeApiError as err:
            if err.status == 404:
                return False
            raise
        return True

    def create_namespace(self, manifest):
        self._call(f"create namespace {manifest['metadata']['name']}", self.core.create_namespace, manifest)

    def list_nodes(self):
        return self._call("list nodes", self.core.list_node).get("items") or []

    def list_resource_slices(self, driver):
        """DRIVER's ResourceSlices (resource.k8s.io/v1) of every node."""
        found = self._call(
            f"list the ResourceSlices of {driver}",
            self.resource.list_resource_slice,
            field_selector=f"spec.driver={driver}",
        )
        return found.get("items") or []

    def create_claim_object(self, namespace, manifest):
        """A ResourceClaimTemplate or ResourceClaim (resource.k8s.io/v1) of a validation pod."""
        kind, name = manifest["kind"], manifest["metadata"]["name"]
        create = {
            "ResourceClaimTemplate": self.resource.create_namespaced_resource_claim_template,
            "ResourceClaim": self.resource.create_namespaced_resource_claim,
        }[kind]
        self._call(f"create {kind} {namespace}/{name}", create, namespace, manifest)

    def delete_claim_objects(self, namespace, label_selector):
        """The ResourceClaimTemplates and ResourceClaims of LABEL_SELECTOR."""
        for kind, delete in (
            ("ResourceClaimTemplates", self.resource.delete_collection_namespaced_resource_claim_template),
            ("ResourceClaims", self.resource.delete_collection_namespaced_resource_claim),
        ):
            self._call(
                f"delete {kind} {label_selector} in {namespace}", delete, namespace, label_selector=label_selector
            )

    def create_job(self, namespace, manifest):
        name = manifest["metadata"]["name"]
        self._call(f"create Job {namespace}/{name}", self.batch.create_namespaced_job, namespace, manifest)

    def list_jobs(self, namespace, label_selector):
        found = self._call(
            f"list Jobs in {namespace}", self.batch.list_namespaced_job, namespace, label_selector=label_selector
        )
        return found.get("items") or []

    def list_pods(self, namespace, label_selector):
        found = self._call(
            f"list pods in {namespace}", self.core.list_namespaced_pod, namespace, label_selector=label_selector
        )
        return found.get("items") or []

    def delete_jobs(self, namespace, label_selector):
        self._call(
            f"delete Jobs {label_selector} in {namespace}",
            self.batch.delete_collection_namespaced_job,
            namespace,
            label_selector=label_selector,
            propagation_policy=PROPAGATION,
        )

    def delete_pods(self, namespace, label_selector, force=False):
        """FORCE: grace period 0, the pods leave the API without the kubelet's confirmation."""
        extra = {"grace_period_seconds": 0} if force else {}
        self._call(
            f"delete pods {label_selector} in {namespace}",
            self.core.delete_collection_namespaced_pod,
            namespace,
            label_selector=label_selector,
            **extra,
        )


def _in_cluster():
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and not os.environ.get("KUBECONFIG")
