# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""checks.yml's checks of the inputs and of the GPUs found run in host_checks.yml, which is skipped as one task where
none finds a problem: run on the controller (a local connection; a Debian controller, as the test bed's), whose read
finds no NVSwitch and whose Debian archive source has no Fabric Manager package and no signed precompiled modules.
preflight.yml's read and decisions come before those checks: a problem they report must not break a decision first."""

import json
import pathlib
import platform
import sys

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

VARS = pathlib.Path(__file__).resolve().parents[4] / "roles" / "nvidia_driver" / "vars"
try:
    OS = platform.freedesktop_os_release()
except OSError:
    OS = {}
OS_VARS = VARS / f"Debian_{OS.get('VERSION_ID', '').split('.')[0]}.yml"

pytestmark = pytest.mark.skipif(
    OS.get("ID") != "debian" or not OS_VARS.is_file(), reason="the controller is not a Debian the role supports"
)

PLAYBOOK = [
    {
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"ansible.builtin.include_role": {"name": "gpuops.cluster.nvidia_driver", "tasks_from": "preflight.yml"}},
            {"ansible.builtin.include_role": {"name": "gpuops.cluster.nvidia_driver", "tasks_from": "checks.yml"}},
        ],
    }
]


def run(tmp_path, fabric_manager, **more):
    path = tmp_path / "playbook.yml"
    path.write_text(yaml.safe_dump(PLAYBOOK))
    extra = {
        "ansible_python_interpreter": sys.executable,
        "nvidia_driver_source": "distribution",
        # The branch Debian's archive packages on this release (535 on Debian 12).
        "nvidia_driver_branch": yaml.safe_load(OS_VARS.read_text())["__nvidia_driver_debian_branches"][0],
        "nvidia_driver_fabric_manager": fabric_manager,
        **more,
    }
    result = ansible_playbook(str(path), "localhost,", "-c", "local", "-e", json.dumps(extra))
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def test_fabric_manager_asked_for_where_the_source_has_none_stops_the_role(tmp_path):
    rc, output = run(tmp_path, "always")
    assert rc != 0
    assert "localhost: 0 NVSwitch(es) found (or nvidia_driver_fabric_manager: always), but" in output
    assert "has no Fabric Manager package" in output


def test_without_a_problem_the_checks_are_skipped_as_one_task(tmp_path):
    rc, output = run(tmp_path, "never")
    assert rc == 0, output[-3000:]
    assert "skipping: [localhost]" in output
    assert "Check the inputs, and the kernel module flavour, the signed modules and Fabric Manager" not in output


def test_signed_modules_asked_of_a_source_without_them_stop_the_role_after_the_decisions(tmp_path):
    rc, output = run(tmp_path, "never", nvidia_driver_signed_precompiled_modules=True)
    assert rc != 0
    assert "localhost: nvidia_driver_signed_precompiled_modules is true, but Debian's archive" in output
    assert "ok: [localhost] => (item=proprietary modules, driver " in output
    assert "ok: [localhost] => (item=not as wanted)" in output


def test_a_bad_branch_skips_the_read_and_stops_the_role_naming_it(tmp_path):
    rc, output = run(tmp_path, "never", nvidia_driver_branch="53")
    assert rc != 0
    assert "localhost: nvidia_driver_branch '53' / nvidia_driver_version '' cannot be installed from" in output
    assert "modules, driver " not in output
