# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What can go wrong on a host, classified so that callers act on it without matching text.

:func:`classify_error` turns an nvidia-smi run into an :class:`ErrorKind` (wait for clients to go,
plan a reboot, report an unsupported GPU); the exceptions form one hierarchy under :class:`HostError`, itself
a GpuopsError.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError

# nvidia-smi(1) RETURN VALUE: 9 "NVIDIA driver is not loaded".
RC_DRIVER_NOT_LOADED = 9


class TextEnum(str, enum.Enum):  # enum.StrEnum needs Python 3.11; targets run 3.9
    """As enum.StrEnum: str() and f-strings give the value."""

    def __str__(self):
        return str(self.value)


class ErrorKind(TextEnum):
    """What went wrong, in terms a caller can act on."""

    DRIVER_NOT_LOADED = "driver_not_loaded"  # rc 9, "couldn't communicate with the NVIDIA driver"
    NO_DEVICES = "no_devices"  # "No devices were found"
    NO_MIG_DEVICES = "no_mig_devices"  # "No MIG-supported devices found" / "No MIG-enabled devices found"
    NOT_FOUND = "not_found"  # "No GPU instances found" (nothing to list or destroy)
    IN_USE = "in_use"  # "In use by another client" (instance, mode or GPU reset): stop the GPU's clients, or reboot
    INSUFFICIENT_RESOURCES = "insufficient_resources"  # layout does not fit the free slices
    PENDING_MIG_MODE = "pending_mig_mode"  # mode change waits for a GPU reset or a reboot
    NOT_SUPPORTED = "not_supported"
    INSUFFICIENT_PERMISSIONS = "insufficient_permissions"
    INVALID_ARGUMENT = "invalid_argument"
    UNKNOWN = "unknown"


_KIND_PATTERNS = (
    (ErrorKind.DRIVER_NOT_LOADED, re.compile(r"couldn't communicate with the NVIDIA driver", re.IGNORECASE)),
    (ErrorKind.PENDING_MIG_MODE, re.compile(r"MIG mode is in pending (enable|disable) state", re.IGNORECASE)),
    (ErrorKind.IN_USE, re.compile(r"In use by another client", re.IGNORECASE)),
    (ErrorKind.INSUFFICIENT_RESOURCES, re.compile(r"Insufficient Resources", re.IGNORECASE)),
    (ErrorKind.INSUFFICIENT_PERMISSIONS, re.compile(r"Insufficient Permissions", re.IGNORECASE)),
    (ErrorKind.NO_MIG_DEVICES, re.compile(r"No MIG-(supported|enabled) devices found", re.IGNORECASE)),
    (ErrorKind.NO_DEVICES, re.compile(r"No devices were found", re.IGNORECASE)),
    (ErrorKind.NOT_FOUND, re.compile(r"No (GPU|compute) instances found|\bNot Found\b", re.IGNORECASE)),
    (ErrorKind.NOT_SUPPORTED, re.compile(r"Not Supported|is not supported", re.IGNORECASE)),
    (ErrorKind.INVALID_ARGUMENT, re.compile(r"Invalid Argument|Invalid combination", re.IGNORECASE)),
)


def kind_of(text):
    """The ErrorKind a message of nvidia-smi stands for (UNKNOWN when none fits)."""
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(text):
            return kind
    return ErrorKind.UNKNOWN


@dataclass
class NvidiaSmiError:
    """A classified problem in one nvidia-smi run; ``message`` is its first meaningful line."""

    kind: ErrorKind
    message: str
    rc: int


def classify_error(rc, stdout, stderr=""):
    """Classify a run that failed or warned; None when it reports nothing wrong.

    Covers failing runs (rc != 0) and runs that end in "All done." but carry a warning that
    changes what happened (pending MIG mode, "Unable to enable MIG Mode ...: Not Supported"), and
    the failures of a GPU reset whatever its exit status ("The following GPUs could not be reset:"
    with "In use by another client" or "Not Supported" per GPU; "Resetting GPU ... is not supported.").
    """
    text = "\n".join(part for part in (stdout, stderr) if part)
    if rc == RC_DRIVER_NOT_LOADED:
        kind = ErrorKind.DRIVER_NOT_LOADED
    else:
        kind = kind_of(text)
        warned = re.search(
            r"^(Warning: MIG mode|Unable to|Failed to|Terminating early|The following GPUs could not be reset"
            r"|Resetting GPU \S+ is not supported)",
            text,
            re.MULTILINE,
        )
        if rc == 0 and not warned:
            return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    message = next((line for line in lines if not line.startswith("Successfully")), lines[0] if lines else "")
    return NvidiaSmiError(kind, message, rc)


class HostError(GpuopsError):
    """Base of the errors raised while reading or changing a host's GPUs."""


class ParseError(HostError, ValueError):
    """Output that does not have the shape the parser expects; str() says what was seen."""


class CommandFailed(HostError):
    """One nvidia-smi call that failed; carries what a user needs to see, and the classified ``kind``."""

    def __init__(self, argv, rc, stdout, stderr, reason, kind=None):
        super().__init__(reason)
        self.argv, self.rc, self.stdout, self.stderr, self.reason, self.kind = argv, rc, stdout, stderr, reason, kind

    def as_dict(self):
        return {"cmd": self.argv, "rc": self.rc, "stdout": self.stdout, "stderr": self.stderr}

    def result_fields(self):
        return self.as_dict()


class MigReconcileError(HostError):
    """The layout was not applied. ``result`` holds what is known (GPUs before/after, commands)."""

    def __init__(self, message, result=None, command=None):
        super().__init__(message)
        self.message, self.result, self.command = message, result or {}, command

    def result_fields(self):
        """What is known of the GPUs and the failed call; the warnings go to the task's warnings instead."""
        details = {key: value for key, value in self.result.items() if key != "warnings"}
        return {**details, **(self.command or {})}
