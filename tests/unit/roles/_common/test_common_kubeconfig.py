# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Kubernetes roles' kubeconfig check, shared through the private _common role.

Without a kubeconfig, check mode (a new site) says what it cannot preview and ends that role only: the play goes
on. A real run fails naming the role's variable. The default path, .gpuops-kubeconfig next to the inventory,
comes from _common, a dependency of each role.
"""

import importlib.util
import pathlib
import sys

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and the Kubernetes roles need it",
)

REPO = pathlib.Path(__file__).resolve().parents[4]
# gpu_operator checks Helm before the kubeconfig; the test bed's Helm 3, when it is there.
HELM = REPO / ".cache" / "helm" / "v3.17.2" / "helm"
AFTER = "the play goes on after the role"
LOCALHOST = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
ROLES = [
    "gpu_sharing",
    "gpu_memory_sharing",
    "gpu_validation",
    pytest.param("gpu_operator", marks=pytest.mark.skipif(not HELM.is_file(), reason=f"no Helm 3 at {HELM}")),
]


def _run(tmp_path, role, *options):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {"localhost": LOCALHOST},
                    "vars": {"gpu_operator_helm_binary": str(HELM)},
                }
            }
        )
    )
    playbook = tmp_path / "play.yml"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "Run one Kubernetes role without a kubeconfig",
                    "hosts": "localhost",
                    "gather_facts": False,
                    "roles": [{"role": f"gpuops.cluster.{role}"}],
                    "post_tasks": [{"name": "Go on after the role", "ansible.builtin.debug": {"msg": AFTER}}],
                }
            ],
            sort_keys=False,
        )
    )
    result = ansible_playbook(str(playbook), inventory, *options, cwd=tmp_path)
    return result, " ".join((result.stdout + result.stderr).split())


@pytest.mark.parametrize("role", ROLES)
def test_check_mode_without_a_kubeconfig_ends_the_role_only(tmp_path, role):
    result, output = _run(tmp_path, role, "--check")
    assert result.returncode == 0, output
    assert f"Check mode: {tmp_path / '.gpuops-kubeconfig'} does not exist yet" in output
    assert "previewed against a cluster" in output
    # No task of the role runs after its end_role; the play's next task does.
    after_end = output.split(f"TASK [gpuops.cluster.{role} : End the role in check mode before the cluster exists]")[1]
    assert after_end.split("TASK [")[1].startswith("Go on after the role]"), after_end
    assert AFTER in output


@pytest.mark.parametrize("role", ROLES)
def test_a_real_run_without_a_kubeconfig_fails_naming_the_roles_variable(tmp_path, role):
    result, output = _run(tmp_path, role)
    assert result.returncode != 0, output
    assert f"{role}_kubeconfig: {tmp_path / '.gpuops-kubeconfig'} does not exist on the controller" in output
    assert AFTER not in output
