# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu-node start DIR --kubeconfig FILE --hardware FILE [--namespace NS] [--wait-for-kubeconfig] | stop DIR | run ...

`start` runs the stand-in in the background (DIR/gpu-node.pid, DIR/gpu-node.log) and returns once
every described node is registered; `stop` ends it; `run` is the process itself. With
--wait-for-kubeconfig, `start` returns at once and the stand-in begins when FILE appears: a scenario
that builds its cluster in the same run (playbooks/site.yml) starts it before the cluster exists."""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import hardware
from .cluster import Cluster
from .controller import Controller, log


def run(arguments) -> None:
    described = hardware.load(arguments.hardware)
    if arguments.wait_for_kubeconfig:
        log(f"waiting for {arguments.kubeconfig}")
        while not Path(arguments.kubeconfig).exists():
            time.sleep(1)
    # Real-kubelet nodes: DIR/nodes/<node>/kubelet/device-plugins and DIR/nodes/<node>/gpu (tests/harness).
    controller = Controller(
        Cluster(str(arguments.kubeconfig)), described, arguments.namespace, Path(arguments.dir).resolve() / "nodes"
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    controller.register()
    Path(arguments.dir, "gpu-node.ready").write_text(f"{len(described)} nodes\n")
    log(f"serving nodes {', '.join(described)}")
    try:
        while True:
            began = time.monotonic()
            try:
                controller.reconcile()
            except Exception as error:  # the API may be restarting: try again on the next pass
                log(f"reconcile failed: {error!r}")
            time.sleep(max(0.1, 1 - (time.monotonic() - began)))
    finally:
        controller.stop()  # the plugins' sockets go with the process


def pid_of(directory: Path) -> int | None:
    try:
        pid = int((directory / "gpu-node.pid").read_text())
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if b"gpu_node.cli" in command and str(directory).encode() in command else None


def start(arguments) -> None:
    directory = arguments.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    stop(arguments)
    (directory / "gpu-node.ready").unlink(missing_ok=True)
    log_file = directory / "gpu-node.log"
    command = [
        sys.executable,
        "-m",
        "gpu_node.cli",
        "run",
        str(directory),
        "--kubeconfig",
        str(arguments.kubeconfig.resolve()),
        "--hardware",
        str(arguments.hardware.resolve()),
        "--namespace",
        arguments.namespace,
        *(["--wait-for-kubeconfig"] if arguments.wait_for_kubeconfig else []),
    ]
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with log_file.open("ab") as output:
        child = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=environment,
            start_new_session=True,
        )
    (directory / "gpu-node.pid").write_text(f"{child.pid}\n")
    if arguments.wait_for_kubeconfig:
        print(f"GPU node stand-in waiting for {arguments.kubeconfig} (pid {child.pid}), log {log_file}")
        return
    deadline = time.monotonic() + 30
    while not (directory / "gpu-node.ready").exists():
        if child.poll() is not None or time.monotonic() > deadline:
            tail = "\n".join(log_file.read_text(errors="replace").splitlines()[-20:])
            stop(arguments)
            sys.exit(f"GPU node stand-in did not start; last lines of {log_file}:\n{tail}")
        time.sleep(0.2)
    print(f"GPU node stand-in running (pid {child.pid}), log {log_file}")


def stop(arguments) -> None:
    directory = arguments.dir.resolve()
    pid = pid_of(directory)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while pid_of(directory) is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid_of(directory) is not None:
            os.kill(pid, signal.SIGKILL)
    (directory / "gpu-node.pid").unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="gpu-node", description=__doc__)
    parser.add_argument("action", choices=("start", "stop", "run"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("--kubeconfig", type=Path)
    parser.add_argument("--hardware", type=Path)
    parser.add_argument("--namespace", default="gpu-operator", help="operator namespace when no Deployment says")
    parser.add_argument("--wait-for-kubeconfig", action="store_true", help="begin when the kubeconfig appears")
    arguments = parser.parse_args()
    if arguments.action != "stop" and not (arguments.kubeconfig and arguments.hardware):
        parser.error(f"{arguments.action} needs --kubeconfig and --hardware")
    {"start": start, "stop": stop, "run": run}[arguments.action](arguments)


if __name__ == "__main__":
    main()
