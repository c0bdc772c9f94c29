# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the execution environment's job tests need: a container runtime that works, the image `make ee` built and
ansible-runner. Each is skipped for, saying why, where it is missing, or fails instead where GPUOPS_REQUIRE_TESTBED
says that every test-bed test must run (CI)."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTBED = REPO_ROOT / "tests" / "testbed"
sys.path.insert(0, str(TESTBED))
import binaries  # noqa: E402  (the test bed's rule: GPUOPS_REQUIRE_TESTBED turns a skip into a failure)


def runtime_works(runtime):
    if shutil.which(runtime) is None:
        return False
    result = subprocess.run([runtime, "info"], capture_output=True, check=False, timeout=120)
    return result.returncode == 0


@pytest.fixture(scope="session")
def ee_runtime():
    """podman or docker, as tests/testbed/ee-runtime picks it (GPUOPS_EE_RUNTIME), without installing either."""
    # The test bed's podman needs its containers.conf (runc, cgroupfs, rlimits this machine allows).
    os.environ.setdefault("CONTAINERS_CONF", str(TESTBED / "containers.conf"))
    wanted = os.environ.get("GPUOPS_EE_RUNTIME", "")
    tried = [wanted] if wanted else ["podman", "docker"]
    for runtime in tried:
        if runtime_works(runtime):
            return runtime
    binaries.skip_test("no container runtime works here: " + ", ".join(f"`{runtime} info` fails" for runtime in tried))


@pytest.fixture(scope="session")
def hosts_runtime(ee_runtime):
    """The runtime of the test bed's SSH hosts: podman only (tests/testbed/build-image imports with podman)."""
    if ee_runtime != "podman":
        binaries.skip_test(f"the test bed's hosts are podman containers, and the runtime here is {ee_runtime}")
    return ee_runtime


@pytest.fixture(scope="session")
def ee_image(ee_runtime):
    """The image `make ee` built: GPUOPS_EE_IMAGE, or localhost/gpuops-ee:VERSION of galaxy.yml."""
    version = yaml.safe_load((REPO_ROOT / "galaxy.yml").read_text(encoding="utf-8"))["version"]
    image = os.environ.get("GPUOPS_EE_IMAGE") or f"localhost/gpuops-ee:{version}"
    found = subprocess.run([ee_runtime, "image", "inspect", image], capture_output=True, check=False)
    if found.returncode != 0:
        binaries.skip_test(f"{ee_runtime} has no image {image}: `make ee` builds it")
    return image


@pytest.fixture(scope="session")
def ansible_runner_module():
    try:
        import ansible_runner
    except ImportError:
        binaries.skip_test("ansible-runner is not installed (requirements-test.txt pins it)")
    return ansible_runner
