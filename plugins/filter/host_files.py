# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters on the paths the host_state module read: whether a file task would change the host."""

from __future__ import annotations

import hashlib

from ansible.errors import AnsibleFilterError

KINDS = ("file", "directory", "absent")


def _mode(value):
    return None if value in (None, "") else int(str(value), 8)


def path_differs(state, kind="file", content=None, mode=None, uid=None, gid=None):
    """Whether the path is not yet what a file, directory or absent task wants: True where that task would change it.

    STATE is host_state's state of the path (read with checksum for a file). A link, a file read without its
    checksum or anything unexpected counts as different, so that the task runs and decides itself.
    """
    if kind not in KINDS:
        raise AnsibleFilterError(f"path_differs: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not isinstance(state, dict) or "exists" not in state:
        raise AnsibleFilterError(f"path_differs: expects a path state of gpuops.cluster.host_state, got {state!r}")
    if kind == "absent":
        return bool(state["exists"] or state.get("link"))
    if not state["exists"] or state.get("link") or state.get("kind") != kind:
        return True
    if kind == "file":
        if content is None:
            raise AnsibleFilterError("path_differs: a file's content is needed to compare it")
        # SHA-1: the checksum Ansible's file modules compare. surrogateescape: the bytes of a file lookup that were
        # not UTF-8 come back as they were read.
        wanted = hashlib.sha1(str(content).encode("utf-8", "surrogateescape")).hexdigest()
        if state.get("checksum") != wanted:
            return True
    if mode is not None and _mode(state.get("mode")) != _mode(mode):
        return True
    return (uid is not None and state.get("uid") != uid) or (gid is not None and state.get("gid") != gid)


class FilterModule:
    """Decisions on the paths host_state read."""

    def filters(self):
        return {"path_differs": path_differs}
