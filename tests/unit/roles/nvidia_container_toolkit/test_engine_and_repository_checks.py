# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The toolkit's first read answers whether the runtime's engine is installed and whether NVIDIA's repository
answers; checks.yml then stops, before any change, on the first problem (run on the controller, a local connection,
with a closed port of the controller for the repository)."""

import json
import sys

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

ROLE = "gpuops.cluster.nvidia_container_toolkit"
PLAYBOOK = [
    {
        "hosts": "localhost",
        "gather_facts": False,
        "vars": {
            "nvidia_container_toolkit_runtime": "containerd",
            "nvidia_container_toolkit_repo_url": "http://127.0.0.1:9/libnvidia-container/stable",
        },
        "tasks": [
            {"ansible.builtin.include_role": {"name": ROLE, "tasks_from": "preflight.yml"}},
            {"ansible.builtin.include_role": {"name": ROLE, "tasks_from": "repository.yml"}},
            {"ansible.builtin.include_role": {"name": ROLE, "tasks_from": "checks.yml"}},
        ],
    }
]


def run(tmp_path, engine, required):
    path = tmp_path / "playbook.yml"
    path.write_text(yaml.safe_dump(PLAYBOOK))
    extra = {
        "ansible_python_interpreter": sys.executable,
        "__nvidia_container_toolkit_engine_command": engine,
        "nvidia_container_toolkit_repo_required": required,
    }
    result = ansible_playbook(str(path), "localhost,", "-c", "local", "-e", json.dumps(extra))
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def test_a_missing_engine_stops_the_role_naming_it(tmp_path):
    rc, output = run(tmp_path, ["gpuops-no-such-engine", "--version"], required=False)
    assert rc != 0
    wanted = "localhost: nvidia_container_toolkit_runtime is containerd but gpuops-no-such-engine is not installed"
    assert wanted in output


@pytest.mark.parametrize(("required", "fails"), [(True, True), (False, False)])
def test_an_unreachable_repository_stops_the_role_only_where_required(tmp_path, required, fails):
    rc, output = run(tmp_path, [sys.executable, "--version"], required=required)
    assert (rc != 0) == fails, output[-3000:]
    assert ("NVIDIA repository unreachable (http://127.0.0.1:9/" in output) == fails
