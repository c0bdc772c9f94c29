# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The supervisor port 9345: where agents and joining servers get their credentials with the token.

As in RKE2, /cacerts is open (a joining node checks it against the hash in a K10 token) and the
rest needs HTTP basic auth with the token's secret; a wrong token gets 401. A kubelet certificate also
needs the node's password (RKE2-Node-Password): none gets 400, one that differs from the node's
password Secret 403 (node_password.py). The paths follow RKE2's /v1-rke2/... names; the payloads are
the stand-in's own (PEM, JSON).
"""

import base64
import hmac
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stand_in import node_password, paths
from stand_in.processes import log


def parse_token(token: str) -> tuple[str, str]:
    """(CA hash or '', secret) of `K10<hash>::<user>:<secret>` or of a bare secret."""
    if token.startswith("K10") and "::" in token:
        ca_hash, credentials = token[3:].split("::", 1)
        return ca_hash, credentials.split(":", 1)[-1]
    return "", token


def serve(
    secret: str, issue_kubelet_credentials, server_bootstrap, check_node_password, port: int = paths.SUPERVISOR_PORT
) -> ThreadingHTTPServer:
    """Serves on all addresses in a thread. issue_kubelet_credentials(node) -> PEM; server_bootstrap() -> dict;
    check_node_password(node, password) raises node_password.Rejected for a password the node's Secret refuses."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):
            log("supervisor: " + format % args)

        def _authorized(self) -> bool:
            header = self.headers.get("Authorization", "")
            if not header.startswith("Basic "):
                return False
            try:
                password = base64.b64decode(header[6:]).decode().partition(":")[2]
            except ValueError:
                return False
            return hmac.compare_digest(parse_token(password)[1].encode(), secret.encode())

        def _reply(self, status: int, body: bytes, content_type="text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/cacerts":
                return self._reply(200, (paths.TLS_DIR / "server-ca.crt").read_bytes())
            if self.path not in ("/v1-rke2/client-kubelet.crt", "/v1-rke2/server-bootstrap"):
                return self._reply(404, b"not found\n")
            if not self._authorized():
                return self._reply(401, b"Unauthorized\n")
            if self.path == "/v1-rke2/server-bootstrap":
                return self._reply(200, json.dumps(server_bootstrap()).encode(), "application/json")
            node = self.headers.get("RKE2-Node-Name", "")
            if not node:
                return self._reply(400, b"RKE2-Node-Name header missing\n")
            password = self.headers.get(node_password.HEADER, "")
            if not password:
                return self._reply(400, b"node password not set\n")
            try:
                check_node_password(node, password)
            except node_password.Rejected as error:
                log(f"supervisor: {error}")
                return self._reply(403, f"{error}\n".encode())
            except Exception as error:  # as k3s: a Secret that cannot be read or written does not stop the node
                log(f"supervisor: node password of {node} not checked: {error!r}")
            return self._reply(200, issue_kubelet_credentials(node))

    httpd = ThreadingHTTPServer(("", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(
        str(paths.TLS_DIR / "serving-kube-apiserver.crt"), str(paths.TLS_DIR / "serving-kube-apiserver.key")
    )
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
