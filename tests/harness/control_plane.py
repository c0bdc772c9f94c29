# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Kubernetes control plane on localhost for tests: etcd, kube-apiserver, kube-controller-manager
and kube-scheduler, started in the background, with DIR/admin.kubeconfig (mode 0600).

Usage: control_plane.py start DIR | stop DIR | status DIR

Each start begins with an empty etcd. The node lifecycle controller is off by default
(GPUOPS_HARNESS_KCM_CONTROLLERS overrides): GPU nodes without a kubelet are Node objects whose
Ready condition the GPU node stand-in sets, and no controller marks them unreachable.
"""

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests/doubles/rke2"))
sys.path.insert(0, str(REPO_ROOT / "tests/testbed"))
import binaries  # noqa: E402  (the test bed's Kubernetes, built from Go modules)
from stand_in import pki  # noqa: E402  (certificates shared with the RKE2 stand-in, used as is)

ETCD_PORT = int(os.environ.get("GPUOPS_HARNESS_ETCD_PORT", "12379"))
API_PORT = int(os.environ.get("GPUOPS_HARNESS_API_PORT", "16443"))
KCM_CONTROLLERS = os.environ.get("GPUOPS_HARNESS_KCM_CONTROLLERS", "*,-node-lifecycle-controller")
START_TIMEOUT = float(os.environ.get("GPUOPS_HARNESS_START_TIMEOUT", "60"))
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


class StartError(RuntimeError):
    pass


def kube_multi() -> Path:
    """The test bed's kube-multi (etcd and the Kubernetes components), built once per version."""
    try:
        return binaries.kube_multi()
    except binaries.BuildError as error:
        raise StartError(str(error)) from error


def ensure_pki(directory: Path) -> dict:
    pki_dir = directory / "pki"
    ca = pki.ensure_ca(pki_dir)
    files = {name: pki_dir / name for name in ("apiserver.crt", "apiserver.key", "admin.crt", "admin.key", "sa.key")}
    if not files["apiserver.crt"].exists():
        sans = ("127.0.0.1", "localhost", "kubernetes", "kubernetes.default.svc", "10.96.0.1")
        pki.issue(ca, files["apiserver.crt"], files["apiserver.key"], "/CN=kube-apiserver", sans)
    if not files["admin.crt"].exists():
        pki.issue(ca, files["admin.crt"], files["admin.key"], "/O=system:masters/CN=admin", client=True)
    pki.ensure_signing_key(files["sa.key"])
    return {"ca.crt": ca[0], "ca.key": ca[1], **files}


def argvs(directory: Path, files: dict, kube: Path) -> dict:
    kubeconfig = str(directory / "admin.kubeconfig")
    clients = [
        "--kubeconfig",
        kubeconfig,
        "--authentication-kubeconfig",
        kubeconfig,
        "--authorization-kubeconfig",
        kubeconfig,
        "--bind-address",
        "127.0.0.1",
        "--secure-port",
        "0",
        "--leader-elect=false",
    ]
    return {
        "etcd": [
            str(kube),
            "etcd",
            "--data-dir",
            str(directory / "etcd"),
            "--listen-client-urls",
            f"http://127.0.0.1:{ETCD_PORT}",
            "--advertise-client-urls",
            f"http://127.0.0.1:{ETCD_PORT}",
            "--listen-peer-urls",
            "http://127.0.0.1:0",
            "--unsafe-no-fsync",
        ],
        "kube-apiserver": [
            str(kube),
            "kube-apiserver",
            "--etcd-servers",
            f"http://127.0.0.1:{ETCD_PORT}",
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            str(API_PORT),
            "--tls-cert-file",
            str(files["apiserver.crt"]),
            "--tls-private-key-file",
            str(files["apiserver.key"]),
            "--client-ca-file",
            str(files["ca.crt"]),
            "--authorization-mode",
            "Node,RBAC",
            # As RKE2's: privileged pods (HAMi's and gpushare's device plugins, the GPU Operator's operands).
            "--allow-privileged=true",
            "--service-account-issuer",
            "https://kubernetes.default.svc",
            "--service-account-key-file",
            str(files["sa.key"]),
            "--service-account-signing-key-file",
            str(files["sa.key"]),
            "--service-cluster-ip-range",
            "10.96.0.0/16",
            "--endpoint-reconciler-type",
            "none",
            "--cert-dir",
            str(directory / "pki"),
        ],
        "kube-controller-manager": [
            str(kube),
            "kube-controller-manager",
            *clients,
            "--service-account-private-key-file",
            str(files["sa.key"]),
            "--root-ca-file",
            str(files["ca.crt"]),
            "--cluster-signing-cert-file",
            str(files["ca.crt"]),
            "--cluster-signing-key-file",
            str(files["ca.key"]),
            "--use-service-account-credentials",
            "--controllers",
            KCM_CONTROLLERS,
        ],
        "kube-scheduler": [str(kube), "kube-scheduler", *clients],
    }


def read_pids(directory: Path) -> dict:
    path = directory / "pids"
    if not path.exists():
        return {}
    pairs = (line.split() for line in path.read_text().splitlines() if line.strip())
    return {name: int(pid) for name, pid in pairs}


