# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A host's packages, systemd units and paths, read with one command each (the host_state module's parts)."""

from __future__ import annotations

import hashlib
import os
import stat
import time

# dpkg-query's fields (dpkg-query(1), "--showformat"): db:Status-Abbrev is want/status/error flags, e.g. "ii "
# installed, "hi " held and installed, "rc " removed with its configuration left.
DPKG_FORMAT = "${Package}\t${Version}\t${db:Status-Abbrev}\n"
RPM_FORMAT = "%{NAME}\t%{VERSION}-%{RELEASE}\n"
# systemctl show's properties (systemd.unit(5) and org.freedesktop.systemd1(5)); Id first, so that a block names
# the unit it answers for.
UNIT_PROPERTIES = ("Id", "LoadState", "ActiveState", "SubState", "UnitFileState")


def package_query(manager, names):
    """argv that lists ``names`` with their version (and, for dpkg, their hold state)."""
    if manager == "dpkg":
        return ["dpkg-query", "--show", f"--showformat={DPKG_FORMAT}", "--", *names]
    return ["rpm", "--query", f"--queryformat={RPM_FORMAT}", "--", *names]


def parse_packages(manager, names, stdout):
    """Every name asked for: installed, version ("" when not installed) and held (dpkg's hold; None for rpm)."""
    found = {}
    for line in stdout.splitlines():
        fields = line.split("\t")
        if len(fields) < 2 or fields[0] in found:
            continue
        name, version = fields[0], fields[1]
        if manager == "dpkg":
            flags = fields[2] if len(fields) > 2 else ""
            installed = flags[1:2] in ("i", "W", "t")  # configured; unpacked or half-configured is not
            found[name] = {"installed": installed, "version": version if installed else "", "held": flags[:1] == "h"}
        else:
            found[name] = {"installed": True, "version": version, "held": None}
    empty = {"installed": False, "version": "", "held": False if manager == "dpkg" else None}
    return {name: found.get(name, dict(empty)) for name in names}


def unit_query(names):
    return ["systemctl", "show", "--property=" + ",".join(UNIT_PROPERTIES), "--", *names]


def parse_units(names, stdout):
    """Every unit asked for, by name: load_state, active_state, sub_state, unit_file_state and running.

    systemctl show answers in the order asked, one block of properties per unit, blocks parted by a blank line.
    """
    blocks, current = [], {}
    for line in [*stdout.splitlines(), ""]:
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, value = line.split("=", 1) if "=" in line else (line, "")
        current[key] = value
    if len(blocks) != len(names):
        raise ValueError(f"systemctl show answered {len(blocks)} units for the {len(names)} asked ({', '.join(names)})")
    return {name: unit_state(block) for name, block in zip(names, blocks)}


def unit_state(properties):
    """load_state, active_state, sub_state, unit_file_state and running of a unit from its systemctl show
    properties; no properties (a host that systemd does not run) is a unit neither loaded nor running."""
    return {
        "load_state": properties.get("LoadState", ""),
        "active_state": properties.get("ActiveState", ""),
        "sub_state": properties.get("SubState", ""),
        "unit_file_state": properties.get("UnitFileState", ""),
        "running": properties.get("ActiveState") == "active" and properties.get("SubState") == "running",
    }


def path_state(path, now=None, checksum=False):
    """exists, kind (file, directory, other), link, executable, mode ("0700"), uid, gid, mtime, age_s (seconds
    since mtime) and checksum (the SHA-1 of a regular file's content when CHECKSUM, else None) of one path; a link is
    followed for all but ``link``. A dangling link does not exist, of kind "link"."""
    missing = {
        "exists": False,
        "kind": "",
        "link": False,
        "executable": False,
        "mode": "",
        "uid": None,
        "gid": None,
        "mtime": None,
        "age_s": None,
        "checksum": None,
    }
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return missing
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return {**missing, "kind": "link", "link": True}
    kind = "file" if stat.S_ISREG(status.st_mode) else "directory" if stat.S_ISDIR(status.st_mode) else "other"
    return {
        "exists": True,
        "kind": kind,
        "link": link,
        "executable": kind == "file" and os.access(path, os.X_OK),
        "mode": f"{stat.S_IMODE(status.st_mode):04o}",
        "uid": status.st_uid,
        "gid": status.st_gid,
        "mtime": status.st_mtime,
        "age_s": int((time.time() if now is None else now) - status.st_mtime),
        "checksum": file_checksum(path) if checksum and kind == "file" else None,
    }


def file_checksum(path):
    """SHA-1 of a file's content, the checksum ansible.builtin.copy and template compare."""
    digest = hashlib.sha1()
    with open(path, "rb") as content:
        for block in iter(lambda: content.read(65536), b""):
            digest.update(block)
    return digest.hexdigest()
