# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_container_toolkit_first_read: what the toolkit role's first read of a host decides. A host is as wanted (the
role ends there) only where every file, the packages, the runtime and the CDI refresh are as wanted and no check of
checks.yml would stop the role; the reads are shaped as gpuops.cluster.host_state returns them."""

import copy
import hashlib

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_container_toolkit import (
    nvidia_container_toolkit_cdi_state,
    nvidia_container_toolkit_first_read,
    nvidia_container_toolkit_installed,
)

VERSION = "1.18.1-1"
PACKAGES = [
    "nvidia-container-toolkit",
    "nvidia-container-toolkit-base",
    "libnvidia-container-tools",
    "libnvidia-container1",
]
KEY, SOURCE, PIN = (
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\n",
    "Types: deb\nEnabled: yes\n",
    "Package: nvidia-container-toolkit\n",
)
FILES = {
    "folder": {"path": "/etc/apt/keyrings", "kind": "directory", "mode": "0755"},
    "key": {"path": "/etc/apt/keyrings/nvidia-container-toolkit.asc", "kind": "file", "content": KEY, "mode": "0644"},
    "source": {
        "path": "/etc/apt/sources.list.d/nvidia-container-toolkit.sources",
        "kind": "file",
        "content": SOURCE,
        "mode": "0644",
    },
    "pin": {
        "path": "/etc/apt/preferences.d/nvidia-container-toolkit.pref",
        "kind": "file",
        "content": PIN,
        "mode": "0644",
    },
    "legacy": ["/etc/apt/sources.list.d/nvidia-container-toolkit.list"],
}
CDI = {
    "enabled": True,
    "units": ["nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service"],
    "files": [
        "/lib/modules/6.1.0/modules.dep",
        "/usr/bin/nvidia-ctk",
        "/var/run/cdi/nvidia.yaml",
        "/usr/bin/nvidia-smi",
        "/usr/sbin/nvidia-smi",
    ],
    "modules_dep": "/lib/modules/6.1.0/modules.dep",
    "spec": "/var/run/cdi/nvidia.yaml",
    "old_spec": "/etc/cdi/nvidia.yaml",
}
URL = "http://127.0.0.1:9/libnvidia-container/stable"


def written(content=None, kind="file", mode="0644"):
    state = {"exists": True, "kind": kind, "mode": mode, "uid": 0, "gid": 0, "mtime": 100}
    if content is not None:
        state["checksum"] = hashlib.sha1(content.encode()).hexdigest()
    return state


def converged_read():
    """A Debian host with the toolkit at VERSION, its files as the role writes them and a current CDI specification."""
    unit = {"load_state": "loaded", "unit_file_state": "enabled", "active_state": "active"}
    return {
        "packages": {name: {"installed": True, "version": VERSION} for name in PACKAGES},
        "paths": {
            "/etc/apt/keyrings": written(kind="directory", mode="0755"),
            FILES["key"]["path"]: written(KEY),
            FILES["source"]["path"]: written(SOURCE),
            FILES["pin"]["path"]: written(PIN),
            FILES["legacy"][0]: {"exists": False},
            "/usr/bin/nvidia-container-runtime": written(),
            "/lib/modules/6.1.0/modules.dep": {"exists": True, "mtime": 50},
            "/usr/bin/nvidia-ctk": {"exists": True, "mtime": 60},
            "/var/run/cdi/nvidia.yaml": {"exists": True, "mtime": 70},
            "/usr/bin/nvidia-smi": {"exists": True, "mtime": 10},
            "/usr/sbin/nvidia-smi": {"exists": False},
            "/etc/cdi/nvidia.yaml": {"exists": False},
        },
        "units": {name: dict(unit) for name in CDI["units"]},
        "commands": {"module_listed": {"rc": 0}},
        "urls": {"repository": {"url": f"{URL}/deb/amd64/InRelease", "status": 200, "msg": "OK"}},
    }


def wanted(**more):
    return {
        "version": VERSION,
        "packages": PACKAGES,
        "package_manager": "apt",
        "reachable": True,
        "probe_url": f"{URL}/deb/amd64/InRelease",
        "repo_base": URL,
        "repo_required": False,
        "apt_files": FILES,
        "runtime": "none",
        "runtime_binary": "/usr/bin/nvidia-container-runtime",
        "runtime_state": "not managed",
        "cdi": CDI,
        **more,
    }


def test_a_converged_host_is_as_wanted_and_reports_its_status():
    decided = nvidia_container_toolkit_first_read(converged_read(), wanted())
    assert decided["as_wanted"] is True
    assert decided["repo_todo"] == {"folder": False, "key": False, "source": False, "pin": False, "legacy": []}
    assert decided["host_problem"] == ""
    assert decided["install_changed"] is False
    assert decided["status"] == {
        "repository_url": URL,
        "repository_reachable": True,
        "repository_error": "",
        "version_wanted": VERSION,
        "version_installed": VERSION,
        "installed": True,
        "runtime": "none",
        "runtime_state": "not managed",
        "cdi_state": "up to date: /var/run/cdi/nvidia.yaml",
    }


def change(read, path, value):
    read = copy.deepcopy(read)
    target = read
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return read


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("paths", FILES["source"]["path"]), written("Types: deb\nEnabled: no\n")),
        (("paths", FILES["key"]["path"]), {"exists": False}),
        (("paths", "/etc/apt/keyrings"), written(kind="directory", mode="0700")),
        (("paths", FILES["legacy"][0]), written("deb https://example/ /\n")),
        (("packages", "libnvidia-container1"), {"installed": True, "version": "1.17.8-1"}),
        (("units", "nvidia-cdi-refresh.service", "unit_file_state"), "disabled"),
        (("units", "nvidia-cdi-refresh.path", "active_state"), "inactive"),
        (("paths", "/var/run/cdi/nvidia.yaml"), {"exists": True, "mtime": 40}),
        (("paths", "/etc/cdi/nvidia.yaml"), written("cdiVersion: 0.5.0\n")),
    ],
    ids=[
        "source",
        "key",
        "folder-mode",
        "legacy-source",
        "package-version",
        "unit-disabled",
        "path-inactive",
        "stale-spec",
        "old-spec",
    ],
)
def test_anything_not_as_wanted_keeps_the_role_going(path, value):
    assert nvidia_container_toolkit_first_read(change(converged_read(), path, value), wanted())["as_wanted"] is False


def test_an_unreachable_repository_is_as_wanted_unless_required():
    read = change(converged_read(), ("packages", "nvidia-container-toolkit"), {"installed": False, "version": ""})
    unreachable = wanted(reachable=False)
    decided = nvidia_container_toolkit_first_read(read, unreachable)
    assert decided["as_wanted"] is True
    assert decided["repo_error"] == f"{URL}/deb/amd64/InRelease: OK"
    decided = nvidia_container_toolkit_first_read(read, wanted(reachable=False, repo_required=True))
    assert decided["as_wanted"] is False
    assert decided["host_problem"].startswith(f"NVIDIA repository unreachable ({URL}/deb/amd64/InRelease: OK) and")
    assert decided["status"]["installed"] is False


def test_a_missing_engine_is_the_first_problem():
    read = change(
        converged_read(), ("commands", "engine"), {"cmd": ["containerd", "--version"], "rc": 127, "stderr": "not found"}
    )
    decided = nvidia_container_toolkit_first_read(
        read, wanted(runtime="containerd", reachable=False, repo_required=True)
    )
    assert decided["host_problem"] == (
        "nvidia_container_toolkit_runtime is containerd but containerd is not installed (not found). Install it first, "
        "or set nvidia_container_toolkit_runtime to containerd, docker, rke2 or none."
    )
    assert decided["as_wanted"] is False


@pytest.mark.parametrize(
    ("runtime", "present", "as_wanted"), [("rke2", True, True), ("rke2", False, False), ("containerd", True, False)]
)
def test_only_a_runtime_the_role_writes_nothing_for_can_be_as_wanted(runtime, present, as_wanted):
    read = change(
        converged_read(), ("paths", "/usr/bin/nvidia-container-runtime"), written() if present else {"exists": False}
    )
    assert nvidia_container_toolkit_first_read(read, wanted(runtime=runtime))["as_wanted"] is as_wanted


def test_without_cdi_and_on_dnf():
    read = change(converged_read(), ("paths", "/var/run/cdi/nvidia.yaml"), {"exists": False})
    decided = nvidia_container_toolkit_first_read(read, wanted(cdi={**CDI, "enabled": False}))
    assert decided["as_wanted"] is True
    assert decided["cdi_state"] == {}
    assert decided["status"]["cdi_state"] == "not managed (nvidia_container_toolkit_cdi_enabled is false)"
    decided = nvidia_container_toolkit_first_read(converged_read(), wanted(package_manager="dnf", apt_files={}))
    assert decided["repo_todo"] == {}
    assert decided["as_wanted"] is False


def test_the_cdi_units_to_enable_where_installed():
    read = change(
        converged_read(),
        ("units", "nvidia-cdi-refresh.path"),
        {"load_state": "loaded", "unit_file_state": "disabled", "active_state": "inactive"},
    )
    assert nvidia_container_toolkit_cdi_state(read, CDI)["to_enable"] == ["nvidia-cdi-refresh.path"]
    missing = {"load_state": "not-found", "unit_file_state": "", "active_state": "inactive"}
    read = change(read, ("units",), {name: missing for name in CDI["units"]})
    assert nvidia_container_toolkit_cdi_state(read, CDI)["to_enable"] == []


def test_the_installed_version_is_the_toolkit_packages_one():
    read = change(converged_read(), ("packages", "libnvidia-container1"), {"installed": True, "version": "1.17.8-1"})
    assert nvidia_container_toolkit_installed(read, VERSION, PACKAGES) == {
        "installed_version": VERSION,
        "at_version": False,
    }


def test_a_skipped_read_is_refused():
    with pytest.raises(AnsibleFilterError, match=r"expects a read of gpuops\.cluster\.host_state"):
        nvidia_container_toolkit_first_read({"skipped": True}, wanted())
