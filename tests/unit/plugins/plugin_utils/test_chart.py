# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A role's chart: where its reference points, the chart file on the controller, and the CRDs gpu_operator applies."""

import io
import os
import pathlib
import tarfile

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.k8s_state import k8s_to_apply
from ansible_collections.gpuops.cluster.plugins.plugin_utils.chart import (
    chart_file,
    chart_problem,
    chart_source,
    read_chart,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.gpu_operator_crds import (
    DEFINITION_ANNOTATION,
    NFD_SUBCHART,
    crds_to_apply,
)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[4]
# What each role passes: the variable of its chart reference, the chart's name and its upstream repository.
GPU_OPERATOR = ("gpu_operator_chart_ref", "gpu-operator", "https://helm.ngc.nvidia.com/nvidia")
HAMI = ("gpu_memory_sharing_hami_chart_ref", "hami", "https://project-hami.github.io/HAMi/")


def _crd(name):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}


def _pack(tmp_path, files, name="chart.tgz"):
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as archive:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    ("ref", "url", "kind", "repo_name"),
    [
        ("nvidia/gpu-operator", "https://helm.ngc.nvidia.com/nvidia", "repo", "nvidia"),
        ("mirror/gpu-operator", "https://charts.example.com/nvidia", "repo", "mirror"),
        ("oci://registry.example.com/charts/gpu-operator", "https://ignored", "oci", ""),
        ("/srv/charts/gpu-operator-v26.7.0.tgz", "", "local", ""),
        ("charts/gpu-operator-v26.7.0.tgz", "https://ignored", "local", ""),
    ],
)
def test_chart_sources(ref, url, kind, repo_name):
    assert chart_source(ref, url, *GPU_OPERATOR) == {"kind": kind, "repo_name": repo_name}


@pytest.mark.parametrize(
    ("ref", "url", "problem"),
    [
        ("", "", "gpu_operator_chart_ref is empty"),
        ("nvidia/gpu-operator", "", "gpu_operator_chart_repo_url is empty"),
        ("gpu-operator", "https://helm.ngc.nvidia.com/nvidia", "neither REPO/CHART"),
        ("a/b/c", "https://x", "neither REPO/CHART"),
    ],
)
def test_unusable_chart_sources_say_what_is_valid(ref, url, problem):
    found = chart_source(ref, url, *GPU_OPERATOR)
    assert found["kind"] is None
    assert problem in found["problem"]


def test_read_chart_finds_the_crds_of_the_chart_and_of_nfd(tmp_path):
    path = _pack(
        tmp_path,
        {
            "gpu-operator/Chart.yaml": "name: gpu-operator\nversion: v1.2.3\nappVersion: v1.2.3\n",
            "gpu-operator/crds/a.yaml": yaml.safe_dump(_crd("clusterpolicies.nvidia.com")),
            # Two documents in one file, and a non-CRD document that is not applied.
            "gpu-operator/crds/b.yaml": yaml.safe_dump_all([_crd("nvidiadrivers.nvidia.com"), {"kind": "ConfigMap"}]),
            "gpu-operator/templates/crds/not-a-crd-folder.yaml": yaml.safe_dump(_crd("templated.example.com")),
            "gpu-operator/charts/node-feature-discovery/crds/nfd.yaml": yaml.safe_dump(
                _crd("nodefeatures.nfd.k8s-sigs.io")
            ),
        },
    )
    chart = read_chart(str(path))
    assert (chart["name"], chart["version"], chart["app_version"]) == ("gpu-operator", "v1.2.3", "v1.2.3")
    assert [c["metadata"]["name"] for c in chart["crds"]] == ["clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com"]
    assert [c["metadata"]["name"] for c in chart["subchart_crds"][NFD_SUBCHART]] == ["nodefeatures.nfd.k8s-sigs.io"]
    names = [c["metadata"]["name"] for c in crds_to_apply(chart, {"nfd": {"enabled": False}})]
    assert names == ["clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com"]
    assert len(crds_to_apply(chart, {})) == 3


def test_each_crd_carries_the_sha256_of_its_definition_so_a_dropped_field_is_applied():
    crd = {**_crd("clusterpolicies.nvidia.com"), "spec": {"group": "nvidia.com", "preserveUnknownFields": False}}
    (applied,) = crds_to_apply({"crds": [crd]}, {"nfd": {"enabled": False}})
    digest = applied["metadata"]["annotations"][DEFINITION_ANNOTATION]
    assert len(digest) == 64 and "annotations" not in crd["metadata"]
    # The live CRD after the apply: the server's fields beside it.
    live = {
        **applied,
        "metadata": {**applied["metadata"], "uid": "1", "generation": 1},
        "status": {"storedVersions": ["v1"]},
    }
    assert k8s_to_apply([applied], [live]) == []
    # The next chart drops a field: the live CRD still holds every field left, not the new digest.
    dropped = {**crd, "spec": {"group": "nvidia.com"}}
    (next_applied,) = crds_to_apply({"crds": [dropped]}, {"nfd": {"enabled": False}})
    assert next_applied["metadata"]["annotations"][DEFINITION_ANNOTATION] != digest
    assert k8s_to_apply([next_applied], [live]) == [next_applied]


