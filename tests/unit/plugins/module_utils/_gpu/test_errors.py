# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One root for the collection's errors, each keeping the builtin base its callers catch, and one way to fail."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import (
    GpuError,
    GpuopsError,
    MigLayoutError,
    fail_module,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import (
    CommandFailed,
    HostError,
    MigReconcileError,
    ParseError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.kube import KubeApiError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.runner import CleanupError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import (
    CapacityError,
    DevicePluginConfigError,
    IntentError,
    IntentErrors,
    PlanError,
)


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (GpuError, ValueError),
        (MigLayoutError, ValueError),
        (PlanError, ValueError),
        (CapacityError, ValueError),
        (DevicePluginConfigError, ValueError),
        (IntentErrors, ValueError),
        (HostError, Exception),
        (ParseError, ValueError),
        (CommandFailed, Exception),
        (MigReconcileError, Exception),
        (ValidationInputError, ValueError),
        (KubeApiError, RuntimeError),
        (CleanupError, RuntimeError),
    ],
    ids=lambda value: value.__name__,
)
def test_every_collection_error_is_a_gpuops_error_and_keeps_its_builtin_base(error, builtin):
    assert issubclass(error, GpuopsError)
    assert issubclass(error, builtin)


def test_an_intent_error_is_a_problem_not_an_exception():
    problem = IntentError("gpu-1", "rke2_state", "'gone' is not a state")
    assert not isinstance(problem, BaseException)
    assert str(problem) == "gpu-1: rke2_state: 'gone' is not a state"


class FakeModule:
    def fail_json(self, **result):
        raise SystemExit(result)


def fail(error, **kwargs):
    with pytest.raises(SystemExit) as exited:
        fail_module(FakeModule(), error, **kwargs)
    return exited.value.args[0]


def test_fail_module_gives_the_message_and_the_fields_the_error_knows():
    failed = CommandFailed(["nvidia-smi", "-L"], 9, "", "no driver", "driver not loaded")
    assert fail(failed, msg=f"nvidia-smi failed: {failed}") == {
        "msg": "nvidia-smi failed: driver not loaded",
        "cmd": ["nvidia-smi", "-L"],
        "rc": 9,
        "stdout": "",
        "stderr": "no driver",
    }


def test_fail_module_leaves_a_reconcile_errors_warnings_to_the_task():
    error = MigReconcileError("GPUs in use", {"changed": False, "warnings": ["w"]}, {"cmd": ["x"], "rc": 1})
    assert fail(error, config_name="all-1g.10gb") == {
        "msg": "GPUs in use",
        "changed": False,
        "cmd": ["x"],
        "rc": 1,
        "config_name": "all-1g.10gb",
    }


def test_fail_module_with_an_error_that_knows_nothing_more():
    assert fail(CapacityError("no MIG device fits")) == {"msg": "no MIG device fits"}
