# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`rke2 agent`, and `rke2 server` with `server:` set: join through the supervisor port with the token.

A joining server does not start a control plane of its own (no etcd member, no apiserver): it runs
as a node and forwards its port 6443 to the first server's, so its rke2.yaml
(https://127.0.0.1:6443) reaches the cluster as a real server's would.
"""

import base64
import hashlib
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from stand_in import node, node_password, paths, server, supervisor
from stand_in.kubeapi import Client
from stand_in.processes import Children, log, notify_ready


def _insecure_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def fetch(url: str, token: str, node_name: str, context: ssl.SSLContext) -> bytes:
    """GET URL as node NODE_NAME with the token and the node's password; a refused password raises ValueError
    with RKE2's message (k3s pkg/agent/config/config.go getNodeNamedCrt), which bootstrap() retries."""
    request = urllib.request.Request(url)
    request.add_header("Authorization", "Basic " + base64.b64encode(f"node:{token}".encode()).decode())
    request.add_header("RKE2-Node-Name", node_name)
    request.add_header(node_password.HEADER, node_password.local_password())
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.read()
    except urllib.error.HTTPError as error:
        if error.code == 403:
            raise ValueError(
                f"Node password rejected, duplicate hostname or contents of '{paths.NODE_PASSWORD}' may not "
                "match server node-passwd entry"
            ) from error
        raise


def bootstrap(settings: dict, path: str) -> tuple[bytes, bytes, str]:
    """(CA PEM, answer of PATH, API URL); retries until the server answers and accepts the token, as RKE2 does."""
    supervisor_url = settings.get("server", "").rstrip("/")
    token = settings.get("token") or settings.get("agent-token") or ""
    if not supervisor_url or not token:
        raise SystemExit("rke2: --server and --token are required to join a cluster")
    ca_hash, _secret = supervisor.parse_token(token)
    host = urllib.parse.urlsplit(supervisor_url).hostname
    while True:
        try:
            with urllib.request.urlopen(f"{supervisor_url}/cacerts", context=_insecure_context(), timeout=10) as answer:
                ca_pem = answer.read()
            if ca_hash and hashlib.sha256(ca_pem).hexdigest() != ca_hash:
                raise ValueError("the server's CA does not match the hash in the token")
            context = ssl.create_default_context(cadata=ca_pem.decode())
            context.check_hostname = False  # the server may be named by an address outside its tls-san
            reply = fetch(supervisor_url + path, token, node.node_name(settings), context)
            return ca_pem, reply, f"https://{host}:{paths.API_PORT}"
        except (OSError, ValueError, urllib.error.URLError) as error:
            log(f"Waiting to retrieve agent configuration; server is not ready: {error}")
            time.sleep(5)


def forward_api_port(target_host: str) -> None:
    """Forwards TCP port 6443 on all addresses to the first server's apiserver."""
    listener = socket.create_server(("", paths.API_PORT), reuse_port=True)

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            sink.close()
            source.close()

    def accept() -> None:
        while True:
            client, _address = listener.accept()
            try:
                upstream = socket.create_connection((target_host, paths.API_PORT), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def write_ca(ca_pem: bytes) -> None:
    paths.TLS_DIR.mkdir(parents=True, exist_ok=True)
    (paths.TLS_DIR / "server-ca.crt").write_bytes(ca_pem)


def run_agent(settings: dict) -> None:
    ca_pem, credentials, api = bootstrap(settings, "/v1-rke2/client-kubelet.crt")
    server.write_kubelet_credentials(api, ca_pem, credentials)
    agent = paths.AGENT_DIR
    kubelet = Client(api, agent / "server-ca.crt", agent / "client-kubelet.crt", agent / "client-kubelet.key")
    children = Children()
    node.run(children, settings, kubelet)
    notify_ready()
    children.supervise()


def run_joining_server(settings: dict) -> None:
    ca_pem, answer, api = bootstrap(settings, "/v1-rke2/server-bootstrap")
    admin_files = json.loads(answer)
    write_ca(ca_pem)
    for name in ("crt", "key"):
        server.write_private(paths.TLS_DIR / f"client-admin.{name}", admin_files[name])
    ca, crt, key = (
        paths.TLS_DIR / "server-ca.crt",
        paths.TLS_DIR / "client-admin.crt",
        paths.TLS_DIR / "client-admin.key",
    )
    server.write_private(paths.NODE_TOKEN, server.node_token(supervisor.parse_token(settings["token"])[1]) + "\n")
    forward_api_port(urllib.parse.urlsplit(api).hostname)
    local = f"https://127.0.0.1:{paths.API_PORT}"
    server.write_private(
        paths.ADMIN_KUBECONFIG, server.pki.kubeconfig(local, ca, crt, key), server.kubeconfig_mode(settings)
    )
    name = node.node_name(settings)
    credentials = bootstrap(settings, "/v1-rke2/client-kubelet.crt")[1]
    server.write_kubelet_credentials(local, ca_pem, credentials)
    admin = Client(local, ca, crt, key)
    children = Children()
    node.run(children, settings, admin)
    admin.merge_patch(
        f"/api/v1/nodes/{name}", {"metadata": {"labels": dict.fromkeys(server.SERVER_NODE_LABELS, "true")}}
    )
    notify_ready()
    children.supervise()
