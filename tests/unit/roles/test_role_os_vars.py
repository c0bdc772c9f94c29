# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role loads its OS variables the same way, and every OS vars file defines what the shared flow reads.

A role with OS vars files loads them in preflight with include_vars + first_found over
distribution_version, major version, distribution, OS family with major version, OS family, and
vars/default.yml, which marks the OS as unsupported so that preflight stops saying which OSes are.
Every other file of vars/ but main.yml is one OS's variables and must define every key the role lists
in vars/main.yml as `__<role>_os_vars_required`. Only Debian hosts run in the test bed, so this is what
proves the Ubuntu and EL files complete and the right file chosen for each OS.
"""

import pathlib
import re

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[3] / "roles"
OS_ROLES = sorted(path for path in ROLES.iterdir() if (path / "vars" / "default.yml").is_file())
CANDIDATES = [
    "{{ ansible_facts['distribution'] }}_{{ ansible_facts['distribution_version'] }}.yml",
    "{{ ansible_facts['distribution'] }}_{{ ansible_facts['distribution_major_version'] }}.yml",
    "{{ ansible_facts['distribution'] }}.yml",
    "{{ ansible_facts['os_family'] }}_{{ ansible_facts['distribution_major_version'] }}.yml",
    "{{ ansible_facts['os_family'] }}.yml",
    "default.yml",
]
# (distribution, distribution_version, os_family) -> the file each role loads.
CHOICES = {
    ("Debian", "12.7", "Debian"): {"nvidia_driver": "Debian_12.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("Ubuntu", "22.04", "Debian"): {"nvidia_driver": "Ubuntu_22.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("Ubuntu", "24.04", "Debian"): {"nvidia_driver": "Ubuntu_24.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("Debian", "13.2", "Debian"): {"nvidia_driver": "Debian_13.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("Ubuntu", "26.04", "Debian"): {"nvidia_driver": "Ubuntu_26.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("RedHat", "9.4", "RedHat"): {"nvidia_driver": "RedHat_9.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("Rocky", "9.5", "RedHat"): {"nvidia_driver": "RedHat_9.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("AlmaLinux", "9.5", "RedHat"): {"nvidia_driver": "RedHat_9.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("Debian", "11.11", "Debian"): {"nvidia_driver": "default.yml", "nvidia_container_toolkit": "Debian.yml"},
    ("Rocky", "10.1", "RedHat"): {"nvidia_driver": "RedHat_10.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("RedHat", "10.0", "RedHat"): {"nvidia_driver": "RedHat_10.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("Rocky", "8.10", "RedHat"): {"nvidia_driver": "default.yml", "nvidia_container_toolkit": "RedHat.yml"},
    ("Archlinux", "", "Archlinux"): {"nvidia_driver": "default.yml", "nvidia_container_toolkit": "default.yml"},
}


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def os_vars_files():
    for role in OS_ROLES:
        for path in sorted((role / "vars").glob("*.yml")):
            if path.name not in ("main.yml", "default.yml"):
                yield pytest.param(role, path, id=f"{role.name}/{path.name}")


def required_keys(role):
    key = f"__{role.name}_os_vars_required"
    required = load(role / "vars" / "main.yml").get(key)
    assert required, f"{role.name} has OS vars files: list the keys each must define in vars/main.yml as {key}"
    return required


def os_vars_candidates(role):
    """The first_found file list of the task in preflight.yml that loads the OS variables."""
    for task in load(role / "tasks" / "preflight.yml"):
        if "ansible.builtin.include_vars" in task and "first_found" in str(task["ansible.builtin.include_vars"]):
            lists = [value["files"] for value in task.get("vars", {}).values() if isinstance(value, dict)]
            assert len(lists) == 1, f"{role.name}: one first_found file list expected in {task['name']!r}"
            return lists[0]
    raise AssertionError(f"{role.name}/tasks/preflight.yml loads no OS variables with include_vars + first_found")


def chosen_file(role, distribution, version, os_family):
    facts = {
        "distribution": distribution,
        "distribution_version": version,
        "distribution_major_version": version.split(".")[0],
        "os_family": os_family,
    }
    for candidate in os_vars_candidates(role):
        name = re.sub(r"\{\{ ansible_facts\['(\w+)'\] \}\}", lambda match: facts[match.group(1)], candidate)
        if (role / "vars" / name).is_file():
            return name
    return None


def test_roles_with_os_vars_are_found():
    assert [role.name for role in OS_ROLES] == ["nvidia_container_toolkit", "nvidia_driver"]


@pytest.mark.parametrize("role", OS_ROLES, ids=lambda role: role.name)
def test_role_loads_os_vars_from_the_same_candidates(role):
    assert os_vars_candidates(role) == CANDIDATES


@pytest.mark.parametrize("role", OS_ROLES, ids=lambda role: role.name)
def test_default_marks_the_os_unsupported_and_names_the_supported_ones(role):
    assert load(role / "vars" / "default.yml") == {f"__{role.name}_os_supported": False}
    main = load(role / "vars" / "main.yml")
    assert main[f"__{role.name}_os_supported"] is True
    assert main[f"__{role.name}_os_supported_list"]


@pytest.mark.parametrize(
    ("facts", "expected"), [pytest.param(facts, expected, id=" ".join(facts)) for facts, expected in CHOICES.items()]
)
def test_each_os_gets_its_file(facts, expected):
    chosen = {role.name: chosen_file(role, *facts) for role in OS_ROLES}
    assert chosen == expected


@pytest.mark.parametrize(("role", "path"), list(os_vars_files()))
def test_os_vars_file_defines_every_key_the_flow_needs(role, path):
    missing = [key for key in required_keys(role) if key not in load(path)]
    assert not missing, f"{role.name}/vars/{path.name} lacks {missing}"
