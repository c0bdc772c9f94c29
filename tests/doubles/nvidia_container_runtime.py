# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for NVIDIA's nvidia-container-runtime in molecule scenarios, where the real one cannot be installed.

The real runtime is a shim over runc that adds the NVIDIA hook or CDI devices to the OCI spec; with
no GPU there is nothing to add, so this one logs each invocation to CALL_LOG (so a scenario can
prove that a pod with runtimeClassName nvidia ran through it) and execs runc with the same arguments.
"""

import os
import shutil
import sys
import time
from pathlib import Path

CALL_LOG = Path("/var/log/nvidia-container-runtime-stand-in.log")


def main(arguments: list[str]) -> None:
    with CALL_LOG.open("a") as log:
        log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} nvidia-container-runtime {' '.join(arguments)}\n")
    runc = shutil.which("runc") or "/usr/sbin/runc"
    os.execv(runc, [runc, *arguments])


if __name__ == "__main__":
    main(sys.argv[1:])
