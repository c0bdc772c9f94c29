# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""host_state: dpkg-query and systemctl show outputs recorded on a test bed host, read back; paths and commands
on this machine for real."""

import http.server
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.module_utils._host import system_state
from ansible_collections.gpuops.cluster.plugins.modules import host_state

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "debian-host"
DPKG = (FIXTURES / "dpkg-query.txt").read_text(encoding="utf-8")
UNITS = (FIXTURES / "systemctl-show.txt").read_text(encoding="utf-8")
UNIT_NAMES = ["systemd-journald.service", "rke2-agent.service", "nvidia-persistenced.service", "dbus.socket"]


class Exited(Exception):
    pass


def leave(module, **result):
    raise Exited(result)


def run_module(args, run_command=None):
    with (
        patch_module_args(args),
        patch.object(AnsibleModule, "exit_json", leave),
        patch.object(AnsibleModule, "fail_json", leave),
    ):
        if run_command is not None:
            with patch.object(AnsibleModule, "run_command", run_command), pytest.raises(Exited) as exited:
                host_state.main()
        else:
            with pytest.raises(Exited) as exited:
                host_state.main()
    return exited.value.args[0]


def test_dpkg_packages_installed_held_and_absent():
    names = ["nvidia-kernel-dkms", "nvidia-persistenced", "linux-headers-amd64", "libcuda1", "not-a-package"]
    packages = system_state.parse_packages("dpkg", names, DPKG)
    assert list(packages) == names
    assert packages["nvidia-kernel-dkms"] == {"installed": True, "version": "535.309.01-0+deb12u1", "held": True}
    # Known to dpkg, not installed: "un".
    assert packages["linux-headers-amd64"] == {"installed": False, "version": "", "held": False}
    assert packages["not-a-package"] == {"installed": False, "version": "", "held": False}


def test_a_package_with_only_its_configuration_left_is_not_installed():
    packages = system_state.parse_packages("dpkg", ["old"], "old\t1.0-1\trc \n")
    assert packages["old"] == {"installed": False, "version": "", "held": False}


def test_rpm_packages_have_a_version_and_no_hold():
    packages = system_state.parse_packages(
        "rpm", ["nvidia-container-toolkit", "gone"], "nvidia-container-toolkit\t1.18.1-1\n"
    )
    assert packages["nvidia-container-toolkit"] == {"installed": True, "version": "1.18.1-1", "held": None}
    assert packages["gone"] == {"installed": False, "version": "", "held": None}


def test_units_are_read_in_the_order_asked():
    units = system_state.parse_units(UNIT_NAMES, UNITS)
    assert units["systemd-journald.service"]["running"] is True
    assert units["rke2-agent.service"] == {
        "load_state": "not-found",
        "active_state": "inactive",
        "sub_state": "dead",
        "unit_file_state": "",
        "running": False,
    }
    assert units["dbus.socket"]["unit_file_state"] == "static"


def test_an_answer_for_fewer_units_than_asked_is_an_error():
    with pytest.raises(ValueError, match="answered 4 units for the 5 asked"):
        system_state.parse_units([*UNIT_NAMES, "ssh.service"], UNITS)


def test_paths(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    os.utime(script, (1000, 1000))
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    assert system_state.path_state(str(script), now=1060) == {
        "exists": True,
        "kind": "file",
        "link": False,
        "executable": True,
        "mode": "0755",
        "uid": os.getuid(),
        "gid": os.getgid(),
        "mtime": 1000,
        "age_s": 60,
        "checksum": None,
    }
    assert system_state.path_state(str(tmp_path))["kind"] == "directory"
    assert system_state.path_state(str(tmp_path / "dangling"))["kind"] == "link"
    assert system_state.path_state(str(tmp_path / "missing"))["exists"] is False


def test_checksums_are_those_of_ansible_file_modules(tmp_path):
    content = tmp_path / "pin"
    content.write_bytes(b"Package: x\nPin-Priority: 1001\n")
    read = system_state.path_state(str(content), checksum=True)["checksum"]
    # sha1sum's answer for the same bytes: the checksum ansible.builtin.stat and copy report.
    sha1sum = subprocess.run(["sha1sum", str(content)], capture_output=True, text=True, check=True)
    assert read == sha1sum.stdout.split()[0]
    assert system_state.path_state(str(content))["checksum"] is None
    # Only regular files have one.
    assert system_state.path_state(str(tmp_path), checksum=True)["checksum"] is None
    assert system_state.path_state(str(tmp_path / "missing"), checksum=True)["checksum"] is None


def test_checksum_hashes_every_path_or_only_those_listed(tmp_path):
    pin, binary = tmp_path / "pin", tmp_path / "binary"
    pin.write_bytes(b"Package: x\n")
    binary.write_bytes(b"\x7fELF")
    paths = [str(pin), str(binary)]

    def hashed(checksum):
        result = run_module({"paths": paths, "checksum": checksum})
        return sorted(path for path, state in result["paths"].items() if state["checksum"])

    assert hashed(True) == sorted(paths)
    assert hashed(False) == []
    assert hashed([str(pin)]) == [str(pin)]
    refused = run_module({"paths": paths, "checksum": [str(tmp_path / "other")]})
    assert refused["msg"] == f"host_state: checksum names paths that are not in paths: {tmp_path / 'other'}"
    assert run_module({"paths": paths, "checksum": "sometimes"})["msg"].startswith("host_state: checksum must be")


@pytest.fixture
def http_server():
    """A server on this machine that answers 200 on /InRelease and 404 elsewhere."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"signed index" if self.path == "/InRelease" else b"missing"
            self.send_response(200 if self.path == "/InRelease" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_urls_give_the_http_status_or_minus_one_where_nothing_answers(http_server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    result = run_module(
        {
            "urls": {
                "index": f"{http_server}/InRelease",
                "missing": f"{http_server}/nothing",
                "closed": f"http://127.0.0.1:{closed_port}/InRelease",
            },
            "url_timeout": 5,
        }
    )
    assert result["urls"]["index"]["status"] == 200
    assert result["urls"]["missing"]["status"] == 404
    assert result["urls"]["closed"]["status"] == -1 and "refused" in result["urls"]["closed"]["msg"].lower()
    assert result["urls"]["index"]["url"] == f"{http_server}/InRelease"


def test_a_url_that_is_not_http_or_a_timeout_below_one_is_refused():
    assert run_module({"urls": {"repo": "ftp://example.org/"}})["msg"] == (
        "host_state: urls.repo must be an http:// or https:// URL, got 'ftp://example.org/'"
    )
    assert run_module({"url_timeout": 0})["msg"].startswith("host_state: url_timeout must be")


def test_the_module_reads_this_machine_and_changes_nothing(tmp_path):
    result = run_module(
        {
            "paths": [str(tmp_path), str(tmp_path / "missing")],
            "commands": {"python": [sys.executable, "-c", "print('  aligned')"], "absent": ["gpuops-no-such-tool"]},
            "_ansible_check_mode": True,
        }
    )
    assert result["changed"] is False
    assert result["paths"][str(tmp_path)]["exists"] and not result["paths"][str(tmp_path / "missing")]["exists"]
    # Leading blanks kept (apt-cache madison aligns its columns with them), the line end cut.
    assert result["commands"]["python"]["stdout"] == "  aligned"
    assert result["commands"]["python"]["stdout_lines"] == ["  aligned"]
    assert result["commands"]["absent"]["rc"] == 127


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="no dpkg-query on this machine")
def test_the_module_reads_the_packages_of_this_machine():
    result = run_module({"packages": ["dpkg", "gpuops-no-such-package"]})
    assert result["packages"]["dpkg"]["installed"] and result["packages"]["dpkg"]["version"]
    assert result["packages"]["gpuops-no-such-package"]["installed"] is False


def test_the_module_asks_systemctl_once_for_every_unit():
    calls = []

    def run_command(module, argv, **kwargs):
        calls.append(argv)
        return 0, UNITS, ""

    with (
        patch.object(shutil, "which", return_value="/usr/bin/systemctl"),
        patch.object(os.path, "isdir", return_value=True),
    ):
        result = run_module({"units": UNIT_NAMES}, run_command)
    assert calls == [system_state.unit_query(UNIT_NAMES)]
    assert [name for name, unit in result["units"].items() if unit["running"]] == [
        "systemd-journald.service",
        "dbus.socket",
    ]


def test_a_command_that_is_not_an_argv_is_refused():
    result = run_module({"commands": {"bad": "rke2 --version"}})
    assert (
        result["msg"] == "host_state: commands.bad must be a non-empty list of strings (an argv), got 'rke2 --version'"
    )


@pytest.mark.parametrize(("systemctl", "booted"), [(None, True), ("/usr/bin/systemctl", False)])
def test_where_systemd_does_not_run_the_host_every_unit_is_not_running(systemctl, booted):
    with patch.object(shutil, "which", return_value=systemctl), patch.object(os.path, "isdir", return_value=booted):
        result = run_module({"units": ["rke2-server.service"]})
    assert result["units"]["rke2-server.service"] == {
        "load_state": "",
        "active_state": "",
        "sub_state": "",
        "unit_file_state": "",
        "running": False,
    }
