# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test bed's versions follow the rke2 role's default release, and its Go module pins them."""

import pathlib
import re
import sys

import pytest
import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO_ROOT / "tests/testbed"))
import versions  # noqa: E402  (a test bed module, outside the collection)

GO_MOD = (REPO_ROOT / "tests/testbed/kubernetes/go.mod").read_text()


def test_kubernetes_is_the_default_releases_own_version():
    default = yaml.safe_load((REPO_ROOT / "roles/rke2/defaults/main.yml").read_text())["rke2_version"]
    found = versions.components()
    assert found["RKE2_VERSION"] == default
    assert found["KUBERNETES_VERSION"] == default.split("+")[0]
    assert found["KUBERNETES_STAGING_VERSION"] == "v0." + default.split("+")[0].split(".", 1)[1]
    assert re.fullmatch(r"v2\.\d+\.\d+", found["CONTAINERD_VERSION"]), "RKE2 ships containerd 2.x since v1.33"


def test_go_mod_pins_what_the_versions_say():
    found = versions.components()
    required = dict(re.findall(r"^\t(\S+) (v\S+)$", GO_MOD.split("replace (")[0], re.MULTILINE))
    assert required["k8s.io/kubernetes"] == found["KUBERNETES_VERSION"]
    assert required["go.etcd.io/etcd/server/v3"] == found["ETCD_VERSION"]
    replaced = re.findall(r"^\t(k8s\.io/\S+) => (\S+) (v\S+)$", GO_MOD, re.MULTILINE)
    assert len(replaced) > 20
    assert {(module == target, version) for module, target, version in replaced} == {
        (True, found["KUBERNETES_STAGING_VERSION"])
    }


def test_a_later_release_line_needs_its_row():
    assert versions.components("v1.36.1+rke2r2")["KUBERNETES_VERSION"] == "v1.36.1"
    with pytest.raises(versions.VersionError, match=r"no row for the RKE2 line v1\.99"):
        versions.components("v1.99.0+rke2r1")
    with pytest.raises(versions.VersionError, match="not an RKE2 release tag"):
        versions.components("v1.36.3")


def test_the_command_prints_shell_assignments(capsys):
    assert versions.main(["versions.py", "v1.36.3+rke2r1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "KUBERNETES_VERSION=v1.36.3" in lines
    assert versions.main(["versions.py", "1.36"]) == 2
