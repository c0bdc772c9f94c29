# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A host the first read finds as wanted ends the role before checks.yml, so __nvidia_container_toolkit_converged
must not hold where that check would stop the role: NVIDIA's repository unreachable while
nvidia_container_toolkit_repo_required is true. Templated on the controller from the role's variables, with what a read
of a converged Debian host decides."""

import json
import pathlib

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

VARS = pathlib.Path(__file__).resolve().parents[4] / "roles" / "nvidia_container_toolkit" / "vars"
PLAYBOOK = [
    {
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"ansible.builtin.include_vars": str(VARS / "main.yml")},
            {"ansible.builtin.include_vars": str(VARS / "Debian.yml")},
            {
                "name": "What the first read decides on a Debian host with the toolkit at the pinned version",
                "ansible.builtin.set_fact": {
                    "__nvidia_container_toolkit_repo_todo": {"folder": False, "key": False, "source": False},
                    "__nvidia_container_toolkit_at_version": True,
                    "__nvidia_container_toolkit_repo_error": "http://127.0.0.1:9/libnvidia-container/stable: no answer",
                },
            },
            {"ansible.builtin.debug": {"msg": "converged={{ __nvidia_container_toolkit_converged }}"}},
        ],
    }
]


@pytest.mark.parametrize(
    ("reachable", "required", "converged"),
    [(True, True, True), (True, False, True), (False, False, True), (False, True, False)],
)
def test_an_unreachable_repository_that_is_required_is_not_as_wanted(tmp_path, reachable, required, converged):
    path = tmp_path / "playbook.yml"
    path.write_text(yaml.safe_dump(PLAYBOOK))
    extra = {
        "nvidia_container_toolkit_runtime": "none",
        "nvidia_container_toolkit_cdi_enabled": False,
        "nvidia_container_toolkit_repo_required": required,
        "__nvidia_container_toolkit_repo_reachable": reachable,
    }
    result = ansible_playbook(str(path), "localhost,", "-c", "local", "-e", json.dumps(extra))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert f"converged={converged}" in output
