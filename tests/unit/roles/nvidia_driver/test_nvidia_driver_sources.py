# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every package source of every nvidia_driver OS vars file defines what the shared task flow reads."""

import pathlib
import re

import pytest
import yaml

VARS = pathlib.Path(__file__).resolve().parents[4] / "roles" / "nvidia_driver" / "vars"


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def resolve(value):
    """A source an OS file names by reference ("{{ __nvidia_driver_debian_archive_source }}") is defined in main.yml."""
    reference = re.fullmatch(r"\{\{ (__nvidia_driver_\w+) \}\}", value) if isinstance(value, str) else None
    return load(VARS / "main.yml")[reference.group(1)] if reference else value


def os_vars_files():
    return [path for path in sorted(VARS.glob("*.yml")) if path.name not in ("main.yml", "default.yml")]


def nvidia_driver_sources():
    for path in os_vars_files():
        for name, source in load(path)["__nvidia_driver_sources"].items():
            yield pytest.param(path, name, resolve(source), id=f"{path.stem}/{name}")


@pytest.mark.parametrize(("path", "name", "source"), list(nvidia_driver_sources()))
def test_nvidia_driver_source_defines_what_the_flow_reads(path, name, source):
    required = load(VARS / "main.yml")["__nvidia_driver_source_keys_required"]
    missing = [key for key in required if key not in source]
    assert not missing, f"{path.name} source {name} lacks {missing}"
    assert set(source["module_packages"]) == {"open", "proprietary"}
    assert set(source["signed_module_packages"]) in (set(), {"open", "proprietary"})
    assert set(source["signed_module_meta_packages"]) == set(source["signed_module_packages"])


@pytest.mark.parametrize("path", os_vars_files(), ids=lambda path: path.stem)
def test_nvidia_driver_default_source_exists(path):
    assert load(path)["__nvidia_driver_default_source"] in load(path)["__nvidia_driver_sources"]


@pytest.mark.parametrize("path", os_vars_files(), ids=lambda path: path.stem)
def test_what_a_shared_source_leaves_to_the_os_file_is_set_there(path):
    os_vars = load(path)
    for source in os_vars["__nvidia_driver_sources"].values():
        text = str(resolve(source))
        for name in set(re.findall(r"(__nvidia_driver_(?:debian|ubuntu)_\w+|__nvidia_driver_nvidia_repo_dir)", text)):
            assert name in os_vars, f"{path.name} uses a source that reads {name}, which it does not set"


@pytest.mark.parametrize(("path", "name", "source"), list(nvidia_driver_sources()))
def test_no_package_of_a_source_is_named_after_the_flavour(path, name, source):
    """preflight.yml keeps the source as a fact before the read decides the flavour: a name templated on the flavour
    would fail there. A source whose open modules come with other package names lists those as open_packages."""
    assert "__nvidia_driver_flavour" not in str(source), f"{path.name} source {name}"
    if "open_packages" in source:
        assert len(source["open_packages"]) == len(source["packages"]), f"{path.name} source {name}"
        assert source["open_packages"] != source["packages"], f"{path.name} source {name}: open_packages as packages"
