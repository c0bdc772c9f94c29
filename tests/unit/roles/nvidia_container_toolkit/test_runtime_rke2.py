# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""runtime_rke2.yml restarts only RKE2's own running services, although the role's one read also holds the CDI
refresh units (read.yml)."""

import sys

import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook


def unit(running):
    return {"load_state": "loaded", "active_state": "active" if running else "inactive", "running": running}


def test_only_rke2_services_that_run_are_restarted(tmp_path):
    read = {
        "units": {
            "rke2-server.service": unit(False),
            "rke2-agent.service": unit(True),
            "nvidia-cdi-refresh.path": unit(True),
            "nvidia-cdi-refresh.service": unit(True),
        },
        "paths": {"/usr/bin/nvidia-container-runtime": {"exists": True}},
    }
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "Decide what RKE2 will find",
                    "ansible.builtin.include_role": {
                        "name": "gpuops.cluster.nvidia_container_toolkit",
                        "tasks_from": "runtime_rke2.yml",
                    },
                    "vars": {"__nvidia_container_toolkit_host": read},
                },
                {
                    "name": "Only RKE2's running agent is restarted",
                    "ansible.builtin.assert": {
                        "that": ["__nvidia_container_toolkit_rke2_running == ['rke2-agent.service']"],
                        "fail_msg": "{{ __nvidia_container_toolkit_rke2_running }}",
                    },
                },
            ],
        }
    ]
    path = tmp_path / "runtime_rke2.yml"
    path.write_text(yaml.safe_dump(playbook))
    result = ansible_playbook(str(path), "localhost,", "-e", f"ansible_python_interpreter={sys.executable}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
