# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The repository key shipped with nvidia_container_toolkit is NVIDIA's and verifies NVIDIA's real signed index.

Signatures are checked with gpgv against a keyring, as apt does: no gpg-agent is started.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[4]
KEY = REPO_ROOT / "roles/nvidia_container_toolkit/files/nvidia-container-toolkit.asc"
IN_RELEASE = REPO_ROOT / "tests/fixtures/nvidia-container-toolkit/InRelease"
# Published fingerprint of "NVIDIA CORPORATION (Open Source Projects) <cudatools@nvidia.com>".
NVIDIA_FINGERPRINT = "C95B321B61E88C1809C4F759DDCAE044F796ECB0"

pytestmark = pytest.mark.skipif(
    shutil.which("gpg") is None or shutil.which("gpgv") is None, reason="gpg and gpgv are not installed"
)


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


@pytest.fixture
def keyring(tmp_path):
    """The shipped key as a binary keyring, the form gpgv reads."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    keyring = tmp_path / "nvidia-container-toolkit.gpg"
    dearmored = run("gpg", "--homedir", str(home), "--batch", "--dearmor", "--output", str(keyring), str(KEY))
    assert dearmored.returncode == 0, dearmored.stderr
    return keyring


def gpgv(keyring: Path, signed: Path) -> subprocess.CompletedProcess:
    return run("gpgv", "--homedir", str(keyring.parent), "--keyring", str(keyring), "--status-fd", "1", str(signed))


def test_key_has_nvidias_published_fingerprint(tmp_path):
    shown = run("gpg", "--homedir", str(tmp_path), "--batch", "--with-colons", "--show-keys", str(KEY))
    fingerprints = [line.split(":")[9] for line in shown.stdout.splitlines() if line.startswith("fpr:")]
    assert fingerprints[0] == NVIDIA_FINGERPRINT


def test_key_verifies_nvidias_recorded_index(keyring):
    verified = gpgv(keyring, IN_RELEASE)
    assert verified.returncode == 0, verified.stderr
    assert f"[GNUPG:] VALIDSIG {NVIDIA_FINGERPRINT}" in verified.stdout


def test_key_rejects_an_altered_index(keyring, tmp_path):
    altered = tmp_path / "InRelease"
    altered.write_text(IN_RELEASE.read_text().replace("Packages.xz", "Packages.gz"))
    verified = gpgv(keyring, altered)
    assert verified.returncode != 0
    assert "[GNUPG:] BADSIG" in verified.stdout
