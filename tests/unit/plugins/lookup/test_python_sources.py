# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lookup python_sources: the mig role's boot-time restore gets the collection's packages as one mapping."""

import pathlib

import pytest
from ansible.errors import AnsibleLookupError
from ansible_collections.gpuops.cluster.plugins.lookup.python_sources import LookupModule, python_sources

MODULE_UTILS = pathlib.Path(__file__).resolve().parents[4] / "plugins" / "module_utils"
PREFIX = "ansible_collections.gpuops.cluster.plugins.module_utils"


def test_every_module_of_the_packages_by_its_dotted_name_packages_by_theirs():
    sources = python_sources(["_gpu", "_host"])

    expected = {
        f"{PREFIX}.{path.parent.name}" if path.stem == "__init__" else f"{PREFIX}.{path.parent.name}.{path.stem}"
        for package in ("_gpu", "_host")
        for path in (MODULE_UTILS / package).glob("*.py")
    }
    assert set(sources) == expected
    assert sources[f"{PREFIX}._host.mig_reconcile"] == (MODULE_UTILS / "_host" / "mig_reconcile.py").read_text()
    assert f"{PREFIX}._plan.cluster" not in sources


def test_the_lookup_returns_one_mapping_and_refuses_a_folder_that_is_not_a_package():
    assert LookupModule().run(["_gpu"]) == [python_sources(["_gpu"])]
    with pytest.raises(AnsibleLookupError, match="'_nothing' is not a package of"):
        python_sources(["_nothing"])
