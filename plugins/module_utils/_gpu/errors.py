# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the GPU knowledge: a request the catalog or the MIG geometry cannot satisfy.

excerpt() is how every message of the collection quotes a value it was given: the plan's errors and the
GPU knowledge's alike (this package is the one both may import).
"""

from __future__ import annotations

# Characters of a value a message quotes before it is cut.
EXCERPT_CHARS = 40
# Integers longer than this are described, not written: repr() of a huge int is slow, and Python refuses
# it past sys.int_info.default_max_str_digits (4300) digits.
_EXCERPT_INT_BITS = 1024


class GpuError(ValueError):
    """Something a GPU cannot do; str() is one sentence: what is wrong and what is valid."""


class MigLayoutError(GpuError):
    """A MIG layout or mig-parted config that cannot work on the GPU it is meant for."""


def excerpt(value, limit=EXCERPT_CHARS, bare=False):
    """VALUE as a message quotes it: its repr() cut to LIMIT characters, saying how long it was.

    BARE: a short printable string as it is (a key in a key path such as gpuops_mps.replicas).
    """
    if bare and isinstance(value, str) and len(value) <= limit and value.isprintable():
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _EXCERPT_INT_BITS:
        return f"{'-' if value < 0 else ''}an integer of {value.bit_length()} bits"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters written out"
    return f"{text[:limit]}... ({size})"
