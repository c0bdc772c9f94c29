# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The versions the test bed builds, derived from one place: the RKE2 release the tests install.

That release is the rke2 role's default (roles/rke2/defaults/main.yml), so moving the default moves
the test bed: Kubernetes is the release's own version, containerd and etcd come from the release line's
row in tests/testbed/rke2-releases.yml.

Usage: versions.py [RKE2_VERSION]   prints RKE2_VERSION=, KUBERNETES_VERSION=, CONTAINERD_VERSION=,
ETCD_VERSION= and KUBERNETES_STAGING_VERSION= lines for a shell to read.
"""

import re
import sys
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
RKE2_DEFAULTS = REPO_ROOT / "roles/rke2/defaults/main.yml"
RELEASES = Path(__file__).resolve().parent / "rke2-releases.yml"
# RKE2 tags its releases vMAJOR.MINOR.PATCH+rke2rN (github.com/rancher/rke2/releases).
RKE2_TAG = re.compile(r"v(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)\+rke2r\d+")


class VersionError(ValueError):
    pass


def default_rke2_version() -> str:
    return str(yaml.safe_load(RKE2_DEFAULTS.read_text())["rke2_version"])


def components(rke2_version: str | None = None) -> dict[str, str]:
    rke2_version = rke2_version or default_rke2_version()
    tag = RKE2_TAG.fullmatch(rke2_version)
    if not tag:
        raise VersionError(f"{rke2_version!r} is not an RKE2 release tag (vX.Y.Z+rke2rN)")
    line = f"v{tag['major']}.{tag['minor']}"
    releases = yaml.safe_load(RELEASES.read_text())
    if line not in releases:
        raise VersionError(
            f"{RELEASES.name} has no row for the RKE2 line {line} (of {rke2_version}); rows: {sorted(releases)}"
        )
    return {
        "RKE2_VERSION": rke2_version,
        "KUBERNETES_VERSION": f"v{tag['major']}.{tag['minor']}.{tag['patch']}",
        # k8s.io/kubernetes vX.Y.Z publishes its staging modules (k8s.io/api, ...) as v0.Y.Z.
        "KUBERNETES_STAGING_VERSION": f"v0.{tag['minor']}.{tag['patch']}",
        "CONTAINERD_VERSION": releases[line]["containerd"],
        "ETCD_VERSION": releases[line]["etcd"],
    }


def main(argv: list[str]) -> int:
    try:
        found = components(argv[1] if len(argv) > 1 else None)
    except VersionError as error:
        print(f"versions: {error}", file=sys.stderr)
        return 2
    for name, value in found.items():
        print(f"{name}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
