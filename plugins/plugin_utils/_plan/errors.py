# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Errors of the cluster plan: bad intent in the inventory, layouts the device plugin refuses.

IntentError is the collection's one problem type on the controller: the plan's checks and the roles' cluster
checks (plugin_utils) both describe what is wrong with one host's variable with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError

# Hosts named in one message before the rest is only counted.
HOSTS_SHOWN = 10


class PlanError(GpuopsError, ValueError):
    """Base of the errors of the plan; str() says what is wrong and what would work."""


class CapacityError(PlanError):
    """A node layout the device plugin refuses to serve; str() says why and what would work."""


class DevicePluginConfigError(PlanError):
    """Input from which no valid device plugin config can be built; str() lists every problem."""


@dataclass(frozen=True)
class IntentError:
    """One problem in one host's variables: the variable and what is wrong with it (what would be valid).

    A value, not an exception: checks collect every problem, and IntentErrors raises them together.
    """

    host: str
    variable: str
    message: str

    def __str__(self):
        return f"{self.host}: {self.variable}: {self.message}"


def split_path(message, variable):
    """Linter messages start with their key path ("gpuops_time_slicing.replicas: ..."): keep it as the variable."""
    path, sep, rest = message.partition(": ")
    if sep and path.startswith(variable):
        return path, rest
    return variable, message


def hosts_text(hosts, limit=HOSTS_SHOWN):
    """The first LIMIT hosts (ten by default), then how many more: "a, b, ... and 990 more hosts"."""
    shown = ", ".join(hosts[:limit])
    if len(hosts) > limit:
        shown += f" and {len(hosts) - limit} more hosts"
    return shown


def format_errors(errors):
    """One line per distinct problem, naming every host that has it (the first ten, then a count)."""
    grouped = {}
    for error in errors:
        grouped.setdefault((error.variable, error.message), []).append(error.host)
    lines = []
    for (variable, message), hosts in grouped.items():
        lines.append(f"{hosts_text(hosts)}: {variable}: {message}")
    return "\n".join(lines)


class IntentErrors(PlanError):
    """Every problem found in the inventory's intent."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__(format_errors(self.errors))
