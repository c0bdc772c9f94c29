# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the helm binary can drive kubernetes.core's helm modules.

kubernetes.core 6.x runs `helm list --all`, a flag Helm 4 removed (kubernetes.core #1038): with Helm 4
its helm module installs a release and then fails. Only Helm 3 works.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)\S*")


def helm_problem(rc, stdout, stderr, binary):
    """Why BINARY (which printed STDOUT for `helm version --template {{.Version}}`) cannot be used, or None."""
    if rc != 0:
        detail = (stderr or stdout or "").strip().splitlines()
        reason = detail[-1] if detail else f"exit status {rc}"
        return (
            f"gpu_operator_helm_binary: {binary!r} does not run ({reason}); install Helm 3 (v3.17 is tested) "
            "and put it on PATH or set gpu_operator_helm_binary to its path"
        )
    found = _VERSION.search(stdout or "")
    if not found:
        return (
            f"gpu_operator_helm_binary: {binary!r} printed {stdout!r} as its version, not a Helm version; "
            "point it at a Helm 3 binary"
        )
    if found.group(1) != "3":
        return (
            f"gpu_operator_helm_binary: {binary!r} is Helm {found.group(0)}, but kubernetes.core 6.x needs Helm 3 "
            "(it runs `helm list --all`, which Helm 4 removed); install Helm 3 (v3.17 is tested) and set "
            "gpu_operator_helm_binary to its path"
        )
    return None
