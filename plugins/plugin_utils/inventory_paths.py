# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the collection keeps what it writes on the controller for an inventory: next to it."""

from __future__ import annotations

import os


def beside_inventory(sources, name, cwd=None):
    """NAME in the first inventory source's folder (inside an inventory folder, beside an inventory file), or in
    the current directory when no source is a path. Hidden names are never read back as inventory by Ansible."""
    for source in sources or ():
        if os.path.isdir(source):
            return os.path.join(source, name)
        if os.path.isfile(source):
            return os.path.join(os.path.dirname(source), name)
    return os.path.join(cwd or os.getcwd(), name)
