# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plain Python values out of templated ones, for every plugin that hands Ansible's data to the domain code."""

from __future__ import annotations

import json

from ansible.module_utils.common.text.converters import to_text


def plain(value):
    """VALUE as plain dicts, lists, strings and numbers.

    Templated values carry Ansible's tagged types (str subclasses, lazy containers), which the checks compare
    and the YAML dumpers refuse; a JSON round trip drops them.
    """
    return json.loads(json.dumps(value, default=to_text))
