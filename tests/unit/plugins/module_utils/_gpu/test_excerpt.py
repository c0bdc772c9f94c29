# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""excerpt(): how every message quotes a value it was given, short whatever the value."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import EXCERPT_CHARS, excerpt


@pytest.mark.parametrize(("value", "quoted"), [("hybrid", "'hybrid'"), (4, "4"), (None, "None"), ([1], "[1]")])
def test_a_short_value_is_its_repr(value, quoted):
    assert excerpt(value) == quoted


def test_a_long_string_is_cut_and_its_length_said():
    assert excerpt("x" * 10000) == "'" + "x" * (EXCERPT_CHARS - 1) + "... (10000 characters)"


def test_a_line_break_stays_escaped():
    assert "\n" not in excerpt("a\nb" * 100)


def test_a_long_structure_is_cut():
    assert excerpt([{"a": "b" * 500}]).endswith("... (511 characters written out)")


def test_a_huge_integer_is_described_not_written():
    # repr() would raise past 4300 digits (sys.int_info.default_max_str_digits).
    assert excerpt(10**5000) == "an integer of 16610 bits"
    assert excerpt(-(10**5000)) == "-an integer of 16610 bits"


def test_bare_writes_a_short_key_as_it_is():
    assert excerpt("replicas", bare=True) == "replicas"
    assert excerpt("two\nlines", bare=True) == "'two\\nlines'"
    assert excerpt("k" * 100, bare=True).endswith("... (100 characters)")
