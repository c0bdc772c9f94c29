# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kube-scheduler configuration the rke2 role writes, run by a real kube-scheduler (the test bed's kube-multi).

The file is rendered as the role renders it (filter rke2_scheduler_config, to_nice_yaml); kube-scheduler
gets its flags as the RKE2 stand-in builds them from config.yaml and the role's config.yaml.d drop-in.
Against a real control plane (tests/harness/control_plane.py) it must serve healthz, call the extender
for a pod asking for the extender's resource and bind that pod where the extender allows; a file that
kube-scheduler refuses must also be refused by the role's check.
"""

import contextlib
import json
import ssl
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from ansible.plugins.filter.core import to_nice_yaml
from ansible_collections.gpuops.cluster.plugins.filter.rke2_scheduler import rke2_scheduler_settings
from ansible_collections.gpuops.cluster.plugins.plugin_utils import rke2_scheduler
from ansible_collections.gpuops.cluster.tests.harness import control_plane  # puts the RKE2 stand-in on sys.path
from stand_in import config as rke2_config  # the RKE2 stand-in's config.yaml reader
from stand_in import pki, server

REPO_ROOT = Path(__file__).resolve().parents[3]
RESOURCE = "example.com/gpu-mem"


@pytest.fixture(scope="module")
def cluster(own_control_plane):
    """The module's control plane, with a system:kube-scheduler kubeconfig as RKE2 gives its scheduler."""
    directory, files = own_control_plane["dir"], own_control_plane["files"]
    crt, key = directory / "pki/scheduler.crt", directory / "pki/scheduler.key"
    pki.issue((files["ca.crt"], files["ca.key"]), crt, key, "/CN=system:kube-scheduler", client=True)
    kubeconfig = directory / "scheduler.kubeconfig"
    kubeconfig.write_text(pki.kubeconfig(own_control_plane["url"], files["ca.crt"], crt, key))
    return {"dir": directory, "files": files, "scheduler_kubeconfig": kubeconfig}


class Extender:
    """An extender's filter endpoint that records each call and lets every node through."""

    def __init__(self):
        self.calls = []
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                calls.append((self.path, body))
                answer = json.dumps({"NodeNames": body.get("NodeNames") or [], "FailedNodes": {}, "Error": ""})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(answer.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/test-extender"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _write_config(directory, extenders, kubeconfig):
    """The file as the role writes it: the filter's document through to_nice_yaml."""
    path = directory / "kube-scheduler" / "config.yaml"
    path.parent.mkdir(exist_ok=True)
    document = rke2_scheduler.scheduler_configuration(extenders, kubeconfig=str(kubeconfig))
    path.write_text(to_nice_yaml(document, indent=2, sort_keys=True))
    return path


def _argv(directory, config_file, kubeconfig, secure_port):
    """kube-scheduler's argv as the stand-in builds it from config.yaml plus the role's drop-in."""
    # config.yaml as a user could write it: v=3 makes kube-scheduler log the extenders it creates.
    base = rke2_config.parse(f"kube-scheduler-arg:\n  - secure-port={secure_port}\n  - v=3\n")
    drop_in = rke2_config.parse(to_nice_yaml(rke2_scheduler_settings(str(config_file)), indent=2, sort_keys=True))
    settings = rke2_config.merge(base, drop_in)
    return server.scheduler_argv(str(control_plane.kube_multi()), settings, kubeconfig=kubeconfig)


def _https_get(url):
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, context=context, timeout=2) as answer:
            return answer.read().decode()
    except OSError:
        return ""


def _api(cluster, method, path, body=None, content_type="application/json"):
    context = control_plane.ssl_context(cluster["files"])
    request = urllib.request.Request(
        f"https://127.0.0.1:{control_plane.API_PORT}{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Content-Type": content_type},
    )
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return json.loads(answer.read())


