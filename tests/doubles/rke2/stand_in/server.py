# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`rke2 server` on the first server: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
the supervisor port, then the node itself (containerd and the kubelet), as RKE2 does."""

import hashlib
import os
import secrets
import socket
import tempfile
from pathlib import Path

from stand_in import component_args, config, node, node_password, paths, pki, supervisor
from stand_in.kubeapi import Client
from stand_in.processes import Children, log, notify_ready, wait_until

TLS = paths.TLS_DIR
CA = (TLS / "server-ca.crt", TLS / "server-ca.key")
ADMIN = (TLS / "client-admin.crt", TLS / "client-admin.key")
SERVING = (TLS / "serving-kube-apiserver.crt", TLS / "serving-kube-apiserver.key")
SA_KEY = TLS / "service.key"
ADMIN_FILE_KUBECONFIG = paths.SERVER_DIR / "cred" / "admin.kubeconfig"
# RKE2's scheduler identity (k3s pkg/daemons/control/deps/deps.go: cred/scheduler.kubeconfig, a client
# certificate of system:kube-scheduler, which Kubernetes' bootstrap RBAC grants what the scheduler needs).
SCHEDULER = (TLS / "client-scheduler.crt", TLS / "client-scheduler.key")
SCHEDULER_KUBECONFIG = paths.SERVER_DIR / "cred" / "scheduler.kubeconfig"
SERVER_NODE_LABELS = (
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/etcd",
    "node-role.kubernetes.io/master",
)


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Writes atomically with the mode set before the content is visible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.chmod(scratch, mode)
    os.replace(scratch, path)


def cluster_secret(settings: dict) -> str:
    """token from config.yaml, else the one of an earlier start, else a new one (once)."""
    if settings.get("token"):
        return supervisor.parse_token(settings["token"])[1]
    if paths.NODE_TOKEN.exists():
        return supervisor.parse_token(paths.NODE_TOKEN.read_text().strip())[1]
    return secrets.token_hex(16)


def node_token(secret: str) -> str:
    """K10<sha256 of the CA bundle>::server:<secret>, RKE2's full server token."""
    return f"K10{hashlib.sha256(CA[0].read_bytes()).hexdigest()}::server:{secret}"


def prepare_pki(settings: dict, address: str) -> None:
    pki.ensure_ca(TLS)
    pki.ensure_signing_key(SA_KEY)
    if not ADMIN[0].exists():
        pki.issue(CA, *ADMIN, "/O=system:masters/CN=system:admin", client=True)
    # Reissued at every start, so that a changed tls-san takes effect.
    sans = ["127.0.0.1", "localhost", address, socket.gethostname(), node.node_name(settings), "10.43.0.1",
            "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
            *config.as_list(settings, "tls-san")]  # fmt: skip
    pki.issue(CA, *SERVING, "/CN=kube-apiserver", sans=sans)
    write_private(ADMIN_FILE_KUBECONFIG, pki.kubeconfig(f"https://127.0.0.1:{paths.API_PORT}", CA[0], *ADMIN))
    if not SCHEDULER[0].exists():
        pki.issue(CA, *SCHEDULER, "/CN=system:kube-scheduler", client=True)
    write_private(SCHEDULER_KUBECONFIG, pki.kubeconfig(f"https://127.0.0.1:{paths.API_PORT}", CA[0], *SCHEDULER))


def issue_kubelet_credentials(name: str) -> bytes:
    """A client certificate for system:node:NAME (the Node authorizer's identity of a kubelet)."""
    with tempfile.TemporaryDirectory() as scratch:
        crt, key = Path(scratch) / "kubelet.crt", Path(scratch) / "kubelet.key"
        pki.issue(CA, crt, key, f"/O=system:nodes/CN=system:node:{name}", client=True)
        return crt.read_bytes() + key.read_bytes()


def server_bootstrap() -> dict:
    """What a joining server needs to reach the control plane as an administrator."""
    return {name: path.read_text() for name, path in (("ca", CA[0]), ("crt", ADMIN[0]), ("key", ADMIN[1]))}


def flags(settings: dict) -> list[str]:
    """["--name=value", ...] in the order given."""
    return [f"--{name}={value}" for name, value in settings.items()]


def scheduler_argv(kube: str, settings: dict, kubeconfig: Path = SCHEDULER_KUBECONFIG) -> list[str]:
    """kube-scheduler's command line: RKE2's flags (k3s pkg/daemons/control/server.go, scheduler()) with
    kube-scheduler-arg of the config applied as RKE2 applies them. Unlike RKE2 it serves no secure port
    and elects no leader unless kube-scheduler-arg says so (one scheduler per test cluster; the leader
    election flag, when given, still wins over a --config file, as in kube-scheduler)."""
    defaults = {
        "kubeconfig": kubeconfig,
        "authentication-kubeconfig": kubeconfig,
        "authorization-kubeconfig": kubeconfig,
        "bind-address": "127.0.0.1",
        "secure-port": 0,
        "profiling": "false",
        "leader-elect": "false",
    }
    # kube-scheduler-extra-mount is read and ignored: the stand-in runs kube-scheduler on the host,
    # where every file is visible.
    return [kube, "kube-scheduler", *component_args.get_args(defaults, config.as_list(settings, "kube-scheduler-arg"))]


