# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The root of the collection's errors, and the errors of the GPU knowledge.

GpuopsError is the base of every error the collection raises on purpose: it is defined here, in the package
every other may import (the host-side ones included), so that one `except GpuopsError` catches them all and
one place turns them into a task failure (plugin_utils/failure.py on the controller, fail_module() in modules).
excerpt() is how every message of the collection quotes a value it was given.
"""

from __future__ import annotations

# Characters of a value a message quotes before it is cut.
EXCERPT_CHARS = 40
# Integers longer than this are described, not written: repr() of a huge int is slow, and Python refuses
# it past sys.int_info.default_max_str_digits (4300) digits.
_EXCERPT_INT_BITS = 1024


class GpuopsError(Exception):
    """Root of the collection's errors; str() is the message a user reads, as it stands.

    Each subclass also keeps the builtin base its callers catch (ValueError, RuntimeError).
    """

    def result_fields(self):
        """What a failed task returns besides msg, by name: nothing unless the error knows more."""
        return {}


class InputError(GpuopsError, ValueError):
    """A value given to the collection that it cannot use; str() names the variable and what would be valid."""


class GpuError(GpuopsError, ValueError):
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


def fail_module(module, error, msg=None, **fields):
    """Fail the task of MODULE (an AnsibleModule) with ERROR, a GpuopsError: MSG, else the error's message,
    with the error's result_fields() and FIELDS.

    The one shape of a module's `except GpuopsError` (kubernetes.core's fail_from_exception does the same).
    MODULE is duck-typed: this package imports nothing of Ansible.
    """
    module.fail_json(msg=str(error) if msg is None else msg, **error.result_fields(), **fields)
