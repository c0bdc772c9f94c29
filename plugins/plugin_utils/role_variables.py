# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the host roles' variables of every GPU node against the roles' argument specs, on the controller.

A role validates its variables only when it starts on a host, after SSH and fact gathering on every
node, and then prints its whole argument spec. The plan checks the same specs (meta/argument_specs.yml)
first, for every GPU node at once, and names host, variable, what is wrong and what is valid.
"""

from __future__ import annotations

import json
import os

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_cluster import version_problem

# The roles the host plays run on GPU nodes; each owns the variables prefixed with its name.
HOST_ROLES = ("nvidia_driver", "nvidia_container_toolkit", "mig", "rke2")
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES_DIR = os.path.join(COLLECTION_ROOT, "roles")
# What only matters when a role starts is left to the role: here every variable is optional.
_START_ONLY_KEYS = ("default", "required")
# Rules a role checks beyond its argument spec's types and choices, the role's own functions: the spec says
# rke2_version is a string, the rke2 role refuses any string RKE2 does not tag a release with.
VALUE_RULES = {"rke2_version": version_problem}


def load_role_options(roles_dir=ROLES_DIR, roles=HOST_ROLES):
    """{role: {option: spec}} from each role's meta/argument_specs.yml (entry point main)."""
    options = {}
    for role in roles:
        with open(os.path.join(roles_dir, role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            specs = yaml.safe_load(handle) or {}
        options[role] = specs["argument_specs"]["main"].get("options") or {}
    return options


def load_role_defaults(roles_dir=ROLES_DIR, roles=HOST_ROLES):
    """{variable: default} of each role's defaults/main.yml: what a task of the role templates with where the
    inventory does not set a variable (rke2_airgap_dir: "/srv/rke2/{{ rke2_version }}" with the default)."""
    defaults = {}
    for role in roles:
        with open(os.path.join(roles_dir, role, "defaults", "main.yml"), encoding="utf-8") as handle:
            defaults.update(yaml.safe_load(handle) or {})
    return defaults


def _checkable(spec):
    return {key: value for key, value in spec.items() if key not in _START_ONLY_KEYS and key != "description"}


class RoleVariableChecker:
    """Validates role variables one at a time; a value seen once is not validated again (1000 equal nodes)."""

    def __init__(self, options_by_role):
        self._specs = {name: _checkable(spec) for options in options_by_role.values() for name, spec in options.items()}
        self._roles = {name: role for role, options in options_by_role.items() for name in options}
        self._seen = {}

    @property
    def names(self):
        return frozenset(self._specs)

    def names_of(self, role):
        """The variables of ROLE alone (the rke2 role also runs on hosts without GPUs)."""
        return frozenset(name for name, owner in self._roles.items() if owner == role)

    def problem(self, name, value):
        """Why VALUE is not valid for role variable NAME, or None (also for names no role defines)."""
        spec = self._specs.get(name)
        if spec is None:
            return None
        key = (name, json.dumps(value, sort_keys=True, default=str))
        if key not in self._seen:
            result = ArgumentSpecValidator({name: spec}).validate({name: value})
            problem = "; ".join(result.error_messages) or None
            if problem and spec.get("type") == "bool":
                # The validator lists every spelling of a boolean; one form is enough to act on.
                problem = f"must be true or false, got {value!r}"
            if not problem and name in VALUE_RULES:
                problem = VALUE_RULES[name](value) or None
            self._seen[key] = problem
        return self._seen[key]
