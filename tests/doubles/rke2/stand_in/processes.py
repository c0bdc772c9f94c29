# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Child processes, their logs, and systemd's readiness notification.

Like RKE2, the stand-in runs its components as children: when one ends, the whole service ends
(systemd restarts it); on SIGTERM it stops them. Pods keep running (KillMode=process), as with RKE2.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def log(message: str) -> None:
    print(f"rke2: {message}", file=sys.stderr, flush=True)


def notify_ready() -> None:
    """sd_notify(READY=1): `systemctl start` returns now, as with RKE2's Type=notify units."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.connect(address)
        notify.sendall(b"READY=1")


def wait_until(check, what: str, timeout: float = 120, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result:
                return result
        except Exception as error:
            last = error
        else:
            last = None
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {timeout:.0f} s: {last}")
        time.sleep(interval)


class Children:
    def __init__(self) -> None:
        self.running: list[tuple[str, subprocess.Popen]] = []
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def start(self, name: str, argv: list[str], log_file: Path, path_first: Path | None = None) -> subprocess.Popen:
        """path_first: a folder searched before PATH (containerd finds its shims there, as in RKE2)."""
        log_file.parent.mkdir(parents=True, exist_ok=True)
        # Only the rke2 process itself tells systemd it is ready.
        environment = {key: value for key, value in os.environ.items() if key != "NOTIFY_SOCKET"}
        if path_first:
            environment["PATH"] = f"{path_first}{os.pathsep}{environment.get('PATH', os.defpath)}"
        with log_file.open("ab") as output:
            child = subprocess.Popen(
                argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment
            )
        self.running.append((name, child))
        log(f"started {name} (pid {child.pid}), log {log_file}")
        return child

    def check(self) -> None:
        for name, child in self.running:
            if child.poll() is not None:
                raise RuntimeError(f"{name} exited with status {child.returncode}")

    def supervise(self) -> None:
        """Returns never: exits when a child ends or on SIGTERM."""
        while True:
            try:
                self.check()
            except RuntimeError as error:
                log(str(error))
                self.stop()
                sys.exit(1)
            time.sleep(1)

    def stop(self) -> None:
        for _name, child in reversed(self.running):
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + 5
        for _name, child in reversed(self.running):
            try:
                child.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()  # kube-apiserver can linger in its graceful shutdown
                child.wait()

    def _on_signal(self, number, _frame) -> None:
        log(f"stopping on signal {number}")
        self.stop()
        sys.exit(0)
