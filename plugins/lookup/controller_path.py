# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The state of paths on the controller, as host_state reads a host's."""

from __future__ import annotations

DOCUMENTATION = r"""
name: controller_path
author:
  - gpuops.cluster maintainers (@gpuops)
version_added: 0.1.0
short_description: The state of paths on the controller, as gpuops.cluster.host_state gives a host's
description:
  - For each path (C(~) expanded), on the controller, what M(gpuops.cluster.host_state) gives for a host's path with
    its checksum; so that P(gpuops.cluster.path_differs#filter) tells whether a write to the controller (a
    kubeconfig) would change anything, without the two module runs of M(ansible.builtin.copy) to find out.
options:
  _terms:
    description: Absolute paths (or starting with C(~)) on the controller.
    type: list
    elements: path
    required: true
"""

EXAMPLES = r"""
- name: Write the kubeconfig only where it differs
  ansible.builtin.copy:
    content: "{{ kubeconfig_text }}"
    dest: ~/.kube/gpuops.yaml
    mode: "0600"
  delegate_to: localhost
  when: >-
    lookup('gpuops.cluster.controller_path', '~/.kube/gpuops.yaml')
    | gpuops.cluster.path_differs('file', kubeconfig_text, '0600')
"""

RETURN = r"""
_raw:
  description:
    - One state per path, as the values of RV(gpuops.cluster.host_state#module:paths) (with C(checksum)).
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible_collections.gpuops.cluster.plugins.module_utils._host import system_state


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        states = []
        for term in terms:
            path = os.path.expanduser(str(term))
            if not os.path.isabs(path):
                raise AnsibleLookupError(f"controller_path: {term!r} is not an absolute path")
            states.append(system_state.path_state(path, checksum=True))
        return states
