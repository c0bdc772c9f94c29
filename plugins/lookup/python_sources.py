# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python sources of this collection's module_utils packages, by module name."""

from __future__ import annotations

DOCUMENTATION = r"""
name: python_sources
author:
  - gpuops.cluster maintainers (@gpuops)
version_added: 0.1.0
short_description: The sources of the collection's module_utils packages, by module name
description:
  - Reads every C(.py) file of the named packages of this collection's C(plugins/module_utils) on the controller
    and returns one mapping of each module's dotted name to its source; a package's C(__init__.py) is under the
    package's name.
  - The mig role copies that mapping as one file for its boot-time restore, which imports the modules from it.
    So a run copies and checksums one file instead of one per module.
options:
  _terms:
    description: Package names under C(plugins/module_utils), such as C(_gpu).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Copy the packages as one file
  ansible.builtin.copy:
    content: "{{ lookup('gpuops.cluster.python_sources', '_gpu', '_host') | to_json(sort_keys=true) }}"
    dest: /usr/local/lib/gpuops-mig/module_utils.json
    mode: "0644"
"""

RETURN = r"""
_raw:
  description: One mapping, C(ansible_collections.gpuops.cluster.plugins.module_utils.PACKAGE.MODULE) to source.
  type: list
  elements: dict
"""

from pathlib import Path

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

MODULE_UTILS = Path(__file__).resolve().parents[1] / "module_utils"
PREFIX = "ansible_collections.gpuops.cluster.plugins.module_utils"


def python_sources(packages, root=MODULE_UTILS, prefix=PREFIX):
    """{dotted module name: source} of every .py file of PACKAGES (names of folders under ROOT)."""
    sources = {}
    for package in packages:
        folder = Path(root) / package
        if not (folder / "__init__.py").is_file():
            raise AnsibleLookupError(f"{package!r} is not a package of {root}")
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            sources[".".join((prefix, *parts))] = path.read_text(encoding="utf-8")
    return sources


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return [python_sources([str(term) for term in terms])]
