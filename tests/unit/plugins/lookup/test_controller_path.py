# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lookup controller_path: the rke2 role writes the controller's kubeconfig only where path_differs says it would
change."""

import hashlib

import pytest
from ansible.errors import AnsibleLookupError
from ansible_collections.gpuops.cluster.plugins.filter.host_files import path_differs
from ansible_collections.gpuops.cluster.plugins.lookup.controller_path import LookupModule

KUBECONFIG = "apiVersion: v1\nkind: Config\n"


def test_a_kubeconfig_as_wanted_differs_in_nothing_another_content_or_mode_does(tmp_path):
    path = tmp_path / "gpuops.yaml"
    path.write_text(KUBECONFIG)
    path.chmod(0o600)

    (state,) = LookupModule().run([str(path)])
    assert state["checksum"] == hashlib.sha1(KUBECONFIG.encode()).hexdigest()
    assert not path_differs(state, "file", KUBECONFIG, "0600")
    assert path_differs(state, "file", KUBECONFIG.replace("v1", "v2"), "0600")
    path.chmod(0o644)
    assert path_differs(LookupModule().run([str(path)])[0], "file", KUBECONFIG, "0600")


def test_a_missing_path_differs_and_home_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (state,) = LookupModule().run(["~/.kube/gpuops.yaml"])
    assert not state["exists"] and path_differs(state, "file", KUBECONFIG, "0600")
    (tmp_path / "here").write_text(KUBECONFIG)
    assert LookupModule().run(["~/here"])[0]["exists"]


def test_a_relative_path_is_refused():
    with pytest.raises(AnsibleLookupError, match="'kubeconfig' is not an absolute path"):
        LookupModule().run(["kubeconfig"])
