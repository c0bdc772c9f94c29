# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_gpu and _host run on managed hosts, copied alone: they import neither the plan nor Ansible.

_validation runs on the controller, but as the module's own logic: it needs the GPU knowledge and the
memory-sharing backends only.

_sharing (the memory-sharing backends) is imported by the plan, the validation and the role's plugins: it
imports only the GPU knowledge, never the plan or Ansible.
"""

import ast
import pathlib

import pytest

MODULE_UTILS = pathlib.Path(__file__).resolve().parents[4] / "plugins" / "module_utils"
OWN = "ansible_collections.gpuops.cluster.plugins.module_utils."
# What each of these packages may import from the collection (Ansible never): itself and the packages named.
ALLOWED = {
    "_gpu": ("_gpu",),
    "_host": ("_gpu", "_host"),
    "_sharing": ("_gpu", "_sharing"),
    "_validation": ("_gpu", "_sharing", "_validation"),
}


def imported_modules(path):
    """Every module name a file imports, relative imports resolved against its package."""
    package = f"{OWN}{path.parent.name}"
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names if not node.module]
    return names


def forbidden(name, package):
    if name == "ansible" or name.startswith("ansible.") or name == "ansible_collections":
        return True
    if name.startswith("ansible_collections."):
        own = name.startswith(OWN) and name[len(OWN) :].split(".")[0] in ALLOWED[package]
        return not own
    return False


@pytest.mark.parametrize(
    "path",
    sorted(path for package in ALLOWED for path in (MODULE_UTILS / package).glob("*.py")),
    ids=lambda path: f"{path.parent.name}/{path.name}",
)
def test_host_side_packages_import_no_plan_and_no_ansible(path):
    bad = [name for name in imported_modules(path) if forbidden(name, path.parent.name)]
    assert bad == [], f"{path.parent.name}/{path.name} imports {bad}"


def test_the_check_sees_a_forbidden_import(tmp_path):
    package = tmp_path / "_gpu"
    package.mkdir()
    sample = package / "sample.py"
    sample.write_text(
        "from ansible.module_utils.basic import AnsibleModule\n"
        f"from {OWN}_plan.cluster import plan_cluster\n"
        f"from {OWN}_host import state\n"
        "from .._plan import documents\n"
        f"from {OWN}_gpu.catalog import find_product\n",
        encoding="utf-8",
    )
    assert [name for name in imported_modules(sample) if forbidden(name, "_gpu")] == [
        "ansible.module_utils.basic",
        f"{OWN}_plan.cluster",
        f"{OWN}_host",
        f"{OWN}_plan",
    ]


def test_only_the_packages_stand_at_the_top_of_module_utils():
    assert sorted(path.name for path in MODULE_UTILS.iterdir() if path.name != "__pycache__") == [
        "_gpu",
        "_host",
        "_sharing",
        "_validation",
    ]
