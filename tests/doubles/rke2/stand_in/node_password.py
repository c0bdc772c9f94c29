# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RKE2's node passwords: one node name, one machine.

What RKE2 does (k3s, which RKE2 builds on, with version.Program "rke2"):
- an agent keeps a random password in /etc/rancher/node/password, made at its first request, and sends it
  with its node name in the RKE2-Node-Password header when it asks for its kubelet certificates
  (k3s pkg/agent/config/config.go, getNodeNamedCrt and ensureNodePassword);
- the server keeps a hash of it in the Secret <node name>.node-password.rke2 of kube-system, created at the
  node's first request, of type rke2.cattle.io/node-password, immutable; a later request with another
  password is refused with 403, which the agent reports as "Node password rejected, duplicate hostname ..."
  and retries every 5 s (k3s pkg/nodepassword/nodepassword.go Ensure and getSecretName,
  pkg/nodepassword/validate.go GetNodeAuthValidator);
- rke2-uninstall.sh removes /etc/rancher/node (rancher/rke2 bundle/bin/rke2-uninstall.sh).
So a new host that joins under the name of a node whose Secret exists is refused until that Secret is gone.

Not played: the owner reference to the Node that k3s' node-password controller adds to the Secret
(pkg/nodepassword/controller.go onChangeNode), through which the garbage collector deletes it with its Node, and
that controller's cleanup of Secrets left without a Node for 10 minutes. Here the Secret outlives its Node, as in
RKE2 releases before that controller: whoever replaces a node deletes it. The hash is the stand-in's own
(scrypt, hashlib), not k3s' format.
"""

import base64
import hashlib
import hmac
import os
import secrets
import urllib.error

from stand_in import paths

NAMESPACE = "kube-system"
SECRET_TYPE = "rke2.cattle.io/node-password"
HEADER = "RKE2-Node-Password"
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


class Rejected(Exception):
    """The password differs from the one the node's Secret holds."""


def secret_name(node: str) -> str:
    """<node>.node-password.rke2, lower-cased as k3s names it."""
    return f"{node}.node-password.rke2".lower()


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def matches(hashed: str, password: str) -> bool:
    try:
        scheme, salt, digest = hashed.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    expected = hash_password(password, bytes.fromhex(salt)).rsplit("$", 1)[1]
    return hmac.compare_digest(expected, digest)


def local_password(path=None) -> str:
    """This node's password, made once (16 random bytes as hex, mode 0600), as an RKE2 agent keeps it."""
    path = path or paths.NODE_PASSWORD
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_hex(16)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(password + "\n")
    return password


def _secret(client, node: str):
    try:
        return client.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{secret_name(node)}")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def _verify(secret: dict, node: str, password: str) -> None:
    hashed = base64.b64decode((secret.get("data") or {}).get("hash", "")).decode()
    if not matches(hashed, password):
        raise Rejected(f"unable to verify password for node {node}: the password differs from {secret_name(node)}")


def ensure(client, node: str, password: str) -> None:
    """Checks PASSWORD against the node's Secret, creating the Secret at the node's first request; raises
    Rejected when it differs. CLIENT: a stand_in.kubeapi.Client with the right to read and create Secrets."""
    secret = _secret(client, node)
    if secret is None:
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret_name(node), "namespace": NAMESPACE},
            "type": SECRET_TYPE,
            "immutable": True,
            "data": {"hash": base64.b64encode(hash_password(password).encode()).decode()},
        }
        try:
            client.create(f"/api/v1/namespaces/{NAMESPACE}/secrets", body)
            return
        except urllib.error.HTTPError as error:
            if error.code != 409:  # another request of the same node created it first
                raise
        secret = _secret(client, node) or {}
    _verify(secret, node, password)
