# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""cdi_refresh_state: the toolkit's nvidia-cdi-refresh runs again exactly when its specification is missing or stale."""

import pytest
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_container_toolkit import cdi_refresh_state

UNITS = (
    {"load_state": "loaded", "unit_file_state": "enabled"},
    {"load_state": "loaded", "unit_file_state": "disabled"},
)
MISSING_UNITS = ({"load_state": "not-found", "unit_file_state": ""},) * 2
DEP, SPEC = "/lib/modules/6.12.0/modules.dep", "/var/run/cdi/nvidia.yaml"


def files(dep=100, ctk=50, spec=None, smi=True):
    def stat(mtime):
        return {"exists": False} if mtime is None else {"exists": True, "mtime": mtime}

    return [stat(dep), stat(ctk), stat(spec), {"exists": smi}, {"exists": False}]


def state(units=UNITS, module=True, **kwargs):
    return cdi_refresh_state(units, files(**kwargs), module, DEP, SPEC)


def test_a_missing_specification_is_generated():
    assert state() == {"installed": True, "refresh": True, "message": f"to generate: {SPEC} is missing"}


@pytest.mark.parametrize(("dep", "ctk", "refresh"), [(100, 50, True), (50, 100, True), (50, 50, False)])
def test_a_specification_older_than_the_module_list_or_nvidia_ctk_is_generated_again(dep, ctk, refresh):
    result = state(dep=dep, ctk=ctk, spec=75)
    assert result["refresh"] is refresh
    assert result["message"] == (
        f"to generate: {SPEC} is older than the driver or nvidia-ctk" if refresh else f"up to date: {SPEC}"
    )


def test_without_the_units_nothing_is_generated_and_it_says_so():
    result = state(units=MISSING_UNITS)
    assert (result["installed"], result["refresh"]) == (False, False)
    assert result["message"].startswith("NOT generated: the toolkit's nvidia-cdi-refresh units are not installed")
    assert not state(units=())["installed"]


@pytest.mark.parametrize(("module", "smi"), [(False, True), (True, False)])
def test_without_a_driver_the_units_are_enabled_but_nothing_is_generated(module, smi):
    result = state(module=module, smi=smi)
    assert (result["installed"], result["refresh"]) == (True, False)
    assert result["message"].startswith(
        f"NOT generated: no NVIDIA driver (no nvidia-smi, or no NVIDIA kernel module in {DEP})"
    )


def test_without_nvidia_ctk_nothing_is_generated():
    assert state(ctk=None)["message"] == "NOT generated: nvidia-ctk is missing"
