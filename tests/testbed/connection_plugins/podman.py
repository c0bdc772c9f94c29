# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The molecule test bed's connection to its podman hosts: containers.podman's, with pipelining.

Molecule's podman driver names `ansible_connection: podman` for every host, which this plugin answers when
molecule-base.yml puts this folder on ANSIBLE_CONNECTION_PLUGINS. containers.podman's own connection
(1.18.0, plugins/connection/podman.py) sets has_pipelining False: its `podman exec` does not attach stdin,
so Ansible copies each module into the host and runs five `podman exec` (home, temporary folder, chmod,
module, cleanup) per task. With `--interactive` the module travels over stdin in one `podman exec`, as
over SSH with pipelining: the scenarios' tasks take about half the time. Everything else (mount, files,
options) is containers.podman's. containers.podman 1.21.0 (the `ansible` 14 package, with ansible-core 2.21)
pipelines by itself (`podman exec -i` when there is input): there this plugin leaves every command to it.
"""

from __future__ import annotations

import shlex

from ansible.module_utils.common.text.converters import to_native
from ansible_collections.containers.podman.plugins.connection.podman import DOCUMENTATION as PODMAN_DOCUMENTATION
from ansible_collections.containers.podman.plugins.connection.podman import Connection as PodmanConnection

# The same options as containers.podman's connection (Ansible reads them from the loaded module).
DOCUMENTATION = PODMAN_DOCUMENTATION


class Connection(PodmanConnection):
    transport = "podman"
    has_pipelining = True

    def exec_command(self, cmd, in_data=None, sudoable=False):
        if in_data is None or PodmanConnection.has_pipelining:
            return super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        # A pipelined module: its code is the command's stdin.
        if not self._connected:
            self._connect()
        exec_args = ["exec", "--interactive"] + (["--user", self.user] if self.user else [])
        return self._podman(exec_args, shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)
