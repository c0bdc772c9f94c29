# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Certificates with the openssl command (Debian's ca-certificates pulls it in): one cluster CA."""

import base64
import ipaddress
import subprocess
import tempfile
from pathlib import Path

EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(*arguments: str) -> None:
    subprocess.run(["openssl", *arguments], check=True, capture_output=True)


def ensure_ca(directory: Path) -> tuple[Path, Path]:
    """The cluster CA, created once: it signs the serving certificates and the client certificates."""
    crt, key = directory / "server-ca.crt", directory / "server-ca.key"
    if not crt.exists():
        directory.mkdir(parents=True, exist_ok=True)
        _openssl(
            "req",
            "-x509",
            *EC_KEY,
            "-days",
            "3650",
            "-subj",
            "/CN=rke2-server-ca",
            "-keyout",
            str(key),
            "-out",
            str(crt),
        )
        key.chmod(0o600)
    return crt, key


def issue(ca: tuple[Path, Path], crt: Path, key: Path, subject: str, sans=(), client=False) -> None:
    """Signs a serving certificate (with subject alternative names) or a client certificate."""
    with tempfile.TemporaryDirectory() as scratch:
        csr, ext = Path(scratch) / "req.csr", Path(scratch) / "ext.cnf"
        _openssl("req", *EC_KEY, "-subj", subject, "-keyout", str(key), "-out", str(csr))
        lines = ["basicConstraints=CA:FALSE", f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}"]
        if sans:
            names = [f"IP:{name}" if _is_ip(name) else f"DNS:{name}" for name in dict.fromkeys(sans)]
            lines.append("subjectAltName=" + ",".join(names))
        ext.write_text("\n".join(lines) + "\n")
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
                 "-days", "3650", "-extfile", str(ext), "-out", str(crt))  # fmt: skip
    key.chmod(0o600)


def ensure_signing_key(key: Path) -> None:
    """The service-account token signing key, created once."""
    if not key.exists():
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key))
        key.chmod(0o600)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig(server: str, ca: Path, crt: Path, key: Path) -> str:
    """A kubeconfig with embedded credentials, named `default` as RKE2 names them."""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: default
  cluster:
    server: {server}
    certificate-authority-data: {b64(ca)}
users:
- name: default
  user:
    client-certificate-data: {b64(crt)}
    client-key-data: {b64(key)}
contexts:
- name: default
  context:
    cluster: default
    user: default
current-context: default
"""
