"""The repository key shipped with nvidia_container_toolkit is NVIDIA's and verifies NVIDIA's real signed index."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = REPO_ROOT / "roles/nvidia_container_toolkit/files/nvidia-container-toolkit.asc"
IN_RELEASE = REPO_ROOT / "tests/fixtures/nvidia-container-toolkit/InRelease"
# Published fingerprint of "NVIDIA CORPORATION (Open Source Projects) <cudatools@nvidia.com>".
NVIDIA_FINGERPRINT = "C95B321B61E88C1809C4F759DDCAE044F796ECB0"

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed")


def gpg(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["gpg", "--homedir", str(home), "--batch", "--status-fd", "1", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )


def test_key_has_nvidias_published_fingerprint(tmp_path):
    shown = gpg(tmp_path, "--with-colons", "--show-keys", str(KEY))
    fingerprints = [line.split(":")[9] for line in shown.stdout.splitlines() if line.startswith("fpr:")]
    assert fingerprints[0] == NVIDIA_FINGERPRINT


def test_key_verifies_nvidias_recorded_index(tmp_path):
    gpg(tmp_path, "--import", str(KEY))
    verified = gpg(tmp_path, "--verify", str(IN_RELEASE))
    assert verified.returncode == 0, verified.stderr
    assert f"[GNUPG:] VALIDSIG {NVIDIA_FINGERPRINT}" in verified.stdout


def test_key_rejects_an_altered_index(tmp_path):
    altered = tmp_path / "InRelease"
    altered.write_text(IN_RELEASE.read_text().replace("Packages.xz", "Packages.gz"))
    gpg(tmp_path, "--import", str(KEY))
    verified = gpg(tmp_path, "--verify", str(altered))
    assert verified.returncode != 0
    assert "[GNUPG:] BADSIG" in verified.stdout
