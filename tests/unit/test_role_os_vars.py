"""Every OS vars file of every role defines the keys its shared task flow reads.

Every file in a role's vars/ other than main.yml is one OS's variables (loaded by include_vars +
first_found) and must define every key the role lists in vars/main.yml as
`__<role>_os_vars_required` (keys one package manager alone uses may come on top). Only Debian hosts
run in the test bed, so this is what proves the Ubuntu and EL files complete.
"""

import pathlib

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[2] / "roles"


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def os_vars_files():
    for role in sorted(path for path in ROLES.iterdir() if (path / "vars").is_dir()):
        for path in sorted((role / "vars").glob("*.yml")):
            if path.name != "main.yml":
                yield pytest.param(role, path, id=f"{role.name}/{path.name}")


def required_keys(role):
    key = f"__{role.name}_os_vars_required"
    main = role / "vars" / "main.yml"
    required = load(main).get(key) if main.exists() else None
    assert required, f"{role.name} has OS vars files: list the keys each must define in vars/main.yml as {key}"
    return required


@pytest.mark.parametrize(("role", "path"), list(os_vars_files()))
def test_os_vars_file_defines_every_key_the_flow_needs(role, path):
    missing = [key for key in required_keys(role) if key not in load(path)]
    assert not missing, f"{role.name}/vars/{path.name} lacks {missing}"


def nvidia_driver_sources():
    role = ROLES / "nvidia_driver"
    for path in sorted((role / "vars").glob("*.yml")):
        if path.name != "main.yml":
            for name, source in load(path)["__nvidia_driver_sources"].items():
                yield pytest.param(path, name, source, id=f"{path.stem}/{name}")


@pytest.mark.parametrize(("path", "name", "source"), list(nvidia_driver_sources()))
def test_nvidia_driver_source_defines_what_the_flow_reads(path, name, source):
    required = load(ROLES / "nvidia_driver" / "vars" / "main.yml")["__nvidia_driver_source_keys_required"]
    missing = [key for key in required if key not in source]
    assert not missing, f"{path.name} source {name} lacks {missing}"
    assert set(source["module_packages"]) == {"open", "proprietary"}
    assert set(source["signed_module_packages"]) in (set(), {"open", "proprietary"})
    assert set(source["signed_module_meta_packages"]) == set(source["signed_module_packages"])


@pytest.mark.parametrize(("path", "name", "source"), list(nvidia_driver_sources()))
def test_nvidia_driver_default_source_exists(path, name, source):
    assert load(path)["__nvidia_driver_default_source"] in load(path)["__nvidia_driver_sources"]
