# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host plays' batch size and failure threshold (gpuops.cluster.play_serial and play_max_fail_percentage)."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.play_batches import (
    FilterModule,
    play_max_fail_percentage,
    play_serial,
)


@pytest.mark.parametrize("value", [1, 16, "3", "20%", "100%", "1%", [1, "25%", "100%"], ["50%"]])
def test_a_serial_ansible_accepts_comes_back_unchanged(value):
    assert play_serial(value) == value


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(0, "0 is below 1", id="zero"),
        pytest.param(-2, "-2 is below 1", id="negative"),
        pytest.param("0", "'0' is below 1", id="zero-string"),
        pytest.param("0%", "'0%' is a percentage outside 1% to 100%", id="zero-percent"),
        pytest.param("150%", "'150%' is a percentage outside 1% to 100%", id="over-100-percent"),
        pytest.param("12.5%", "'12.5%' is neither a whole number nor a percentage", id="decimal-percent"),
        pytest.param("all", "'all' is neither a whole number nor a percentage", id="word"),
        pytest.param(True, "True is a boolean", id="boolean"),
        pytest.param([1, "x"], "'x' is neither a whole number nor a percentage", id="bad-list-item"),
        pytest.param([], "the list is empty", id="empty-list"),
    ],
)
def test_a_bad_serial_names_the_variable_the_value_and_what_is_valid(value, problem):
    with pytest.raises(AnsibleFilterError) as raised:
        play_serial(value)

    message = str(raised.value)
    assert message.startswith(f"gpuops_serial={value!r} is invalid: ")
    assert problem in message
    assert "a percentage of the play's hosts from 1% to 100%" in message


@pytest.mark.parametrize("value", [0, 100, 25, 12.5, "0", "30", "30%", "100%"])
def test_a_max_fail_percentage_from_0_to_100_comes_back_unchanged(value):
    assert play_max_fail_percentage(value) == value


@pytest.mark.parametrize("value", [-1, 101, "150%", "some", "", None, True])
def test_a_bad_max_fail_percentage_names_the_variable_and_the_range(value):
    with pytest.raises(AnsibleFilterError) as raised:
        play_max_fail_percentage(value, "the_threshold")

    assert str(raised.value).startswith(f"the_threshold={value!r} is invalid: ")
    assert "a number from 0 to 100" in str(raised.value)


def test_the_filters_are_registered_under_their_names():
    assert FilterModule().filters() == {
        "play_serial": play_serial,
        "play_max_fail_percentage": play_max_fail_percentage,
    }
