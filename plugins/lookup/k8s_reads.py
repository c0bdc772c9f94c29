# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Several reads from the Kubernetes API in one task, through kubernetes.core's k8s lookup."""

from __future__ import annotations

DOCUMENTATION = r"""
name: k8s_reads
author:
  - gpuops.cluster maintainers (@gpuops)
version_added: 0.1.0
short_description: Several reads from the Kubernetes API in one task, failing with what to fix when it does not answer
description:
  - Runs the
    L(kubernetes.core.k8s lookup,https://docs.ansible.com/ansible/latest/collections/kubernetes/core/k8s_lookup.html)
    once per read, in the controller's process. A Kubernetes role reads what it decides on in one task, where each
    M(kubernetes.core.k8s_info) would start a module (measured on the test bed, 0.6 to 1 s each against 0.1 s for a
    task of several reads).
  - A kind the API server does not serve (a CRD not installed yet) reads as no object, as
    M(kubernetes.core.k8s_info) gives C(api_found=false) and no resources.
  - Any other failure (no answer, refused credentials) stops the task naming the kubeconfig and what to fix.
  - The controller's Python needs the C(kubernetes) client, as kubernetes.core's lookups do.
options:
  kubeconfig:
    description: The kubeconfig on the controller.
    type: path
    required: true
  reads:
    description:
      - What to read, by a key of the caller's choice; each value holds options of the kubernetes.core.k8s lookup
        (C(kind), C(api_version), C(resource_name), C(namespace), C(label_selector), C(field_selector)).
      - The answer has the same keys, each with the list of objects read (empty when there is none).
    type: dict
    default: {}
  definitions:
    description:
      - Object definitions (C(apiVersion), C(kind), C(metadata.name), C(metadata.namespace)) whose live objects to
        read. The answer's C(definitions) lists, in the same order, each live object or C({}) where there is none.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Read the nodes and one ConfigMap in one task
  ansible.builtin.set_fact:
    cluster: >-
      {{ lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig,
                reads={'nodes': {'kind': 'Node'},
                       'configmap': {'kind': 'ConfigMap', 'namespace': 'gpu-operator',
                                     'resource_name': 'plugin-config'}}) }}

- name: Apply only the objects an apply would change
  kubernetes.core.k8s:
    kubeconfig: "{{ kubeconfig }}"
    definition: "{{ wanted | gpuops.cluster.k8s_to_apply(lookup('gpuops.cluster.k8s_reads', kubeconfig=kubeconfig,
                                                                 definitions=wanted).definitions) }}"
"""

RETURN = r"""
_raw:
  description:
    - One dict, with each key of O(reads) and its list of objects, and C(definitions) with the live object of each
      of O(definitions) or C({}).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import lookup_loader
from ansible.plugins.lookup import LookupBase

try:
    import kubernetes  # noqa: F401 pylint: disable=unused-import
except ImportError as kubernetes_import_error:
    KUBERNETES_IMPORT_ERROR = kubernetes_import_error
else:
    KUBERNETES_IMPORT_ERROR = None

# The options of the kubernetes.core.k8s lookup a read may give (kubernetes.core 6.2 plugins/lookup/k8s.py).
READ_OPTIONS = frozenset(("kind", "api_version", "resource_name", "namespace", "label_selector", "field_selector"))


def _not_served(error):
    """A kind the API server does not serve: kubernetes' dynamic client raises ResourceNotFoundError on discovery."""
    return type(error).__name__ == "ResourceNotFoundError"


def definition_read(definition):
    """The read of the live object of DEFINITION."""
    metadata = definition.get("metadata") if isinstance(definition, dict) else None
    if not isinstance(metadata, dict) or not definition.get("kind") or not metadata.get("name"):
        raise AnsibleLookupError(f"k8s_reads: a definition needs a kind and metadata.name, got {definition!r}")
    read = {
        "kind": definition["kind"],
        "api_version": definition.get("apiVersion", "v1"),
        "resource_name": metadata["name"],
    }
    if metadata.get("namespace"):
        read["namespace"] = metadata["namespace"]
    return read


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        kubeconfig = self.get_option("kubeconfig")
        reads = self.get_option("reads")
        definition_reads = [definition_read(definition) for definition in self.get_option("definitions")]
        for key, read in reads.items():
            if not isinstance(read, dict) or not read.get("kind") or set(read) - READ_OPTIONS:
                raise AnsibleLookupError(
                    f"k8s_reads: read {key!r} needs a kind and only these options: {', '.join(sorted(READ_OPTIONS))};"
                    f" got {read!r}"
                )
        if KUBERNETES_IMPORT_ERROR is not None:
            raise AnsibleLookupError(
                f"k8s_reads: the controller's Python has no kubernetes client ({KUBERNETES_IMPORT_ERROR}); install the"
                " collection's requirements (pip install kubernetes)"
            )
        if "definitions" in reads:
            raise AnsibleLookupError(
                "k8s_reads: 'definitions' names the answer to the definitions, not a read; give the read another key"
            )
        k8s = lookup_loader.get("kubernetes.core.k8s", loader=self._loader, templar=self._templar)
        if k8s is None:
            raise AnsibleLookupError("k8s_reads: the kubernetes.core collection is not installed on the controller")

        def read_objects(read):
            try:
                return k8s.run([], variables, kubeconfig=kubeconfig, **read)
            except Exception as error:  # pylint: disable=broad-exception-caught
                if _not_served(error):
                    return []
                # The client's first line says why (connection refused, 401); later lines repeat it.
                why = (str(error).splitlines() or [type(error).__name__])[0][:300]
                raise AnsibleLookupError(
                    f"The Kubernetes API server of {kubeconfig} does not answer ({why})."
                    " Start the cluster (playbooks/cluster.yml) or point gpuops_kubeconfig at a kubeconfig"
                    " whose server is reachable from the controller."
                ) from None

        answer = {key: read_objects(read) for key, read in reads.items()}
        answer["definitions"] = [next(iter(read_objects(read)), {}) for read in definition_reads]
        return [answer]
