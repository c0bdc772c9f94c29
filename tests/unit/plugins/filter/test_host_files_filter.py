# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a file task would change a path host_state read (gpuops.cluster.path_differs), checked against files
written here and read by host_state's own path reader."""

import os

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.host_files import FilterModule, path_differs
from ansible_collections.gpuops.cluster.plugins.module_utils._host import system_state

PIN = "Package: src:nvidia-graphics-drivers\nPin: version 535.261.03-*\nPin-Priority: 1001\n"


def read(path):
    return system_state.path_state(str(path), checksum=True)


@pytest.fixture
def pin(tmp_path):
    path = tmp_path / "gpuops-nvidia-driver.pref"
    path.write_text(PIN, encoding="utf-8")
    path.chmod(0o644)
    return path


def test_a_file_as_wanted_does_not_differ(pin):
    assert path_differs(read(pin), "file", PIN, "0644") is False
    assert path_differs(read(pin), "file", PIN, "644", uid=os.getuid(), gid=os.getgid()) is False


@pytest.mark.parametrize(
    ("content", "mode", "owner"),
    [
        pytest.param(PIN.replace("535.261.03", "535.274.02"), "0644", {}, id="content"),
        pytest.param(PIN.rstrip("\n"), "0644", {}, id="trailing-newline"),
        pytest.param(PIN, "0600", {}, id="mode"),
        pytest.param(PIN, "0644", {"uid": os.getuid() + 1}, id="owner"),
        pytest.param(PIN, "0644", {"gid": os.getgid() + 1}, id="group"),
    ],
)
def test_a_file_differs_in_content_mode_or_owner(pin, content, mode, owner):
    assert path_differs(read(pin), "file", content, mode, **owner) is True


def test_a_file_read_without_its_checksum_counts_as_different(pin):
    assert path_differs(system_state.path_state(str(pin)), "file", PIN, "0644") is True


def test_missing_links_and_other_kinds_differ(tmp_path, pin):
    (tmp_path / "link").symlink_to(pin)
    assert path_differs(read(tmp_path / "missing"), "file", PIN) is True
    assert path_differs(read(tmp_path / "link"), "file", PIN, "0644") is True
    assert path_differs(read(tmp_path), "file", PIN) is True
    assert path_differs(read(pin), "directory") is True


def test_directories(tmp_path):
    tmp_path.chmod(0o755)
    assert path_differs(read(tmp_path), "directory", mode="0755") is False
    assert path_differs(read(tmp_path), "directory", mode="0700") is True
    assert path_differs(read(tmp_path / "missing"), "directory") is True


def test_absent(tmp_path, pin):
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    assert path_differs(read(tmp_path / "missing"), "absent") is False
    assert path_differs(read(pin), "absent") is True
    # file: state=absent removes a dangling link too.
    assert path_differs(read(tmp_path / "dangling"), "absent") is True


def test_bytes_that_are_not_utf8_compare_as_read(tmp_path):
    key = tmp_path / "key.gpg"
    key.write_bytes(b"\x99\x01\xff\xfe")
    # What a file lookup gives for those bytes (ansible's to_text, surrogate_or_strict).
    looked_up = b"\x99\x01\xff\xfe".decode("utf-8", "surrogateescape")
    assert path_differs(read(key), "file", looked_up) is False


def test_bad_use_is_an_error(pin):
    with pytest.raises(AnsibleFilterError, match="kind must be one of file, directory, absent"):
        path_differs(read(pin), "link")
    with pytest.raises(AnsibleFilterError, match="content is needed"):
        path_differs(read(pin), "file")
    with pytest.raises(AnsibleFilterError, match="expects a path state"):
        path_differs("/etc/x", "absent")


def test_the_filter_is_registered():
    assert FilterModule().filters()["path_differs"] is path_differs
