# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fail when a role's meta/argument_specs.yml `main` options differ from its defaults/main.yml.

Both the option names and their defaults must agree: the spec's `default` against the value in
defaults/main.yml. A templated default ("{{ ... }}") is compared as the string it is written as.
"""

import pathlib
import sys

import yaml

ROLES = pathlib.Path(__file__).resolve().parents[2] / "roles"
MISSING = object()


def spec_options(role):
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8")) or {}
    return ((specs.get("argument_specs") or {}).get("main") or {}).get("options") or {}


def role_defaults(role):
    defaults = role / "defaults" / "main.yml"
    return (yaml.safe_load(defaults.read_text(encoding="utf-8")) or {}) if defaults.exists() else {}


def default_differences(role, options, defaults):
    """Lines naming each option whose spec default is not the value defaults/main.yml gives it."""
    problems = []
    for name in sorted(set(options) & set(defaults)):
        spec_default, value = (options[name] or {}).get("default", MISSING), defaults[name]
        if spec_default is MISSING:
            problems.append(f"{role.name}: {name}: no default in argument_specs, defaults/main.yml has {value!r}")
        elif spec_default != value or type(spec_default) is not type(value):
            problems.append(f"{role.name}: {name}: spec default {spec_default!r}, defaults/main.yml: {value!r}")
    return problems


def differences(role):
    """Lines describing how the role's spec and defaults differ; empty when they agree."""
    if not (role / "meta" / "argument_specs.yml").exists():
        return [f"{role.name}: meta/argument_specs.yml is missing"]
    options, defaults = spec_options(role), role_defaults(role)
    problems = []
    # A secret such as rke2_token has no default on purpose: the spec gives it none and defaults/main.yml omits it.
    undefaulted = {name for name, spec in options.items() if "default" not in (spec or {})}
    only_defaults = sorted(set(defaults) - set(options))
    only_options = sorted(set(options) - set(defaults) - undefaulted)
    if only_defaults:
        problems.append(f"{role.name}: in defaults/main.yml but not in argument_specs: {only_defaults}")
    if only_options:
        problems.append(f"{role.name}: in argument_specs but not in defaults/main.yml: {only_options}")
    return problems + default_differences(role, options, defaults)


def main():
    roles = sorted(path for path in ROLES.iterdir() if path.is_dir())
    problems = [line for role in roles for line in differences(role)]
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        names = ", ".join(role.name for role in roles)
        print(f"argument_specs match defaults (names and values) in {len(roles)} roles: {names}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
