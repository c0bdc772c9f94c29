# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the GPU knowledge: a request the catalog or the MIG geometry cannot satisfy."""

from __future__ import annotations


class GpuError(ValueError):
    """Something a GPU cannot do; str() is one sentence: what is wrong and what is valid."""


class MigLayoutError(GpuError):
    """A MIG layout or mig-parted config that cannot work on the GPU it is meant for."""
