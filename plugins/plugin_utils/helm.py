# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a helm binary can drive kubernetes.core's helm modules, for every role that installs a chart.

kubernetes.core 6.x runs `helm list --all`, a flag Helm 4 removed (kubernetes.core #1038): with Helm 4
its helm module installs a release and then fails. Only Helm 3 works.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)\S*")


def helm_problem(rc, stdout, stderr, binary, variable):
    """Why BINARY (which printed STDOUT for `helm version --short`) cannot be used, or None.

    VARIABLE is the role variable that names the binary, for the message.
    """
    if rc != 0:
        detail = (stderr or stdout or "").strip().splitlines()
        reason = detail[-1] if detail else f"exit status {rc}"
        return (
            f"{variable}: {binary!r} does not run ({reason}); install Helm 3 (v3.17 is tested) "
            f"and put it on PATH or set {variable} to its path"
        )
    found = _VERSION.search(stdout or "")
    if not found:
        return (
            f"{variable}: {binary!r} printed {stdout!r} as its version, not a Helm version; point it at a Helm 3 binary"
        )
    if found.group(1) != "3":
        return (
            f"{variable}: {binary!r} is Helm {found.group(0)}, but kubernetes.core 6.x needs Helm 3 "
            "(it runs `helm list --all`, which Helm 4 removed); install Helm 3 (v3.17 is tested) and set "
            f"{variable} to its path"
        )
    return None
