# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whole numbers out of inventory values, as every linter of the intent reads them.

Here, in the package every other may import, so that the plan (_plan) and the memory-sharing backends
(_sharing) read a number the same way.
"""

from __future__ import annotations

import re

_ASCII_DIGITS = re.compile(r"[0-9]+")
# Digits read from a string: far more than any bound of the intent has (an int64 has 19), and far below the
# 4300 that int() refuses (sys.int_info.default_max_str_digits).
_MAX_DIGITS = 64


def whole_number(value) -> int | None:
    """VALUE as an int when it is one or a string of ASCII digits ("4" from an INI inventory or -e); else None.

    str.isdigit() is not used: it accepts digits such as "\u00b2" that int() refuses. A string of more than
    64 significant digits is no number any consumer reads: None.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _ASCII_DIGITS.fullmatch(value):
        significant = value.lstrip("0") or "0"
        return int(significant) if len(significant) <= _MAX_DIGITS else None
    return None
