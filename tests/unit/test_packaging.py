# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection as it is packaged: one minimum ansible-core, a README per role, the license.

The minimum ansible-core version is said in three places that Galaxy and users read:
meta/runtime.yml (`requires_ansible`), every role's meta/main.yml (`min_ansible_version`) and the
READMEs ("ansible-core X.Y or newer"). They must agree.
"""

import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLES = sorted(path for path in (REPO / "roles").iterdir() if path.is_dir())
README_MINIMUM = re.compile(r"ansible-core (\d+\.\d+)(?:\.\d+)? or newer")


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def minimum_from_runtime():
    requires = load(REPO / "meta" / "runtime.yml")["requires_ansible"]
    match = re.fullmatch(r">=(\d+)\.(\d+)\.(\d+)", requires)
    assert match, f"meta/runtime.yml: requires_ansible {requires!r} is not a single '>=X.Y.Z' minimum"
    major, minor, patch = match.groups()
    assert patch == "0", f"meta/runtime.yml: requires_ansible {requires!r} should name a minor release, X.Y.0"
    return f"{major}.{minor}"


def test_there_are_roles():
    assert [role.name for role in ROLES], "no role found under roles/"


@pytest.mark.parametrize("role", ROLES, ids=lambda role: role.name)
def test_role_meta_names_the_same_minimum_as_runtime(role):
    galaxy_info = load(role / "meta" / "main.yml")["galaxy_info"]
    assert str(galaxy_info["min_ansible_version"]) == minimum_from_runtime(), (
        f"roles/{role.name}/meta/main.yml: min_ansible_version {galaxy_info['min_ansible_version']!r}, "
        f"meta/runtime.yml requires ansible-core {minimum_from_runtime()}"
    )
    assert galaxy_info["license"] == "GPL-3.0-or-later"


@pytest.mark.parametrize(
    "readme",
    [REPO / "README.md"] + [role / "README.md" for role in ROLES],
    ids=lambda path: str(path.relative_to(REPO)),
)
def test_readme_names_the_same_minimum_as_runtime(readme):
    assert readme.is_file(), f"{readme.relative_to(REPO)} is missing (galaxy-importer: 'No role readme found')"
    said = README_MINIMUM.findall(readme.read_text(encoding="utf-8"))
    assert said, f"{readme.relative_to(REPO)} does not say 'ansible-core X.Y or newer'"
    assert set(said) == {minimum_from_runtime()}, (
        f"{readme.relative_to(REPO)} says ansible-core {sorted(set(said))} or newer, "
        f"meta/runtime.yml requires {minimum_from_runtime()}"
    )


@pytest.mark.parametrize("role", ROLES, ids=lambda role: role.name)
def test_role_has_argument_specs(role):
    specs = role / "meta" / "argument_specs.yml"
    assert specs.is_file(), f"roles/{role.name}/meta/argument_specs.yml is missing"
    entry_points = set(load(specs)["argument_specs"])
    if role.name.startswith("_"):
        # A private role is only included with tasks_from: each of its task files is an entry point.
        assert entry_points == {path.stem for path in (role / "tasks").glob("*.yml")}
    else:
        assert "main" in entry_points


def test_license_is_the_gpl_3_text_galaxy_yml_names():
    assert load(REPO / "galaxy.yml")["license"] == ["GPL-3.0-or-later"]
    copying = REPO / "COPYING"
    assert copying.is_file(), "COPYING is missing; modules point at it"
    head = copying.read_text(encoding="utf-8").split("\n", 2)[:2]
    assert [line.strip() for line in head] == ["GNU GENERAL PUBLIC LICENSE", "Version 3, 29 June 2007"]


def test_build_ignore_leaves_out_development_files():
    ignored = set(load(REPO / "galaxy.yml")["build_ignore"])
    for path in ("Makefile", "molecule", "tests/testbed", "ruff.toml", "requirements-test.txt", "ansible.cfg"):
        assert path in ignored, f"galaxy.yml: build_ignore does not leave out {path}"
    for path in ("tests/unit", "tests/sanity", "tests/doubles", "tests/fixtures"):
        assert path not in ignored, f"galaxy.yml: build_ignore leaves out {path}, which ansible-test needs"


CODE_FOLDERS = ("plugins", "roles", "playbooks", "molecule", "tests")
# ansible-test writes its results and virtualenvs there.
NOT_SOURCE = ("tests/output",)


def _code_files():
    """Python and shell files of the collection (empty package markers aside)."""
    for folder in CODE_FOLDERS:
        for path in sorted((REPO / folder).rglob("*")):
            relative = path.relative_to(REPO)
            if str(relative).startswith(NOT_SOURCE) or "__pycache__" in relative.parts or not path.is_file():
                continue
            first = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
            script = first.startswith("#!") and ("python" in first or first.endswith("sh"))
            if (path.suffix in (".py", ".sh") or script) and path.stat().st_size:
                yield relative


def test_every_code_file_carries_the_spdx_license_line():
    files = list(_code_files())
    missing = [
        str(relative)
        for relative in files
        if "# SPDX-License-Identifier: GPL-3.0-or-later" not in (REPO / relative).read_text(encoding="utf-8")
    ]
    assert len(files) > 50 and missing == []
