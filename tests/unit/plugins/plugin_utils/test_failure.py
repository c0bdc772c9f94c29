# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A collection error becomes a task failure in one place: a filter's AnsibleFilterError, an action's result."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import (
    CapacityError,
    IntentError,
    IntentErrors,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.failure import failed_result, fails_the_task


@fails_the_task
def capacity_filter(fits):
    """What the filter says."""
    if not fits:
        raise CapacityError("no MIG device fits")
    return "fits"


def test_a_filter_fails_the_task_with_the_errors_message_unchanged():
    with pytest.raises(AnsibleFilterError) as raised:
        capacity_filter(False)
    assert raised.value.message == "no MIG device fits"
    assert isinstance(raised.value.__cause__, CapacityError)


def test_a_filter_returns_what_it_returns_and_keeps_its_name():
    assert capacity_filter(True) == "fits"
    assert (capacity_filter.__name__, capacity_filter.__doc__) == ("capacity_filter", "What the filter says.")


def test_other_exceptions_are_left_alone():
    @fails_the_task
    def broken():
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        broken()


def test_an_actions_failed_result_lists_each_problem_under_its_headline():
    errors = IntentErrors([IntentError("a", "gpuops_gpu_count", "is not set"), IntentError("b", "x", "bad")])
    assert failed_result(errors, "The intent is invalid.") == {
        "failed": True,
        "changed": False,
        "errors": [
            {"host": "a", "variable": "gpuops_gpu_count", "message": "is not set"},
            {"host": "b", "variable": "x", "message": "bad"},
        ],
        "msg": "The intent is invalid.\na: gpuops_gpu_count: is not set\nb: x: bad",
    }


def test_a_failed_result_without_problems_or_headline_is_the_message():
    assert failed_result(CapacityError("no MIG device fits")) == {
        "failed": True,
        "changed": False,
        "msg": "no MIG device fits",
    }
