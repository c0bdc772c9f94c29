# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan checks the host roles' variables against the roles' own argument specs."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils.role_variables import (
    HOST_ROLES,
    RoleVariableChecker,
    load_role_options,
)


@pytest.fixture(scope="module")
def checker():
    return RoleVariableChecker(load_role_options())


def test_every_host_role_spec_is_read():
    options = load_role_options()
    assert set(options) == set(HOST_ROLES)
    assert "nvidia_driver_branch" in options["nvidia_driver"]
    assert "mig_reboot" in options["mig"]


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("nvidia_container_toolkit_runtime", "rke2", None),
        (
            "nvidia_container_toolkit_runtime",
            "rke",
            "value of nvidia_container_toolkit_runtime must be one of: containerd, docker, rke2, none, got: rke",
        ),
        ("mig_reboot", "maybe", "must be true or false, got 'maybe'"),
        ("mig_reboot", "yes", None),
        ("mig_drain_timeout", "600", None),
        ("not_a_role_variable", object(), None),
    ],
)
def test_values_are_checked_as_the_role_would(checker, name, value, problem):
    assert checker.problem(name, value) == problem


def test_type_errors_name_the_variable(checker):
    assert checker.problem("mig_drain_timeout", "soon").startswith(
        "argument 'mig_drain_timeout' is of type str and we were unable to convert to int"
    )


@pytest.mark.parametrize("version", ["1.33.5-rke2r1", "v1.33.5-rke2r1", "v1.33.5", "1.33.5+rke2r1"])
def test_an_rke2_version_rke2_does_not_tag_is_refused_as_the_role_refuses_it(checker, version):
    # The rke2 role's rule (plugin_utils/rke2_cluster.py), not the argument spec's type alone.
    assert checker.problem("rke2_version", version) == (
        f"{version!r} is not an RKE2 release version; valid: vX.Y.Z+rke2rN as RKE2 tags its releases, "
        "e.g. v1.36.3+rke2r1"
    )
    assert checker.problem("rke2_version", "v1.33.5+rke2r1") is None
