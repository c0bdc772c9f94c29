# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Helm chart a role installs: where its reference points, and the packaged chart file on the controller.

Every function takes the role variable of the chart reference (gpu_operator_chart_ref,
gpu_memory_sharing_hami_chart_ref) and names the role's other chart variables after it, so that each message
says which variable to set: VARIABLE with _repo_url or _version for _ref.
"""

from __future__ import annotations

import posixpath
import re
import tarfile

import yaml

# NAME/CHART, as `helm repo add NAME URL` makes charts available.
_REPO_CHART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_CRD_FILES = (".yaml", ".yml", ".json")


def _sibling(variable, suffix):
    return variable.removesuffix("_ref") + suffix


def chart_source(chart_ref, repo_url, variable, chart, repo):
    """{"kind": local|oci|repo, "repo_name"} for CHART_REF, or {"kind": None, "problem"} naming what is valid.

    VARIABLE names the role variable of CHART_REF, CHART the chart and REPO its upstream repository, for the
    messages.
    """
    chart_ref = str(chart_ref or "").strip()
    repo_url = str(repo_url or "").strip()
    if not chart_ref:
        return {
            "kind": None,
            "problem": f"{variable} is empty; set REPO/{chart}, oci://REGISTRY/PATH/{chart} or the path of a .tgz",
        }
    if chart_ref.startswith("oci://"):
        return {"kind": "oci", "repo_name": ""}
    if chart_ref.endswith(".tgz") or chart_ref.startswith(("/", "./", "../", "~")):
        return {"kind": "local", "repo_name": ""}
    if _REPO_CHART.match(chart_ref):
        if not repo_url:
            return {
                "kind": None,
                "problem": f"{variable} {chart_ref!r} names a repository chart but {_sibling(variable, '_repo_url')} "
                f"is empty; set the repository's URL ({repo} or a mirror), or use an oci:// reference or a .tgz path",
            }
        return {"kind": "repo", "repo_name": chart_ref.split("/", 1)[0]}
    return {
        "kind": None,
        "problem": f"{variable} {chart_ref!r} is neither REPO/CHART, an oci:// reference nor a path ending in .tgz",
    }


def _chart_root(names):
    roots = {name.split("/", 1)[0] for name in names if "/" in name}
    if len(roots) != 1:
        raise ValueError(f"not a packaged Helm chart (top-level entries: {sorted(roots)})")
    return roots.pop()


def read_chart(path):
    """{"name", "version", "app_version", "crds", "subchart_crds": {subchart: crds}} of the packaged chart at PATH.

    The CRDs are those of the crds/ folders (the chart's and each bundled subchart's), which Helm installs on
    the first install only and never upgrades: a role that wants them current applies them itself.
    """
    with tarfile.open(path, "r:gz") as archive:
        members = {member.name: member for member in archive.getmembers() if member.isfile()}
        root = _chart_root(members)

        def crds(folder):
            found = []
            for name in sorted(members):
                if posixpath.dirname(name) == folder and name.endswith(_CRD_FILES):
                    text = archive.extractfile(members[name]).read().decode("utf-8")
                    found += [
                        doc for doc in yaml.safe_load_all(text) if doc and doc.get("kind") == "CustomResourceDefinition"
                    ]
            return found

        chart_yaml = f"{root}/Chart.yaml"
        if chart_yaml not in members:
            raise ValueError(f"{path}: no {chart_yaml}, not a packaged Helm chart")
        meta = yaml.safe_load(archive.extractfile(members[chart_yaml]).read()) or {}
        # Bundled subcharts unpacked under charts/ (ROOT/charts/SUB/...); packaged ones (.tgz) are not read.
        subcharts = sorted(
            {parts[2] for parts in (name.split("/") for name in members) if len(parts) > 3 and parts[1] == "charts"}
        )
        return {
            "name": str(meta.get("name", "")),
            "version": str(meta.get("version", "")),
            "app_version": str(meta.get("appVersion", "")),
            "crds": crds(f"{root}/crds"),
            "subchart_crds": {sub: crds(f"{root}/charts/{sub}/crds") for sub in subcharts},
        }


def chart_problem(chart, path, version, variable, name):
    """Why CHART, read from PATH, is not the chart NAME at VERSION, or None."""
    if chart["name"] != name:
        return f"{path} is the chart {chart['name']!r}, not {name}; set {variable} to the {name} chart"
    version_variable = _sibling(variable, "_version")
    if chart["version"] != str(version):
        return (
            f"{path} is {name} {chart['version']}, but {version_variable} is {version}; "
            f"set {version_variable} to the file's version or use the file of that version"
        )
    return None


def chart_file(path, version, variable, name):
    """read_chart() of PATH with "problem": why it is not the chart NAME at VERSION (None when it is).

    A file that is no packaged chart at all gets only "problem".
    """
    try:
        chart = read_chart(path)
    except (OSError, ValueError, tarfile.TarError, yaml.YAMLError) as error:
        return {"problem": f"{path} cannot be read as a packaged Helm chart ({error})"}
    return dict(chart, problem=chart_problem(chart, path, version, variable, name))
