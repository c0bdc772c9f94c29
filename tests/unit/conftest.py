# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared pytest setup: import the collection by its FQCN and find recorded outputs."""

import os
import pathlib
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
# `make collection` links this checkout as ansible_collections/gpuops/cluster under .build/collections.
sys.path.insert(0, str(REPO_ROOT / ".build" / "collections"))

FIXTURES = REPO_ROOT / "tests" / "fixtures"


@pytest.fixture
def seed_fixture():
    """Read one of the project's own fixtures (recorded real outputs taken from the seeds)."""

    def read(relative_path):
        return (FIXTURES / relative_path).read_text(encoding="utf-8")

    return read


# Session-wide: fixtures of a module (a control plane's published objects) read it too.
@pytest.fixture(scope="session")
def published_nvsmi_dir():
    """Folder of published real nvidia-smi outputs, passed in by GPUOPS_NVSMI_FIXTURES."""
    folder = os.environ.get("GPUOPS_NVSMI_FIXTURES", "")
    if not folder or not pathlib.Path(folder).is_dir():
        pytest.skip("GPUOPS_NVSMI_FIXTURES is not set to a folder of recorded nvidia-smi outputs")
    return pathlib.Path(folder)


@pytest.fixture(scope="session")
def test_kubernetes():
    """The test bed's Kubernetes (kube-multi: etcd and the components) and containerd, built from Go modules
    once per machine and version (tests/testbed/build-kubernetes). Skips when they cannot be had here, or
    fails instead where GPUOPS_REQUIRE_TESTBED says every such test must run (CI)."""
    sys.path.insert(0, str(REPO_ROOT / "tests" / "testbed"))
    import binaries

    reason = binaries.missing_reason()
    if reason:
        binaries.skip_test(reason)
    try:
        return binaries.binaries()
    except binaries.BuildError as error:
        pytest.fail(str(error))