def _wait(what, check, process, log, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if process.poll() is not None:
            pytest.fail(f"kube-scheduler exited ({process.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"not {what} after {timeout} s; kube-scheduler's log:\n{log.read_text()[-3000:]}")


def test_kube_scheduler_runs_with_the_file_and_asks_the_extender(cluster):
    extender = Extender()
    entry = {
        "urlPrefix": extender.url,
        "filterVerb": "filter",
        "enableHTTPS": False,
        "nodeCacheCapable": True,
        # The test's Node does not advertise the resource: only a scheduler that reads this file, and so
        # leaves the resource's fit to the extender, can place the pod.
        "managedResources": [{"name": RESOURCE, "ignoredByScheduler": True}],
        "ignorable": False,
    }
    assert rke2_scheduler.extenders_problems([entry]) == []
    directory, port = cluster["dir"], control_plane.free_port()
    config_file = _write_config(directory, [entry], cluster["scheduler_kubeconfig"])
    argv = _argv(directory, config_file, cluster["scheduler_kubeconfig"], port)
    assert f"--config={config_file}" in argv and f"--secure-port={port}" in argv
    log = directory / "log" / "kube-scheduler-extender.log"
    with log.open("wb") as output:
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait("healthz ok", lambda: _https_get(f"https://127.0.0.1:{port}/healthz") == "ok", process, log)
        _api(cluster, "POST", "/api/v1/nodes", {"metadata": {"name": "extender-node"}})
        capacity = {"cpu": "4", "memory": "8Gi", "pods": "10"}
        _api(cluster, "PATCH", "/api/v1/nodes/extender-node/status",
             {"status": {"capacity": capacity, "allocatable": capacity}},
             "application/merge-patch+json")  # fmt: skip
        pod = {
            "metadata": {"name": "wants-gpu-mem", "namespace": "default"},
            "spec": {
                # The apiserver taints a new Node not-ready until a kubelet reports; this one has none.
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {"name": "c", "image": "localhost/busybox:stand-in", "resources": {"limits": {RESOURCE: "2"}}}
                ],
            },
        }
        _api(cluster, "POST", "/api/v1/namespaces/default/pods", pod)

        def bound():
            return _api(cluster, "GET", "/api/v1/namespaces/default/pods/wants-gpu-mem")["spec"].get("nodeName")

        try:
            _wait("the pod bound", lambda: bound() == "extender-node", process, log)
        except pytest.fail.Exception as error:
            status = _api(cluster, "GET", "/api/v1/namespaces/default/pods/wants-gpu-mem")["status"]
            pytest.fail(f"{error}\npod status: {status}\nextender calls: {extender.calls}")
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()
        extender.server.shutdown()
    text = log.read_text()
    assert f'"Creating extender" extender={{"URLPrefix":"{extender.url}"' in text
    assert f"kubeconfig: {cluster['scheduler_kubeconfig']}" in text  # clientConnection from the file
    assert "is forbidden" not in text  # RKE2's system:kube-scheduler identity is enough
    paths = [call[0] for call in extender.calls]
    assert "/test-extender/filter" in paths
    asked = [body for path, body in extender.calls if path.endswith("/filter")]
    assert asked[0]["Pod"]["metadata"]["name"] == "wants-gpu-mem"
    assert asked[0]["NodeNames"] == ["extender-node"]


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"prioritizeVerb": "prioritize", "weight": 0}, ("must have a positive weight",)),
        ({"urlprefix": "http://127.0.0.1:1/x"}, ("strict decoding error: unknown field", "extenders[0].urlprefix")),
    ],
)
def test_kube_scheduler_refuses_what_the_role_refuses(cluster, tmp_path, change, refusal):
    entry = {"urlPrefix": "http://127.0.0.1:1/x", "filterVerb": "filter", **change}
    assert rke2_scheduler.extenders_problems([entry]), "the role's check lets through what kube-scheduler refuses"
    config_file = _write_config(tmp_path, [entry], cluster["scheduler_kubeconfig"])
    argv = _argv(tmp_path, config_file, cluster["scheduler_kubeconfig"], control_plane.free_port())
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert all(part in result.stdout + result.stderr for part in refusal), result.stderr[-2000:]


def test_kube_scheduler_refuses_two_binders(cluster, tmp_path):
    entries = [{"urlPrefix": f"http://127.0.0.1:1/{name}", "bindVerb": "bind"} for name in ("a", "b")]
    assert any("bindVerb set on entries [0, 1]" in line for line in rke2_scheduler.extenders_problems(entries))
    config_file = _write_config(tmp_path, entries, cluster["scheduler_kubeconfig"])
    argv = _argv(tmp_path, config_file, cluster["scheduler_kubeconfig"], control_plane.free_port())
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert "only one extender can implement bind" in result.stdout + result.stderr


@pytest.mark.skipif(Path("/etc/kubernetes/scheduler.conf").exists(), reason="this machine has kubeadm's file")
def test_with_kubeadms_kubeconfig_the_scheduler_does_not_start(cluster, tmp_path):
    # gpushare's own file names kubeadm's scheduler.conf; --kubeconfig does not rescue it once --config is given.
    path = tmp_path / "kube-scheduler" / "config.yaml"
    path.parent.mkdir()
    document = rke2_scheduler.scheduler_configuration([], kubeconfig="/etc/kubernetes/scheduler.conf")
    path.write_text(to_nice_yaml(document, indent=2, sort_keys=True))
    argv = _argv(tmp_path, path, cluster["scheduler_kubeconfig"], control_plane.free_port())
    assert f"--kubeconfig={cluster['scheduler_kubeconfig']}" in argv
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert "/etc/kubernetes/scheduler.conf" in result.stderr
