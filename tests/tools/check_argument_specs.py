"""Fail when a role's meta/argument_specs.yml `main` options differ from the keys of its defaults/main.yml."""

import pathlib
import sys

import yaml

ROLES = pathlib.Path(__file__).resolve().parents[2] / "roles"


def option_keys(role):
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8")) or {}
    return set(((specs.get("argument_specs") or {}).get("main") or {}).get("options") or {})


def default_keys(role):
    defaults = role / "defaults" / "main.yml"
    return set(yaml.safe_load(defaults.read_text(encoding="utf-8")) or {}) if defaults.exists() else set()


def differences(role):
    """Lines describing how the role's spec and defaults differ; empty when they agree."""
    if not (role / "meta" / "argument_specs.yml").exists():
        return [f"{role.name}: meta/argument_specs.yml is missing"]
    options, defaults = option_keys(role), default_keys(role)
    problems = []
    if defaults - options:
        problems.append(f"{role.name}: in defaults/main.yml but not in argument_specs: {sorted(defaults - options)}")
    if options - defaults:
        problems.append(f"{role.name}: in argument_specs but not in defaults/main.yml: {sorted(options - defaults)}")
    return problems


def main():
    roles = sorted(path for path in ROLES.iterdir() if path.is_dir())
    problems = [line for role in roles for line in differences(role)]
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"argument_specs match defaults in {len(roles)} roles: {', '.join(role.name for role in roles)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
