# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters that read `apt-cache madison`: the versions a package source offers."""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError
from ansible.module_utils.compat.version import LooseVersion

# The Debian revision: the part after the last "-" (535.261.03-1~deb12u1 -> 535.261.03).
_REVISION = re.compile(r"-[^-]*$")


def _rows(madison_lines):
    if not isinstance(madison_lines, (list, tuple)):
        raise AnsibleFilterError(f"expected the lines of `apt-cache madison`, got {type(madison_lines).__name__}")
    return [[column.strip() for column in line.split("|")] for line in madison_lines]


def _unique(items):
    return list(dict.fromkeys(items))


def upstream_version(version):
    """A Debian package version without its revision (535.261.03-1~deb12u1 -> 535.261.03)."""
    return _REVISION.sub("", version)


def apt_madison_versions(madison_lines, package):
    """Upstream versions (revision cut off) that `apt-cache madison` lists for one package, in its order."""
    return [upstream_version(row[1]) for row in _rows(madison_lines) if len(row) > 1 and row[0] == package]


def apt_madison_common_versions(madison_lines, packages, branch, version=""):
    """Upstream versions every package offers, inside the branch (or exactly version), newest first."""
    common = None
    for package in _unique(packages):
        offered = _unique(apt_madison_versions(madison_lines, package))
        common = offered if common is None else [item for item in common if item in offered]
    wanted = re.compile("^" + re.escape(version or f"{branch}.") + ("$" if version else ""))
    matching = [item for item in common or [] if wanted.match(item)]
    return sorted(matching, key=LooseVersion, reverse=True)


class FilterModule:
    """Versions a package source offers, read from `apt-cache madison`."""

    def filters(self):
        return {
            "apt_madison_versions": apt_madison_versions,
        }
