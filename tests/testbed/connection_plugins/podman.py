# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The molecule test bed's connection to its podman hosts: the container's namespaces entered with nsenter.

Molecule's podman driver names `ansible_connection: podman` for every host, which this plugin answers when
molecule-base.yml puts this folder on ANSIBLE_CONNECTION_PLUGINS (its options are containers.podman's).

containers.podman's connection runs each command with `podman exec`: 1.18.0 (plugins/connection/podman.py)
without stdin, so without pipelining (five `podman exec` per task), and with `podman mount` at every connect,
that is at every task. A `podman exec` is the podman client, conmon and `runc exec`: about 0.12 s of an idle
2-core machine (nsenter: 0.005 s) and more of a loaded one, for a task whose module often runs in less. The
test bed's podman is rootful, so this plugin enters the container's namespaces itself: `nsenter --target PID
--all` (util-linux) with the container's environment (its init's, which podman exec starts from) and its
open-file and process limits, with the module on stdin, as SSH with pipelining does. Files travel the same
way (`cat` in the container), never through the host's view of the container's filesystem, where the
container's absolute symlinks would resolve on the host. The container's PID comes from `podman inspect` once
and is kept under the temporary folder, checked against the process' start time at each use (a container
recreated under the same name has another).
"""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import subprocess
import tempfile

from ansible.errors import AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_bytes, to_native
from ansible.plugins.connection import ConnectionBase
from ansible_collections.containers.podman.plugins.connection.podman import DOCUMENTATION as PODMAN_DOCUMENTATION

DOCUMENTATION = PODMAN_DOCUMENTATION

PID_CACHE = os.path.join(tempfile.gettempdir(), "gpuops-testbed-podman-pids")
# The limits podman sets for the container (tests/testbed/containers.conf default_ulimits), as /proc/PID/limits
# names them.
LIMITS = {"Max open files": resource.RLIMIT_NOFILE, "Max processes": resource.RLIMIT_NPROC}


def _limit(value):
    return resource.RLIM_INFINITY if value == "unlimited" else int(value)


def _start_time(pid):
    """Field 22 of /proc/PID/stat, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


class Connection(ConnectionBase):
    transport = "podman"
    has_pipelining = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._container = self._play_context.remote_addr
        self._nsenter = None

    def _connect(self):
        if not self._connected:
            self._nsenter = shutil.which("nsenter")
            if os.geteuid() != 0 or self._nsenter is None:
                raise AnsibleConnectionFailure(
                    "the test bed's podman connection enters containers with nsenter (util-linux) as root, as its"
                    f" podman runs rootful; here euid is {os.geteuid()}"
                    f" and nsenter is {self._nsenter or 'not on the PATH'}"
                )
            self._connected = True
        return self

    def _container_pid(self):
        cache = os.path.join(PID_CACHE, self._container.replace("/", "_"))
        try:
            with open(cache, encoding="utf-8") as cached:
                pid, started = cached.read().split()
            if _start_time(pid) == started:
                return pid
        except (OSError, ValueError):
            pass
        podman = shutil.which(self.get_option("podman_executable")) or "podman"
        extra = shlex.split(self.get_option("podman_extra_args") or "")
        inspect = subprocess.run(
            [podman, *extra, "inspect", "--format", "{{.State.Pid}}", self._container],
            capture_output=True,
            text=True,
            check=False,
        )
        pid = inspect.stdout.strip()
        started = _start_time(pid) if inspect.returncode == 0 and pid not in ("", "0") else None
        if started is None:
            raise AnsibleConnectionFailure(f"container {self._container} is not running: {inspect.stderr.strip()}")
        os.makedirs(PID_CACHE, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=PID_CACHE, delete=False) as new:
            new.write(f"{pid} {started}\n")
        os.replace(new.name, cache)
        return pid

    def _enter(self, argv, in_data):
        pid = self._container_pid()
        with open(f"/proc/{pid}/environ", "rb") as environ:
            env = dict(item.split(b"=", 1) for item in environ.read().split(b"\0") if b"=" in item)
        limits = {}
        with open(f"/proc/{pid}/limits", encoding="utf-8") as table:
            for line in table:
                for name, limit in LIMITS.items():
                    if line.startswith(name):
                        soft, hard = line[len(name) :].split()[:2]
                        limits[limit] = tuple(_limit(value) for value in (soft, hard))

        def set_limits():
            for limit, values in limits.items():
                resource.setrlimit(limit, values)

        user = self._play_context.remote_user
        # A user other than root: run as that user, by name, inside the container.
        as_user = ["runuser", "-u", user, "--"] if user and user != "root" else []
        command = [self._nsenter, "--target", pid, "--all", "--", *as_user, *argv]
        process = subprocess.Popen(
            [to_bytes(arg, errors="surrogate_or_strict") for arg in command],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=set_limits,
        )
        stdout, stderr = process.communicate(input=in_data)
        return process.returncode, stdout, stderr

    def exec_command(self, cmd, in_data=None, sudoable=False):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        self._connect()
        return self._enter(shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)

    def put_file(self, in_path, out_path):
        super().put_file(in_path, out_path)
        self._connect()
        with open(in_path, "rb") as source:
            rc, _output, stderr = self._enter(["sh", "-c", 'cat > "$1"', "sh", out_path], source.read())
        if rc != 0:
            raise AnsibleConnectionFailure(f"could not write {out_path} in {self._container}: {to_native(stderr)}")

    def fetch_file(self, in_path, out_path):
        super().fetch_file(in_path, out_path)
        self._connect()
        rc, content, stderr = self._enter(["cat", in_path], None)
        if rc != 0:
            raise AnsibleConnectionFailure(f"could not read {in_path} in {self._container}: {to_native(stderr)}")
        with open(out_path, "wb") as target:
            target.write(content)

    def close(self):
        self._connected = False