def start_control_plane(children: Children, address: str, settings: dict) -> None:
    logs, kube = paths.SERVER_LOGS, str(paths.KUBE_MULTI)
    etcd = {
        "data-dir": paths.SERVER_DIR / "db" / "etcd",
        "listen-client-urls": "http://127.0.0.1:2379",
        "advertise-client-urls": "http://127.0.0.1:2379",
        "listen-peer-urls": "http://127.0.0.1:2380",
        "initial-advertise-peer-urls": "http://127.0.0.1:2380",
        "initial-cluster": "default=http://127.0.0.1:2380",
    }
    children.start("etcd", [kube, "etcd", *flags(etcd)], logs / "etcd.log")
    apiserver = {
        "etcd-servers": "http://127.0.0.1:2379",
        "bind-address": "0.0.0.0",
        "advertise-address": address,
        "secure-port": paths.API_PORT,
        "tls-cert-file": SERVING[0],
        "tls-private-key-file": SERVING[1],
        "client-ca-file": CA[0],
        "authorization-mode": "Node,RBAC",
        "anonymous-auth": "false",
        "allow-privileged": "true",
        "enable-admission-plugins": "NodeRestriction",
        "kubelet-client-certificate": ADMIN[0],
        "kubelet-client-key": ADMIN[1],
        "service-account-issuer": "https://kubernetes.default.svc.cluster.local",
        "service-account-key-file": SA_KEY,
        "service-account-signing-key-file": SA_KEY,
        "service-cluster-ip-range": paths.SERVICE_CIDR,
        "cert-dir": TLS / "temporary-certs",
    }
    # kube-apiserver-arg and kube-controller-manager-arg applied as RKE2 applies them (feature gates, say).
    apiserver_argv = component_args.get_args(apiserver, config.as_list(settings, "kube-apiserver-arg"))
    children.start("kube-apiserver", [kube, "kube-apiserver", *apiserver_argv], logs / "kube-apiserver.log")
    client = Client(f"https://127.0.0.1:{paths.API_PORT}", CA[0], *ADMIN)
    wait_until(lambda: (children.check(), client.get("/readyz") == "ok")[1], "kube-apiserver", timeout=120)
    admin = ADMIN_FILE_KUBECONFIG
    common = {
        "kubeconfig": admin,
        "authentication-kubeconfig": admin,
        "authorization-kubeconfig": admin,
        "bind-address": "127.0.0.1",
        "secure-port": 0,
        "leader-elect": "false",
    }
    controller_manager = common | {
        "service-account-private-key-file": SA_KEY,
        "root-ca-file": CA[0],
        "cluster-signing-cert-file": CA[0],
        "cluster-signing-key-file": CA[1],
        "use-service-account-credentials": "true",
        "controllers": "*",
    }
    extra = config.as_list(settings, "kube-controller-manager-arg")
    argv = [kube, "kube-controller-manager", *component_args.get_args(controller_manager, extra)]
    children.start("kube-controller-manager", argv, logs / "kube-controller-manager.log")
    children.start("kube-scheduler", scheduler_argv(kube, settings), logs / "kube-scheduler.log")


def write_kubelet_credentials(server: str, ca_pem: bytes, credentials: bytes) -> None:
    agent = paths.AGENT_DIR
    agent.mkdir(parents=True, exist_ok=True)
    split = credentials.index(b"-----BEGIN", 1)
    (agent / "server-ca.crt").write_bytes(ca_pem)
    write_private(agent / "client-kubelet.crt", credentials[:split].decode())
    write_private(agent / "client-kubelet.key", credentials[split:].decode())
    config_text = pki.kubeconfig(
        server, agent / "server-ca.crt", agent / "client-kubelet.crt", agent / "client-kubelet.key"
    )
    write_private(paths.KUBELET_KUBECONFIG, config_text)


def kubeconfig_mode(settings: dict) -> int:
    return int(str(settings.get("write-kubeconfig-mode") or "0600"), 8)


def run(settings: dict) -> None:
    address = node.node_ip(settings)
    secret = cluster_secret(settings)
    prepare_pki(settings, address)
    write_private(paths.NODE_TOKEN, node_token(secret) + "\n")
    children = Children()
    start_control_plane(children, address, settings)
    local = f"https://127.0.0.1:{paths.API_PORT}"
    admin = Client(local, CA[0], *ADMIN)
    supervisor.serve(
        secret,
        issue_kubelet_credentials,
        server_bootstrap,
        lambda node_name, password: node_password.ensure(admin, node_name, password),
    )
    log(f"supervisor listening on port {paths.SUPERVISOR_PORT}")
    write_private(paths.ADMIN_KUBECONFIG, pki.kubeconfig(f"https://127.0.0.1:{paths.API_PORT}", CA[0], *ADMIN),
                  kubeconfig_mode(settings))  # fmt: skip
    name = node.node_name(settings)
    # The server's own node has a password Secret too; RKE2 checks it once its API answers and only reports a
    # mismatch there (k3s pkg/nodepassword/validate.go verifyLocalPassword, ensureSecret).
    try:
        node_password.ensure(admin, name, node_password.local_password())
    except node_password.Rejected as error:
        log(f"Deferred node password secret validation failed: {error}")
    write_kubelet_credentials(local, CA[0].read_bytes(), issue_kubelet_credentials(name))
    node.run(children, settings, admin)
    admin.merge_patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": dict.fromkeys(SERVER_NODE_LABELS, "true")}})
    notify_ready()
    children.supervise()
