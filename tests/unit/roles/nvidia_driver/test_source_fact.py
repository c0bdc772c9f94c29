# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""preflight.yml keeps every OS's package source as a fact before its read (its task "Decide the package source", run
here as the role has it), and the packages the read asks for come from that fact; the read then decides each kernel
module flavour's packages from it (gpuops.cluster.nvidia_driver_first_read). Templated on the controller for every OS
vars file and every source it offers."""

import json
import pathlib
import sys

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_driver import nvidia_driver_flavour_packages
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


def playbook(path, output):
    distribution, version, family = OS_FACTS[path.stem]
    sources = yaml.safe_load(path.read_text(encoding="utf-8"))["__nvidia_driver_sources"]
    tasks = [
        {"ansible.builtin.include_vars": str(ROLE / "vars" / "main.yml")},
        {"ansible.builtin.include_vars": str(path)},
    ]
    for source in sources:
        tasks += [
            {**decide_task(), "vars": {"nvidia_driver_source": source}},
            {
                "ansible.builtin.copy": {
                    "dest": str(output / f"{source}.json"),
                    "content": "{{ {'name': __nvidia_driver_source_name, 'source': __nvidia_driver_source,"
                    " 'read': __nvidia_driver_read_packages, 'queried': __nvidia_driver_read_queried} | to_json }}",
                    "mode": "0644",
                }
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
    play_vars = {
        **defaults,
        "ansible_facts": facts,
        "nvidia_driver_branch": "580",
        "ansible_python_interpreter": sys.executable,
    }
    return [{"hosts": "localhost", "gather_facts": False, "vars": play_vars, "tasks": tasks}]


@pytest.mark.parametrize("path", os_vars_files(), ids=lambda path: path.stem)
def test_every_source_is_kept_as_a_fact_and_the_read_asks_for_each_flavours_packages(tmp_path, path):
    assert path.stem in OS_FACTS, f"{path.name}: add the facts that choose it to OS_FACTS"
    playbook_path = tmp_path / "playbook.yml"
    playbook_path.write_text(yaml.safe_dump(playbook(path, tmp_path)))
    result = ansible_playbook(str(playbook_path), "localhost,", "-c", "local")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    for name in yaml.safe_load(path.read_text(encoding="utf-8"))["__nvidia_driver_sources"]:
        kept = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert kept["name"] == name
        by_flavour = {}
        for flavour in ("proprietary", "open"):
            chosen = nvidia_driver_flavour_packages(kept["source"], flavour, False)
            label = f"{path.stem} {name} {flavour}: {chosen}"
            assert set(chosen["flavour_packages"]) <= set(kept["read"]), label
            assert set(chosen["flavour_packages"]) <= set(kept["queried"]), label
            assert chosen["module_package"] in kept["read"], label
            by_flavour[flavour] = chosen["flavour_packages"]
        if path.stem.startswith("Ubuntu"):
            # Ubuntu's and NVIDIA's Ubuntu packages name the open modules' userspace after them.
            assert by_flavour["open"][0] == by_flavour["proprietary"][0] + "-open", f"{path.stem} {name}"
