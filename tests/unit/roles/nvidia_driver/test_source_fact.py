# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""preflight.yml keeps every OS's package source as a fact before its read (its task "Decide the package source", run
here as the role has it), and the packages the read asks for and those of each kernel module flavour come from that
fact: templated on the controller for every OS vars file and every source it offers."""

import pathlib

import pytest
import yaml
from ansible_collections.gpuops.cluster.tests.unit.playbooks.conftest import ansible_playbook

ROLE = pathlib.Path(__file__).resolve().parents[4] / "roles" / "nvidia_driver"
DECIDE = "Decide the package source"
# The facts an OS vars file is chosen by (preflight.yml), for each file.
OS_FACTS = {
    "Debian_12": ("Debian", "12", "Debian"),
    "Debian_13": ("Debian", "13", "Debian"),
    "Ubuntu_22": ("Ubuntu", "22.04", "Debian"),
    "Ubuntu_24": ("Ubuntu", "24.04", "Debian"),
    "Ubuntu_26": ("Ubuntu", "26.04", "Debian"),
    "RedHat_9": ("RedHat", "9.6", "RedHat"),
    "RedHat_10": ("RedHat", "10.0", "RedHat"),
}


def os_vars_files():
    return [path for path in sorted((ROLE / "vars").glob("*.yml")) if path.name not in ("main.yml", "default.yml")]


def decide_task():
    tasks = yaml.safe_load((ROLE / "tasks" / "preflight.yml").read_text(encoding="utf-8"))
    return next(task for task in tasks if task["name"] == DECIDE)


def playbook(path):
    distribution, version, family = OS_FACTS[path.stem]
    sources = yaml.safe_load(path.read_text(encoding="utf-8"))["__nvidia_driver_sources"]
    # Ubuntu's and NVIDIA's Ubuntu packages name the open modules' userspace after them.
    open_named = path.stem.startswith("Ubuntu")
    tasks = [
        {"ansible.builtin.include_vars": str(ROLE / "vars" / "main.yml")},
        {"ansible.builtin.include_vars": str(path)},
    ]
    for source in sources:
        for flavour in ("proprietary", "open"):
            label = f"{path.stem} {source} {flavour}"
            tasks += [
                {**decide_task(), "vars": {"nvidia_driver_source": source}},
                {"ansible.builtin.set_fact": {"__nvidia_driver_flavour": flavour}},
                {
                    "name": f"Check {label}",
                    "ansible.builtin.assert": {
                        "that": [
                            f"__nvidia_driver_source_name == '{source}'",
                            "__nvidia_driver_flavour_packages | difference(__nvidia_driver_read_packages) == []",
                            "__nvidia_driver_flavour_packages | difference(__nvidia_driver_read_queried) == []",
                            f"(__nvidia_driver_flavour_packages[0] is search('-open$')) == {open_named and flavour == 'open'}",
                        ],
                        "fail_msg": f"{label}: {{{{ __nvidia_driver_flavour_packages }}}} (read: {{{{ __nvidia_driver_read_packages }}}})",
                    },
                },
            ]
    facts = {
        "distribution": distribution,
        "distribution_version": version,
        "distribution_major_version": version.split(".")[0],
        "os_family": family,
        "kernel": "6.8.0-40-generic",
        "architecture": "x86_64",
    }
    # The role's defaults as play variables, below the source each task names.
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text(encoding="utf-8"))
    play_vars = {**defaults, "ansible_facts": facts, "nvidia_driver_branch": "580"}
    return [{"hosts": "localhost", "gather_facts": False, "vars": play_vars, "tasks": tasks}]


@pytest.mark.parametrize("path", os_vars_files(), ids=lambda path: path.stem)
def test_every_source_is_kept_as_a_fact_and_names_each_flavours_packages(tmp_path, path):
    assert path.stem in OS_FACTS, f"{path.name}: add the facts that choose it to OS_FACTS"
    playbook_path = tmp_path / "playbook.yml"
    playbook_path.write_text(yaml.safe_dump(playbook(path)))
    result = ansible_playbook(str(playbook_path), "localhost,", "-c", "local")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    sources = yaml.safe_load(path.read_text(encoding="utf-8"))["__nvidia_driver_sources"]
    for source in sources:
        for flavour in ("proprietary", "open"):
            assert f"Check {path.stem} {source} {flavour}" in output
