# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a collection error becomes a task failure, for the plugins that run on the controller.

The domain code raises GpuopsError (module_utils/_gpu/errors.py) and knows nothing of Ansible; a filter fails
with AnsibleFilterError and an action returns a failed result. Both conversions are here, once, with the
error's message unchanged (kubernetes.core does the same in module_utils/k8s/exceptions.py).
"""

from __future__ import annotations

import functools

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError


def fails_the_task(function):
    """FUNCTION, a filter, failing the task with the message of any GpuopsError it raises."""

    @functools.wraps(function)
    def filter_function(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except GpuopsError as error:
            raise AnsibleFilterError(str(error)) from error

    return filter_function


def failed_result(error, headline=None):
    """An action's result for ERROR, a GpuopsError: failed, nothing changed, HEADLINE (what the failure means
    for the task) above the error's message, and each problem by host and variable when it lists them."""
    result = {"failed": True, "changed": False}
    problems = getattr(error, "errors", None)
    if problems is not None:
        result["errors"] = [{"host": p.host, "variable": p.variable, "message": p.message} for p in problems]
    result["msg"] = f"{headline}\n{error}" if headline else str(error)
    return result
