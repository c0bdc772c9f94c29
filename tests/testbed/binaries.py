# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test bed's Kubernetes and containerd binaries, built by tests/testbed/build-kubernetes.

`binaries()` builds them when the cache lacks them (minutes, once per machine and version) and
returns their paths; `missing_reason()` says why they cannot be had here (no Go), for tests that skip
then, unless GPUOPS_REQUIRE_TESTBED is set (CI), where they must fail instead.
"""

import os
import shutil
import subprocess
from pathlib import Path

BUILD = Path(__file__).resolve().parent / "build-kubernetes"
REPO_ROOT = BUILD.parents[2]
# What build-kubernetes installs from containerd's module into CONTAINERD_BIN.
CONTAINERD_TOOLS = ("containerd", "containerd-shim-runc-v2", "ctr")


class BuildError(RuntimeError):
    pass


def missing_reason() -> str | None:
    if not shutil.which("go"):
        return "Go is not installed: the test bed builds its Kubernetes (kube-multi) and containerd with it"
    if not (REPO_ROOT / ".venv/bin/python").exists():
        return f"{REPO_ROOT} has no .venv (`make unit` makes it): the test bed's versions are read with its PyYAML"
    return None


def required() -> bool:
    """CI sets GPUOPS_REQUIRE_TESTBED: a test that needs the test bed's Kubernetes fails instead of skipping."""
    return os.environ.get("GPUOPS_REQUIRE_TESTBED", "") not in ("", "0")


def skip_test(reason: str) -> None:
    """Skips the calling pytest test for REASON, or fails it where required() says that every test must run."""
    import pytest  # only tests call this; the harness imports this module outside pytest

    if required():
        pytest.fail(f"GPUOPS_REQUIRE_TESTBED is set and this test would skip: {reason}")
    pytest.skip(reason)


def binaries() -> dict[str, Path]:
    """{"KUBE_MULTI": kube-multi, "CONTAINERD_BIN": folder of containerd, containerd-shim-runc-v2, ctr}."""
    result = subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"{BUILD} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
    found = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    return {name: Path(value) for name, value in found.items()}


def kube_multi() -> Path:
    return binaries()["KUBE_MULTI"]