def ours(pid: int, directory: Path) -> bool:
    """The pid is still one of this control plane's processes (every command line names DIR)."""
    try:
        return str(directory) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def log_tail(log: Path, lines: int = 25) -> str:
    if not log.exists():
        return "(no log)"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def ssl_context(files: dict) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(files["ca.crt"]))
    context.load_cert_chain(str(files["admin.crt"]), str(files["admin.key"]))
    return context


def api_get(context: ssl.SSLContext, path: str) -> int:
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{API_PORT}{path}", context=context, timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def wait_for(what: str, check, started: dict, directory: Path, component: str) -> None:
    """Polls check() until it is true; fails naming the component, with its log tail, when a
    process ended or the time ran out."""
    deadline = time.monotonic() + START_TIMEOUT
    while not check():
        for name, child in started.items():
            if child.poll() is not None:
                raise StartError(
                    f"{name} exited with status {child.returncode}; last lines of "
                    f"{directory}/log/{name}.log:\n{log_tail(directory / 'log' / f'{name}.log')}"
                )
        if time.monotonic() > deadline:
            log = directory / "log" / f"{component}.log"
            raise StartError(f"{what} not after {START_TIMEOUT:.0f} s; last lines of {log}:\n{log_tail(log)}")
        time.sleep(0.2)


def free_port() -> int:
    """A TCP port of localhost that nothing listens on now, for a control plane beside others."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(directory: Path) -> None:
    directory = directory.resolve()
    files = ensure_pki(directory)
    if status(directory, quiet=True):
        print(f"control plane already running: {directory}/admin.kubeconfig")
        return
    stop(directory)
    kube = kube_multi()
    shutil.rmtree(directory / "etcd", ignore_errors=True)  # each run starts from an empty cluster
    kubeconfig = directory / "admin.kubeconfig"
    kubeconfig.write_text(
        pki.kubeconfig(f"https://127.0.0.1:{API_PORT}", files["ca.crt"], files["admin.crt"], files["admin.key"])
    )
    kubeconfig.chmod(0o600)
    (directory / "log").mkdir(exist_ok=True)
    commands = argvs(directory, files, kube)
    context = ssl_context(files)
    started: dict[str, subprocess.Popen] = {}
    began = time.monotonic()

    def launch(name: str) -> None:
        with (directory / "log" / f"{name}.log").open("wb") as output:
            # A session of their own: the components outlive this command and ignore its terminal.
            started[name] = subprocess.Popen(
                commands[name],
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        with (directory / "pids").open("a") as pids:
            pids.write(f"{name} {started[name].pid}\n")

    try:
        launch("etcd")
        launch("kube-apiserver")
        wait_for(
            "kube-apiserver ready", lambda: api_get(context, "/readyz") == 200, started, directory, "kube-apiserver"
        )
        launch("kube-controller-manager")
        launch("kube-scheduler")
        # The service-account controller of the controller-manager creates this one.
        wait_for(
            "kube-controller-manager working (ServiceAccount default/default)",
            lambda: api_get(context, "/api/v1/namespaces/default/serviceaccounts/default") == 200,
            started,
            directory,
            "kube-controller-manager",
        )
        wait_for(
            "kube-scheduler holding its lease",
            lambda: (
                started["kube-scheduler"].poll() is None
                and "Starting Kubernetes Scheduler" in log_tail(directory / "log/kube-scheduler.log", 200)
            ),
            started,
            directory,
            "kube-scheduler",
        )
    except StartError as error:
        stop(directory)
        sys.exit(f"control plane did not come up: {error}")
    print(f"control plane up in {time.monotonic() - began:.1f} s: {kubeconfig}")


def status(directory: Path, quiet: bool = False) -> bool:
    pids = read_pids(directory.resolve())
    running = {name: pid for name, pid in pids.items() if ours(pid, directory.resolve())}
    up = set(running) == set(COMPONENTS)
    if not quiet:
        print(", ".join(f"{name} {'running' if name in running else 'stopped'}" for name in COMPONENTS))
    return up


def stop(directory: Path) -> None:
    directory = directory.resolve()
    pids = [pid for pid in read_pids(directory).values() if ours(pid, directory)]
    for pid in reversed(pids):
        os.kill(pid, signal.SIGTERM)
    # A short grace: the API server's graceful shutdown waits for watches, which tests need not keep.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(ours(pid, directory) for pid in pids):
        time.sleep(0.2)
    for pid in pids:
        if ours(pid, directory):
            os.kill(pid, signal.SIGKILL)  # kube-apiserver can linger in its graceful shutdown
    (directory / "pids").unlink(missing_ok=True)


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] not in ("start", "stop", "status"):
        sys.exit("usage: control-plane start|stop|status DIR")
    action, directory = argv[0], Path(argv[1])
    if action == "start":
        directory.mkdir(parents=True, exist_ok=True)
        start(directory)
    elif action == "stop":
        stop(directory)
    else:
        sys.exit(0 if status(directory) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
