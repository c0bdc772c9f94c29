# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU Operator chart on the controller: where it comes from, its version and the CRDs it carries.

Helm installs a chart's crds/ folder on the first install only and never upgrades or deletes it, so the
role applies these CRDs itself on every run (the GPU Operator documents upgrading them by hand).
"""

from __future__ import annotations

import posixpath
import re
import tarfile

import yaml

# NAME/CHART, as `helm repo add NAME URL` makes charts available.
_REPO_CHART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
NVIDIA_REPO = "https://helm.ngc.nvidia.com/nvidia"
# The subchart the gpu-operator chart bundles, and the value that turns it off.
NFD_SUBCHART = "node-feature-discovery"


def chart_source(chart_ref, repo_url="", variable="gpu_operator_chart_ref", chart="gpu-operator", mirror=NVIDIA_REPO):
    """{"kind": local|oci|repo, "repo_name"} for CHART_REF, or {"kind": None, "problem"} naming what is valid.

    VARIABLE names the role variable of CHART_REF (its repository URL is VARIABLE with _repo_url for _ref),
    CHART the chart and MIRROR its repository, for the messages.
    """
    chart_ref = str(chart_ref or "").strip()
    repo_url = str(repo_url or "").strip()
    repo_variable = variable.removesuffix("_ref") + "_repo_url"
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
                "problem": f"{variable} {chart_ref!r} names a repository chart but {repo_variable} is empty; set the "
                f"repository's URL ({mirror} or a mirror), or use an oci:// reference or a .tgz path",
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
    """{"name", "version", "crds": [CRD documents], "nfd_crds": [...]} of the packaged chart at PATH."""
    with tarfile.open(path, "r:gz") as archive:
        members = {member.name: member for member in archive.getmembers() if member.isfile()}
        root = _chart_root(members)

        def documents(name):
            text = archive.extractfile(members[name]).read().decode("utf-8")
            return [doc for doc in yaml.safe_load_all(text) if doc and doc.get("kind") == "CustomResourceDefinition"]

        def crds(folder):
            found = []
            for name in sorted(members):
                if posixpath.dirname(name) == folder and name.endswith((".yaml", ".yml", ".json")):
                    found += documents(name)
            return found

        chart_yaml = f"{root}/Chart.yaml"
        if chart_yaml not in members:
            raise ValueError(f"{path}: no {chart_yaml}, not a packaged Helm chart")
        meta = yaml.safe_load(archive.extractfile(members[chart_yaml]).read()) or {}
        return {
            "name": str(meta.get("name", "")),
            "version": str(meta.get("version", "")),
            "app_version": str(meta.get("appVersion", "")),
            "crds": crds(f"{root}/crds"),
            "nfd_crds": crds(f"{root}/charts/{NFD_SUBCHART}/crds"),
        }


def chart_problem(chart, path, version):
    """Why the chart read from PATH is not gpu-operator VERSION, or None."""
    if chart["name"] != "gpu-operator":
        return (
            f"{path} is the chart {chart['name']!r}, not gpu-operator; "
            "set gpu_operator_chart_ref to the gpu-operator chart"
        )
    if chart["version"] != str(version):
        return (
            f"{path} is gpu-operator {chart['version']}, but gpu_operator_chart_version is {version}; "
            "set gpu_operator_chart_version to the file's version or use the file of that version"
        )
    return None


def crds_to_apply(chart, values):
    """The CRDs a `helm install` with VALUES would create: the chart's, plus NFD's while nfd.enabled."""
    nfd = (values or {}).get("nfd") or {}
    nfd_enabled = nfd.get("enabled", True) if isinstance(nfd, dict) else True
    return list(chart["crds"]) + (list(chart["nfd_crds"]) if nfd_enabled else [])
