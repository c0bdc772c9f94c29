# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RKE2 stand-in's node passwords against a real API server (tests/harness/control_plane.py): the Secret
<node>.node-password.rke2 made at a node's first request, another host under that name refused with 403 through
the supervisor port (which the agent reports as RKE2 does and retries), and let in once the Secret is deleted,
as playbooks/replace_node.yml does."""

import base64
import ssl
import urllib.error
import urllib.request

import pytest
from ansible_collections.gpuops.cluster.tests.harness import control_plane  # puts the RKE2 stand-in on sys.path
from stand_in import join, node_password, paths, pki, supervisor
from stand_in.kubeapi import Client

TOKEN = "K10::server:stand-in-secret"


def test_secret_names_and_hashes():
    assert node_password.secret_name("GPU-07") == "gpu-07.node-password.rke2"
    hashed = node_password.hash_password("s3cret")
    assert "s3cret" not in hashed
    assert node_password.matches(hashed, "s3cret")
    assert not node_password.matches(hashed, "other")
    assert not node_password.matches("md5$00$00", "s3cret")


def test_a_node_keeps_its_password(tmp_path):
    path = tmp_path / "etc/rancher/node/password"
    first = node_password.local_password(path)
    assert len(first) == 32
    assert path.stat().st_mode & 0o777 == 0o600
    assert node_password.local_password(path) == first


@pytest.fixture(scope="module")
def admin(own_control_plane):
    """An admin client of the module's control plane."""
    files = own_control_plane["files"]
    return Client(own_control_plane["url"], files["ca.crt"], files["admin.crt"], files["admin.key"])


def _delete_secret(client, node):
    try:
        client.request("DELETE", f"/api/v1/namespaces/kube-system/secrets/{node_password.secret_name(node)}")
    except urllib.error.HTTPError as error:
        assert error.code == 404


def test_the_first_request_makes_the_secret_and_another_password_is_refused(admin):
    node_password.ensure(admin, "gpu-07", "first-host")
    secret = admin.get("/api/v1/namespaces/kube-system/secrets/gpu-07.node-password.rke2")
    assert secret["type"] == "rke2.cattle.io/node-password"
    assert secret["immutable"] is True
    assert set(secret["data"]) == {"hash"}
    node_password.ensure(admin, "gpu-07", "first-host")  # the same host again, after a restart
    with pytest.raises(node_password.Rejected, match="gpu-07"):
        node_password.ensure(admin, "gpu-07", "new-host")
    _delete_secret(admin, "gpu-07")
    node_password.ensure(admin, "gpu-07", "new-host")
    with pytest.raises(node_password.Rejected):
        node_password.ensure(admin, "gpu-07", "first-host")
    _delete_secret(admin, "gpu-07")


@pytest.fixture
def supervisor_url(admin, tmp_path, monkeypatch):
    """The stand-in's supervisor on a free port with a serving certificate of its own, checking node passwords
    against the control plane's Secrets as the first server does."""
    monkeypatch.setattr(paths, "TLS_DIR", tmp_path / "tls")
    ca = pki.ensure_ca(paths.TLS_DIR)
    pki.issue(
        ca,
        paths.TLS_DIR / "serving-kube-apiserver.crt",
        paths.TLS_DIR / "serving-kube-apiserver.key",
        "/CN=kube-apiserver",
        sans=["127.0.0.1"],
    )
    port = control_plane.free_port()
    httpd = supervisor.serve(
        "stand-in-secret",
        lambda node: ca[0].read_bytes() + ca[0].read_bytes(),
        dict,
        lambda node, password: node_password.ensure(admin, node, password),
        port=port,
    )
    yield f"https://127.0.0.1:{port}"
    httpd.shutdown()
    _delete_secret(admin, "gpu-08")


def _context():
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def test_a_new_host_under_a_known_name_is_refused_until_the_secret_is_gone(
    admin, supervisor_url, tmp_path, monkeypatch
):
    url = supervisor_url + "/v1-rke2/client-kubelet.crt"
    monkeypatch.setattr(paths, "NODE_PASSWORD", tmp_path / "old-host/password")
    assert join.fetch(url, TOKEN, "gpu-08", _context()).startswith(b"-----BEGIN")
    # The old host again: its password file is kept (a restart, an upgrade).
    assert join.fetch(url, TOKEN, "gpu-08", _context()).startswith(b"-----BEGIN")
    # A new host under the same name makes a password of its own.
    monkeypatch.setattr(paths, "NODE_PASSWORD", tmp_path / "new-host/password")
    with pytest.raises(ValueError, match="Node password rejected, duplicate hostname"):
        join.fetch(url, TOKEN, "gpu-08", _context())
    _delete_secret(admin, "gpu-08")
    assert join.fetch(url, TOKEN, "gpu-08", _context()).startswith(b"-----BEGIN")


def test_the_supervisor_needs_a_node_password(supervisor_url):
    request = urllib.request.Request(supervisor_url + "/v1-rke2/client-kubelet.crt")
    request.add_header("Authorization", "Basic " + base64.b64encode(f"node:{TOKEN}".encode()).decode())
    request.add_header("RKE2-Node-Name", "gpu-08")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=_context(), timeout=10)
    assert refused.value.code == 400