def test_a_file_that_is_not_a_chart_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a packaged Helm chart"):
        read_chart(str(_pack(tmp_path, {"a/values.yaml": "x: 1\n", "b/Chart.yaml": "name: b\n"})))
    with pytest.raises(ValueError, match=r"no gpu-operator/Chart\.yaml"):
        read_chart(str(_pack(tmp_path, {"gpu-operator/values.yaml": "x: 1\n"}, "other.tgz")))


def test_chart_problem_names_the_version_to_set():
    chart = {"name": "gpu-operator", "version": "v26.3.0"}
    problem = chart_problem(chart, "/srv/gpu-operator.tgz", "v26.7.0", *GPU_OPERATOR[:2])
    assert "is gpu-operator v26.3.0, but gpu_operator_chart_version is v26.7.0" in problem
    assert chart_problem(chart, "/srv/gpu-operator.tgz", "v26.3.0", *GPU_OPERATOR[:2]) is None
    hami = {"name": "hami", "version": "2.10.0"}
    assert "not gpu-operator" in chart_problem(hami, "/srv/hami.tgz", "2.10.0", *GPU_OPERATOR[:2])


def test_the_pinned_chart_carries_the_crds_the_role_applies():
    folder = os.environ.get("GPUOPS_CHARTS", str(REPO_ROOT.parent / "shared" / "charts"))
    path = pathlib.Path(folder) / "gpu-operator-v26.7.0.tgz"
    if not path.is_file():
        pytest.skip(f"the gpu-operator chart is not at {path} (set GPUOPS_CHARTS to its folder)")
    chart = read_chart(str(path))
    assert chart_problem(chart, str(path), "v26.7.0", *GPU_OPERATOR[:2]) is None
    names = sorted(c["metadata"]["name"] for c in crds_to_apply(chart, {"nfd": {"enabled": True}}))
    assert names == [
        "clusterpolicies.nvidia.com",
        "computedomaincliques.resource.nvidia.com",
        "computedomains.resource.nvidia.com",
        "gpuclusters.nvidia.com",
        "nodefeaturegroups.nfd.k8s-sigs.io",
        "nodefeaturerules.nfd.k8s-sigs.io",
        "nodefeatures.nfd.k8s-sigs.io",
        "nvidiadrivers.nvidia.com",
    ]
    for crd in chart["crds"] + chart["subchart_crds"][NFD_SUBCHART]:
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        assert crd["spec"]["versions"], crd["metadata"]["name"]
    # The ClusterPolicy's status the wait reads: state with the operator's enum, and conditions.
    policy = next(c for c in chart["crds"] if c["metadata"]["name"] == "clusterpolicies.nvidia.com")
    status = policy["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert status["state"]["enum"] == ["ignored", "ready", "notReady"]
    assert "conditions" in status


@pytest.mark.parametrize(
    ("ref", "repo_url", "kind"),
    [
        ("hami-charts/hami", "https://project-hami.github.io/HAMi/", "repo"),
        ("oci://registry.example.com/charts/hami", "", "oci"),
        ("/srv/charts/hami-2.10.0.tgz", "", "local"),
        ("hami-charts/hami", "", None),
        ("hami", "https://project-hami.github.io/HAMi/", None),
    ],
)
def test_hami_chart_sources(ref, repo_url, kind):
    source = chart_source(ref, repo_url, *HAMI)
    assert source["kind"] == kind
    if kind is None:
        assert "gpu_memory_sharing_hami_chart_ref" in source["problem"]


def _chart(tmp_path, name, version):
    path = tmp_path / f"{name}-{version}.tgz"
    data = f"apiVersion: v2\nname: {name}\nversion: {version}\n".encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(f"{name}/Chart.yaml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return str(path)


def test_local_chart_must_be_hami_at_the_pinned_version(tmp_path):
    def local_chart_problem(path, version):
        return chart_file(path, version, *HAMI[:2])["problem"]

    assert local_chart_problem(_chart(tmp_path, "hami", "2.10.0"), "2.10.0") is None
    assert "is hami 2.9.0" in local_chart_problem(_chart(tmp_path, "hami", "2.9.0"), "2.10.0")
    assert "not hami" in local_chart_problem(_chart(tmp_path, "gpu-operator", "2.10.0"), "2.10.0")
    broken = tmp_path / "broken.tgz"
    broken.write_bytes(b"not a tarball")
    assert "cannot be read" in local_chart_problem(str(broken), "2.10.0")
