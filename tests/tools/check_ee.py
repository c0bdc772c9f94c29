# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the execution environment's build context that `ansible-builder create` wrote.

    python tests/tools/check_ee.py CONTEXT_DIR

Fails, naming what is wrong, unless:
- execution-environment.yml pins ansible-core as requirements.txt does and ansible-runner as
  requirements-test.txt does (the runner that starts jobs in the image), pins the base image by a tag
  or digest (not `latest`), and asks for kubernetes.core and community.general at the versions the
  `ansible` package of requirements.txt bundles (read from the installed package);
- the Containerfile installs those pins, writes the package manager it names (ARG PKGMGR) before its first
  use unless that is the base image's own, installs the collections with ansible-galaxy, runs
  ansible-builder's introspection (which reads the collections' requirements.txt and bindep.txt),
  runs sha256sum --check in every step that fetches a URL, and pins Helm 3: the release archive's sha256,
  checked before it is unpacked, and the binary's (as tests/harness/get-helm pins it), checked before a
  binary the context brings is used;
- the context holds this collection's tarball at galaxy.yml's version, with requirements.txt and
  bindep.txt inside, and, when it brings them, a Helm binary with the pinned sha256 and tarballs of the
  collections the definition asks Galaxy for, at those versions;
- ansible-builder's own introspect script, run here on that tarball and the bundled kubernetes.core
  and community.general, yields every Python requirement of requirements.txt the EE needs and the
  system packages it needs on Debian (platform:dpkg), and pip resolves the Python ones for Python 3.11
  (PyPI is needed for that step; --no-resolve skips it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
# Python packages of requirements.txt the EE needs; ansible and ansible-core come another way.
NEEDED_PYTHON = ("kubernetes", "jmespath")
# Debian's names (the EE's base is Debian 12): bindep lines that apply to platform:dpkg.
NEEDED_SYSTEM = ("git", "openssh-client", "ca-certificates")
# Package managers a base image brings itself; any other the Containerfile must write first.
STOCK_PACKAGE_MANAGERS = ("/usr/bin/dnf", "/usr/bin/microdnf", "/usr/bin/yum", "/usr/bin/apt-get")
# Collections the collection depends on (galaxy.yml), checked against the bundled ones.
DEPENDENCIES = ("kubernetes.core", "community.general")
SECRET_WORDS = re.compile(r"(password|passwd|token|secret|api[_-]?key)\s*[:=]\s*\S", re.IGNORECASE)


def pins(path):
    """{lower-case name: version} of the `name==version` lines of a requirements file."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\s*([A-Za-z0-9_.\-\[\]]+)\s*==\s*([^\s#;]+)", line)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def bundled_version(collection):
    """Version of a collection the installed `ansible` package bundles."""
    import ansible_collections

    for root in ansible_collections.__path__:
        manifest = pathlib.Path(root, *collection.split("."), "MANIFEST.json")
        if manifest.is_file():
            return json.loads(manifest.read_text(encoding="utf-8"))["collection_info"]["version"]
    return None


def check_definition(ee, problems):
    requirements = pins(REPO / "requirements.txt")
    base = ((ee.get("images") or {}).get("base_image") or {}).get("name", "")
    if ee.get("version") != 3:
        problems.append(
            f"execution-environment.yml: version is {ee.get('version')!r}, ansible-builder schema 3 expected"
        )
    if "@sha256:" not in base and (":" not in base.rsplit("/", 1)[-1] or base.endswith(":latest")):
        problems.append(f"execution-environment.yml: base image {base!r} is not pinned by a tag or a digest")
    dependencies = ee.get("dependencies") or {}
    core = (dependencies.get("ansible_core") or {}).get("package_pip", "")
    wanted_core = f"ansible-core=={requirements.get('ansible-core')}"
    if core != wanted_core:
        problems.append(f"execution-environment.yml: ansible_core is {core!r}, requirements.txt pins {wanted_core!r}")
    runner = (dependencies.get("ansible_runner") or {}).get("package_pip", "")
    if not re.fullmatch(r"ansible-runner==\S+", runner):
        problems.append(f"execution-environment.yml: ansible_runner {runner!r} is not pinned (ansible-runner==X.Y.Z)")
    host_runner = pins(REPO / "requirements-test.txt").get("ansible-runner")
    if runner != f"ansible-runner=={host_runner}":
        problems.append(
            f"execution-environment.yml: ansible_runner is {runner!r}, requirements-test.txt pins ansible-runner "
            f"{host_runner!r} for the runner that starts jobs in the image: the two must agree"
        )
    collections = {entry["name"]: entry for entry in (dependencies.get("galaxy") or {}).get("collections", [])}
    for name in DEPENDENCIES:
        bundled = bundled_version(name)
        asked = str((collections.get(name) or {}).get("version", ""))
        if asked != bundled:
            problems.append(
                f"execution-environment.yml: {name} version {asked!r}, the ansible=={requirements.get('ansible')} "
                f"package of requirements.txt bundles {bundled!r}"
            )
    if not any(entry.get("type") == "file" and "gpuops-cluster" in name for name, entry in collections.items()):
        problems.append("execution-environment.yml: galaxy collections do not install the gpuops-cluster tarball")
    for number, line in enumerate((REPO / "execution-environment.yml").read_text(encoding="utf-8").splitlines(), 1):
        if SECRET_WORDS.search(line.split("#", 1)[0]):
            problems.append(f"execution-environment.yml:{number}: looks like a secret: {line.strip()}")


def get_helm_pins():
    """HELM_VERSION and HELM_SHA256 (the binary's) of tests/harness/get-helm."""
    text = (REPO / "tests" / "harness" / "get-helm").read_text(encoding="utf-8")
    return dict(re.findall(r"^(HELM_VERSION|HELM_SHA256)=(\S+)$", text, re.MULTILINE))


def check_package_manager(text, problems):
    manager = re.search(r'^ARG PKGMGR="([^"]+)"$', text, re.MULTILINE)
    if not manager:
        problems.append("Containerfile: no ARG PKGMGR (options.package_manager_path)")
        return
    path = manager.group(1)
    if path in STOCK_PACKAGE_MANAGERS:
        return
    lines = text.splitlines()
    written = next((number for number, line in enumerate(lines) if f"> {path}" in line), None)
    used = next((number for number, line in enumerate(lines) if re.search(r"(^RUN|;|&&)\s*\$PKGMGR\s", line)), None)
    if written is None or (used is not None and used < written):
        problems.append(f"Containerfile: the package manager {path} is used before a step writes it")


def check_helm(text, context, problems):
    args = dict(re.findall(r"^ARG (HELM_\w+)=(\S+)$", text, re.MULTILINE))
    if not re.fullmatch(r"v3\.\d+\.\d+", args.get("HELM_VERSION", "")):
        problems.append("Containerfile: no pinned Helm 3 (ARG HELM_VERSION=v3.X.Y)")
    for name in ("HELM_SHA256", "HELM_LOCAL_SHA256"):
        if not re.fullmatch(r"[0-9a-f]{64}", args.get(name, "")):
            problems.append(f"Containerfile: no ARG {name}=<64 hex digits>")
    wanted = get_helm_pins()
    pinned = (args.get("HELM_VERSION"), args.get("HELM_LOCAL_SHA256"))
    if pinned != (wanted.get("HELM_VERSION"), wanted.get("HELM_SHA256")):
        problems.append(
            f"Containerfile: Helm {args.get('HELM_VERSION')} with binary sha256 {args.get('HELM_LOCAL_SHA256')}, "
            f"tests/harness/get-helm pins {wanted.get('HELM_VERSION')} with {wanted.get('HELM_SHA256')}"
        )
    step = next((line for line in text.splitlines() if "get.helm.sh" in line), "")
    archive_checked = r"HELM_SHA256\}  /tmp/helm\.tar\.gz\" \| sha256sum --check --strict;.*tar -xzf /tmp/helm\.tar\.gz"
    if not re.search(archive_checked, step):
        problems.append("Containerfile: the Helm archive is not checked with sha256sum --check before it is unpacked")
    if not re.search(r"HELM_LOCAL_SHA256\}  (\S+)\" \| sha256sum --check --strict; cp \1 ", step):
        problems.append("Containerfile: a Helm binary from the context is not checked against HELM_LOCAL_SHA256 first")
    local = context / "_build" / "files" / "helm"
    if local.is_file() and hashlib.sha256(local.read_bytes()).hexdigest() != args.get("HELM_LOCAL_SHA256"):
        problems.append(f"context: {local} does not have the sha256 HELM_LOCAL_SHA256 pins")


def check_downloads(text, problems):
    """Every step that fetches a URL checks what it fetched with sha256sum."""
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(r"\b(https?|ftp)://", line) and "sha256sum --check" not in line:
            problems.append(f"Containerfile:{number}: fetches a URL without a sha256sum check: {line.strip()[:120]}")


def check_local_collections(context, ee, problems):
    folder = context / "_build" / "files" / "collections"
    if not folder.is_dir():
        return
    asked = {
        f"{entry['name'].replace('.', '-')}-{entry['version']}.tar.gz"
        for entry in ee["dependencies"]["galaxy"]["collections"]
        if entry.get("type", "galaxy") == "galaxy"
    }
    for tarball in sorted(folder.glob("*.tar.gz")):
        if tarball.name not in asked:
            problems.append(f"context: {tarball} is not a collection the definition asks for ({sorted(asked)})")


def check_containerfile(context, ee, problems):
    text = (context / "Containerfile").read_text(encoding="utf-8")
    dependencies = ee["dependencies"]
    refs = f"{dependencies['ansible_core']['package_pip']} {dependencies['ansible_runner']['package_pip']}"
    expected = {
        "the pinned ansible-core and ansible-runner": f'ANSIBLE_INSTALL_REFS="{refs}"',
        "the collections from _build/requirements.yml": "ansible-galaxy collection install "
        "$ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml",
        "the introspection of the collections' requirements.txt and bindep.txt": "introspect.py introspect",
        "the Python and system packages introspection found": "/output/scripts/install-from-bindep",
    }
    for what, needle in expected.items():
        if needle not in text:
            problems.append(f"Containerfile: does not install {what} (no {needle!r})")
    check_package_manager(text, problems)
    check_helm(text, context, problems)
    check_downloads(text, problems)
    check_local_collections(context, ee, problems)
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text(encoding="utf-8"))
    files = [entry["name"] for entry in galaxy.get("collections", []) if entry.get("type") == "file"]
    for name in files:
        if not (context / "_build" / name).is_file():
            problems.append(f"context: _build/requirements.yml installs {name}, which is not in the context")
    return [context / "_build" / name for name in files if (context / "_build" / name).is_file()]


def check_tarball(tarball, problems):
    version = yaml.safe_load((REPO / "galaxy.yml").read_text(encoding="utf-8"))["version"]
    with tarfile.open(tarball) as archive:
        members = {member.name.removeprefix("./"): member for member in archive.getmembers()}
        if "MANIFEST.json" not in members:
            problems.append(f"{tarball.name}: no MANIFEST.json, it is not a collection tarball")
            return
        manifest = json.load(archive.extractfile(members["MANIFEST.json"]))["collection_info"]
    names = set(members)
    found = f"{manifest['namespace']}.{manifest['name']} {manifest['version']}"
    if found != f"gpuops.cluster {version}":
        problems.append(f"{tarball.name}: holds {found}, galaxy.yml is gpuops.cluster {version}")
    for needed in ("requirements.txt", "bindep.txt"):
        if needed not in names:
            problems.append(f"{tarball.name}: no {needed}, so ansible-builder would not install its dependencies")


def introspect(context, tarball, scratch):
    """Python and system requirement lines ansible-builder's introspection yields for the EE's collections."""
    collections = scratch / "ansible_collections"
    ours = collections / "gpuops" / "cluster"
    ours.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(ours, filter="data")
    import ansible_collections

    for name in DEPENDENCIES:
        for root in ansible_collections.__path__:
            source = pathlib.Path(root, *name.split("."))
            if source.is_dir():
                shutil.copytree(source, collections.joinpath(*name.split(".")))
                break
    pip_out, bindep_out = scratch / "requirements.txt", scratch / "bindep.txt"
    subprocess.run(
        [
            sys.executable,
            str(context / "_build" / "scripts" / "introspect.py"),
            "introspect",
            f"--write-pip={pip_out}",
            f"--write-bindep={bindep_out}",
            str(scratch),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return pip_out, _lines(pip_out), _lines(bindep_out)


def applies_to_dpkg(line):
    """Whether a bindep line selects Debian: no platform selector, or platform:dpkg among them."""
    selectors = re.search(r"\[([^\]]*)\]", line.split("#", 1)[0])
    platforms = [word for word in (selectors.group(1).split() if selectors else []) if word.startswith("platform:")]
    return not platforms or "platform:dpkg" in platforms


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def check_introspection(context, tarball, resolve, problems):
    requirements = pins(REPO / "requirements.txt")
    with tempfile.TemporaryDirectory() as folder:
        pip_file, python, system = introspect(context, tarball, pathlib.Path(folder))
        for name in NEEDED_PYTHON:
            wanted = f"{name}=={requirements[name]}"
            if not any(line.split("#")[0].strip().lower() == wanted for line in python):
                problems.append(f"introspection: the EE would not install {wanted} (got {python})")
        if any(re.match(r"ansible(-core)?\s*[=<>~!]", line) for line in python):
            problems.append(f"introspection: a collection asks pip for ansible or ansible-core: {python}")
        on_debian = [line.split()[0] for line in system if line.strip() and applies_to_dpkg(line)]
        for name in NEEDED_SYSTEM:
            if name not in on_debian:
                problems.append(f"introspection: the EE would not install the system package {name} (got {system})")
        if resolve and not problems:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--dry-run",
                    "--quiet",
                    "--ignore-installed",
                    "--disable-pip-version-check",
                    "-r",
                    str(pip_file),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                problems.append(f"pip cannot resolve the EE's Python requirements {python}: {result.stderr.strip()}")
        return python, system


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("context", type=pathlib.Path, help="the folder `ansible-builder create -c` wrote")
    parser.add_argument("--no-resolve", action="store_true", help="skip the pip resolution (needs PyPI)")
    args = parser.parse_args()
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text(encoding="utf-8"))
    problems = []
    check_definition(ee, problems)
    tarballs = check_containerfile(args.context, ee, problems)
    if not tarballs:
        problems.append("context: no collection tarball to install (run `make ee`, which builds it)")
    python = system = []
    for tarball in tarballs:
        check_tarball(tarball, problems)
        python, system = check_introspection(args.context, tarball, not args.no_resolve, problems)
    if problems:
        print("execution environment: " + "\n  ".join(["problems:", *problems]), file=sys.stderr)
        return 1
    print(f"execution environment: {args.context}/Containerfile checked")
    print("  Python requirements from the collections: " + ", ".join(line.split("  #")[0] for line in python))
    print("  system packages from the collections: " + ", ".join(line.split("  #")[0] for line in system))
    return 0


if __name__ == "__main__":
    sys.exit(main())
