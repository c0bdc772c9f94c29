# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the plan goes when gpuops_plan_dir is not given, and which folders cannot take it."""

import os

from ansible_collections.gpuops.cluster.plugins.action.cluster_plan import _dest_problem, default_dest


def test_inside_an_inventory_folder_hidden_so_ansible_never_reads_it_as_inventory(tmp_path):
    assert default_dest({"ansible_inventory_sources": [str(tmp_path)]}) == str(tmp_path / ".gpuops-plan")


def test_beside_an_inventory_file(tmp_path):
    hosts = tmp_path / "hosts.yml"
    hosts.write_text("all: {}\n")
    assert default_dest({"ansible_inventory_sources": [str(hosts)]}) == str(tmp_path / ".gpuops-plan")


def test_in_the_current_directory_when_the_inventory_is_not_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_dest({"ansible_inventory_sources": ["gpu-1,gpu-2,"]}) == os.path.join(tmp_path, ".gpuops-plan")
    assert default_dest({}) == os.path.join(tmp_path, ".gpuops-plan")


def test_an_unwritable_folder_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    problem = _dest_problem(str(tmp_path / "new" / "plan"))
    assert problem == (
        f"the plan cannot be written to {tmp_path / 'new' / 'plan'}: {tmp_path} is not writable (a read-only "
        "install?); set gpuops_plan_dir to another folder (it is created if absent)"
    )
