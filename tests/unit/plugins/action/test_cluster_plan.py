# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The cluster_plan action's own helpers, without a playbook run."""

import pytest
from ansible_collections.gpuops.cluster.plugins.action.cluster_plan import _write_all


def test_a_failed_write_replaces_no_file_and_leaves_no_temporary_file(tmp_path):
    (tmp_path / "capacity.json").write_text("old\n")
    texts = {str(tmp_path / "capacity.json"): "new\n", str(tmp_path / "missing" / "plan.txt"): "new\n"}
    with pytest.raises(FileNotFoundError):
        _write_all(texts)
    assert [path.name for path in tmp_path.iterdir() if path.is_file()] == ["capacity.json"]
    assert (tmp_path / "capacity.json").read_text() == "old\n"
