# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test bed hosts that a job in the execution environment reaches over SSH, as AWX reaches a Machine credential's
hosts: systemd containers of tests/ee/ssh-host (Debian 12 with openssh-server) on a podman network of their own,
which the job's container joins. Every name starts with the prefix given (gpuops-ee-...), and only those are
removed at the end. The login key is made for each run; each host makes its own host keys at start, which the
job's known_hosts file lists, so that the job checks them.
"""

import pathlib
import subprocess
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
HOST_RECIPE = REPO_ROOT / "tests" / "ee" / "ssh-host"
HOST_IMAGE = "localhost/gpuops-ee-ssh-host:bookworm"
USER = "gpuops"


class HostError(RuntimeError):
    """A test bed host that could not be made ready."""


def run(*argv, stdin=None, check=True):
    result = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False, timeout=600)
    if check and result.returncode != 0:
        raise HostError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result


def build_host_image(runtime):
    """The test bed's Debian 12 image (built once per recipe), then tests/ee/ssh-host on it (cached by layers)."""
    run(str(REPO_ROOT / "tests" / "testbed" / "build-image"), "bookworm")
    run(runtime, "build", "--quiet", "--tag", HOST_IMAGE, str(HOST_RECIPE))
    return HOST_IMAGE


def make_key(folder):
    """A new ed25519 key pair for this run: (private key text, public key text)."""
    key = pathlib.Path(folder) / "id_ed25519"
    run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-ee-test", "-f", str(key))
    return key.read_text(encoding="utf-8"), key.with_suffix(".pub").read_text(encoding="utf-8")


class SshHosts:
    """Hosts NAMES, started by start() and removed by remove(); address and host key of each once started."""

    def __init__(self, runtime, prefix, names):
        self.runtime, self.prefix, self.names = runtime, prefix, list(names)
        self.network = prefix
        self.addresses, self.host_keys = {}, {}

    def container(self, name):
        return f"{self.prefix}-{name}"

    def start(self, public_key):
        image = build_host_image(self.runtime)
        run(self.runtime, "network", "create", self.network)
        for name in self.names:
            run(self.runtime, "run", "--detach", "--name", self.container(name), "--hostname", name,
                "--network", self.network, "--systemd=always", image, "/sbin/init")  # fmt: skip
        for name in self.names:
            self._wait_for_sshd(name)
            self.exec(name, f"install -m 0600 -o {USER} -g {USER} /dev/stdin /home/{USER}/.ssh/authorized_keys",
                      stdin=public_key)  # fmt: skip
            self.host_keys[name] = self.exec(name, "cat /etc/ssh/ssh_host_ed25519_key.pub").split()[:2]
            self.addresses[name] = self._address(name)
        return self

    def _address(self, name):
        template = '{{ (index .NetworkSettings.Networks "NETWORK").IPAddress }}'.replace("NETWORK", self.network)
        return run(self.runtime, "inspect", "--format", template, self.container(name)).stdout.strip()

    # Two systemd boots beside make test's other targets: on the 2-core machine with empty caches one host's sshd
    # was still not started after 120 s once, where it starts in a second on an idle machine.
    def _wait_for_sshd(self, name, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = run(self.runtime, "exec", self.container(name), "systemctl", "is-active", "ssh", check=False)
            if state.stdout.strip() == "active":
                return
            time.sleep(1)
        report = [
            run(self.runtime, "exec", self.container(name), "systemctl", *command, check=False).stdout
            for command in (["is-system-running"], ["list-jobs"], ["status", "ssh"])
        ]
        raise HostError(f"{self.container(name)}: sshd did not start within {timeout} s:\n" + "\n".join(report))

    def exec(self, name, command, stdin=None):
        return run(self.runtime, "exec", "--interactive", self.container(name), "sh", "-c", command, stdin=stdin).stdout

    def copy_to(self, name, source, dest):
        run(self.runtime, "cp", str(source), f"{self.container(name)}:{dest}")

    def known_hosts(self):
        """known_hosts lines for every host's address."""
        return "".join(f"{self.addresses[name]} {' '.join(self.host_keys[name])}\n" for name in self.names)

    def remove(self):
        for name in self.names:
            run(self.runtime, "rm", "--force", "--time", "0", self.container(name), check=False)
        run(self.runtime, "network", "rm", "--force", self.network, check=False)
