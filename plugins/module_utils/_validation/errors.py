# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the validation: bad input found before anything is created."""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError


class ValidationInputError(GpuopsError, ValueError):
    """Input the validation cannot run with; the problems name the option (and host) and what would be valid."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))
