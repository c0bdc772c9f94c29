# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Collection tarballs for an execution environment build that cannot reach Galaxy (the test bed's).

    python tests/testbed/ee_collections.py DEST

For each collection execution-environment.yml asks Galaxy for (name and version), writes
DEST/NAMESPACE-NAME-VERSION.tar.gz from the copy that the `ansible` package pinned in requirements.txt bundles,
and fails, naming the collection, when that copy is another version. The `ansible` package leaves out part of
each collection (tests, CI files) and keeps its FILES.json: every file it ships must have the sha256 that
FILES.json gives, and the tarball carries a FILES.json and MANIFEST.json that list only what it holds, so that
ansible-galaxy checks each file again when it installs the tarball.

A tarball is rewritten only when its bytes would change (sorted members, no times, no owners), so that the
build context, and the container build's layer cache, stay the same from one run to the next.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import io
import json
import pathlib
import sys
import tarfile

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
SKIPPED_PARTS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc",)


class CollectionError(Exception):
    """A bundled collection that cannot stand in for the one Galaxy would give."""


def galaxy_collections(definition):
    """[(name, version)] of the collections the definition installs from Galaxy (not from files)."""
    entries = ((definition.get("dependencies") or {}).get("galaxy") or {}).get("collections") or []
    return [(entry["name"], str(entry["version"])) for entry in entries if entry.get("type", "galaxy") == "galaxy"]


def bundled_root(name):
    import ansible_collections

    for root in ansible_collections.__path__:
        folder = pathlib.Path(root, *name.split("."))
        if (folder / "MANIFEST.json").is_file():
            return folder
    raise CollectionError(f"{name}: the installed `ansible` package bundles no such collection")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def shipped_entries(name, root, upstream):
    """FILES.json entries of what the bundled copy holds, each file checked against its upstream digest."""
    by_name = {entry["name"]: entry for entry in upstream["files"]}
    present = set()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative in ("MANIFEST.json", "FILES.json") or path.suffix in SKIPPED_SUFFIXES:
            continue
        if any(part in SKIPPED_PARTS for part in path.relative_to(root).parts):
            continue
        entry = by_name.get(relative)
        if entry is None:
            raise CollectionError(f"{name}: {relative} is not in the collection's FILES.json")
        if path.is_file() and sha256(path.read_bytes()) != entry["chksum_sha256"]:
            raise CollectionError(f"{name}: {relative} does not have the sha256 its FILES.json gives")
        present.add(relative)
    return [entry for entry in upstream["files"] if entry["name"] == "." or entry["name"] in present]


def tar_member(name, data=None, executable=False):
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if data is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    else:
        info.size = len(data)
        info.mode = 0o755 if executable else 0o644
    return info


def collection_tarball(name, version):
    """The bytes of a tarball of the bundled collection NAME, which must be at VERSION."""
    root = bundled_root(name)
    manifest = json.loads((root / "MANIFEST.json").read_text(encoding="utf-8"))
    found = manifest["collection_info"]["version"]
    if found != version:
        raise CollectionError(
            f"{name}: execution-environment.yml asks for {version}, the `ansible` package bundles {found} "
            "(the two must agree: the EE gets the collections the collection is tested with)"
        )
    upstream = json.loads((root / "FILES.json").read_text(encoding="utf-8"))
    files = {"files": shipped_entries(name, root, upstream), "format": upstream.get("format", 1)}
    files_json = json.dumps(files, indent=4, sort_keys=True).encode("utf-8")
    manifest = copy.deepcopy(manifest)
    manifest["file_manifest_file"]["chksum_sha256"] = sha256(files_json)
    manifest_json = json.dumps(manifest, indent=4, sort_keys=True).encode("utf-8")

    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.GNU_FORMAT) as archive,
    ):
        for member, data in (("MANIFEST.json", manifest_json), ("FILES.json", files_json)):
            archive.addfile(tar_member(member, data), io.BytesIO(data))
        for entry in files["files"]:
            if entry["name"] == ".":
                continue
            path = root / entry["name"]
            if entry["ftype"] == "dir":
                archive.addfile(tar_member(entry["name"]))
            else:
                data = path.read_bytes()
                executable = bool(path.stat().st_mode & 0o111)
                archive.addfile(tar_member(entry["name"], data, executable), io.BytesIO(data))
    return buffer.getvalue()


def write_if_changed(path, data):
    if path.is_file() and path.read_bytes() == data:
        return False
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dest", type=pathlib.Path, help="folder for the tarballs (created)")
    parser.add_argument("--definition", type=pathlib.Path, default=REPO / "execution-environment.yml")
    args = parser.parse_args()
    definition = yaml.safe_load(args.definition.read_text(encoding="utf-8"))
    args.dest.mkdir(parents=True, exist_ok=True)
    wanted = set()
    try:
        for name, version in galaxy_collections(definition):
            path = args.dest / f"{name.replace('.', '-')}-{version}.tar.gz"
            wanted.add(path.name)
            changed = write_if_changed(path, collection_tarball(name, version))
            print(f"{path} ({'written' if changed else 'unchanged'})")
    except CollectionError as error:
        print(f"ee_collections: {error}", file=sys.stderr)
        return 1
    for stale in args.dest.glob("*.tar.gz"):
        if stale.name not in wanted:
            stale.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
