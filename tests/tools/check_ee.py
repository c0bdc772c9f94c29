# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the execution environment's build context that `ansible-builder create` wrote.

    python tests/tools/check_ee.py CONTEXT_DIR

Fails, naming what is wrong, unless:
- execution-environment.yml pins ansible-core as requirements.txt does, pins the base image by a tag
  or digest (not `latest`), and asks for kubernetes.core and community.general at the versions the
  `ansible` package of requirements.txt bundles (read from the installed package);
- the Containerfile installs those pins, installs the collections with ansible-galaxy, runs
  ansible-builder's introspection (which reads the collections' requirements.txt and bindep.txt) and
  downloads Helm 3 checking a sha256 before unpacking it;
- the context holds this collection's tarball at galaxy.yml's version, with requirements.txt and
  bindep.txt inside;
- ansible-builder's own introspect script, run here on that tarball and the bundled kubernetes.core
  and community.general, yields every Python requirement of requirements.txt the EE needs, and pip
  resolves the result for Python 3.11 (PyPI is needed for that step; --no-resolve skips it).
"""

from __future__ import annotations

import argparse
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
NEEDED_SYSTEM = ("git", "openssh-clients", "ca-certificates")
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
    digest = re.search(r"^ARG HELM_SHA256=([0-9a-f]{64})$", text, re.MULTILINE)
    version = re.search(r"^ARG HELM_VERSION=(v3\.\d+\.\d+)$", text, re.MULTILINE)
    if not (digest and version):
        problems.append("Containerfile: no pinned Helm 3 (ARG HELM_VERSION=v3.X.Y and ARG HELM_SHA256=<64 hex>)")
    helm_step = next((line for line in text.splitlines() if "get.helm.sh" in line), "")
    checked = re.search(r"sha256sum --check.*tar -xzf", helm_step)
    if not checked:
        problems.append("Containerfile: Helm is not checked with sha256sum --check before it is unpacked")
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
        for name in NEEDED_SYSTEM:
            if not any(line.split()[0] == name for line in system if line.strip()):
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
