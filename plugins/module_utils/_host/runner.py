# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one way the collection runs nvidia-smi: every call recorded, every failure a CommandFailed."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import (
    CommandFailed,
    ErrorKind,
    classify_error,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.parsers import parse_mig_change


class NvidiaSmiRunner:
    """Runs nvidia-smi through ``run(argv) -> (rc, stdout, stderr)`` and records every call.

    The one way the collection calls nvidia-smi: the facts module, the MIG module and the boot-time
    restore pass their own ``run`` (AnsibleModule.run_command, subprocess).
    """

    def __init__(self, binary, run):
        self.binary, self._run, self.calls = binary, run, []

    def _call(self, args, changes_state):
        argv = [self.binary, *args]
        rc, stdout, stderr = self._run(argv)
        self.calls.append({"cmd": argv, "rc": rc, "changes_state": changes_state})
        return argv, rc, stdout or "", stderr or ""

    def query(self, args, empty_kinds=()):
        """stdout of a query; "" when it fails with a kind in ``empty_kinds`` ("nothing there"); else CommandFailed."""
        argv, rc, stdout, stderr = self._call(args, False)
        if rc == 0:
            return stdout
        problem = classify_error(rc, stdout, stderr)
        kind = problem.kind if problem else None
        if kind is not None and kind in empty_kinds:
            return ""
        raise CommandFailed(argv, rc, stdout, stderr, problem.message if problem else f"exit status {rc}", kind)

    def parsed(self, args, parser, empty_kinds=()):
        """``parser`` applied to a query's output; output of an unexpected shape is a CommandFailed too."""
        stdout = self.query(args, empty_kinds)
        try:
            return parser(stdout)
        except ValueError as exc:  # ParseError included
            argv, rc = self.calls[-1]["cmd"], self.calls[-1]["rc"]
            raise CommandFailed(
                argv, rc, stdout, "", f"unexpected output, which this collection cannot read: {exc}"
            ) from exc

    def change(self, args):
        """Run a state-changing call; CommandFailed unless nvidia-smi reports success for all of it."""
        argv, rc, stdout, stderr = self._call(args, True)
        problem = classify_error(rc, stdout, stderr)
        failures = parse_mig_change(stdout).failures
        if rc != 0 or failures or (problem and problem.kind != ErrorKind.PENDING_MIG_MODE):
            reason = problem.message if problem else f"exit status {rc}"
            raise CommandFailed(argv, rc, stdout, stderr, reason, problem.kind if problem else None)
        return stdout
