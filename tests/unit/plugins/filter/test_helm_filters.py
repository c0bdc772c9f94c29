# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of every role that installs a chart: what the tasks hand them and what they hand back."""

import io
import tarfile

from ansible_collections.gpuops.cluster.plugins.filter.helm import FilterModule, chart_file, chart_source, helm_problem


def test_every_filter_is_exported():
    assert set(FilterModule().filters()) == {"helm_problem", "chart_source", "chart_file"}


def test_helm_problem_from_a_registered_command_result():
    variable = "gpu_operator_helm_binary"
    assert helm_problem({"rc": 0, "stdout": "v3.17.2+gcc0bbbd"}, "helm", variable) == ""
    assert "Helm v4.1.0" in helm_problem({"rc": 0, "stdout": "v4.1.0+gabc"}, "helm", variable)
    # What ansible.builtin.command registers (ansible-core 2.19) when the executable does not exist.
    result = {"rc": 2, "msg": "Error executing command.", "stdout": "", "stderr": ""}
    missing = helm_problem(result, "/x/helm", variable)
    assert "'/x/helm' does not run (not found or not executable: Error executing command.)" in missing
    assert missing.startswith("gpu_operator_helm_binary: ")


def test_chart_source_names_the_role_variables():
    problem = chart_source("hami-charts/hami", "", "gpu_memory_sharing_hami_chart_ref", "hami", "https://hami.example")
    assert problem["kind"] is None
    assert "gpu_memory_sharing_hami_chart_ref 'hami-charts/hami' names a repository chart" in problem["problem"]
    assert "gpu_memory_sharing_hami_chart_repo_url is empty" in problem["problem"]
    assert "(https://hami.example or a mirror)" in problem["problem"]


def test_chart_file_reads_a_chart_and_says_what_is_wrong(tmp_path):
    path = tmp_path / "hami-2.9.0.tgz"
    data = b"apiVersion: v2\nname: hami\nversion: 2.9.0\n"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("hami/Chart.yaml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    chart = chart_file(str(path), "2.9.0", "gpu_memory_sharing_hami_chart_ref", "hami")
    assert (chart["name"], chart["version"], chart["crds"], chart["problem"]) == ("hami", "2.9.0", [], None)
    other = chart_file(str(path), "2.10.0", "gpu_memory_sharing_hami_chart_ref", "hami")["problem"]
    assert "is hami 2.9.0, but gpu_memory_sharing_hami_chart_version is 2.10.0" in other
    missing = chart_file(str(tmp_path / "none.tgz"), "1", "gpu_operator_chart_ref", "gpu-operator")
    assert list(missing) == ["problem"] and "cannot be read as a packaged Helm chart" in missing["problem"]
