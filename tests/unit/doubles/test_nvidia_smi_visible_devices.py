# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia-smi double in a container: NVIDIA_VISIBLE_DEVICES decides what `nvidia-smi -L` lists
(all, none, void, indexes, GPU and MIG UUIDs), and the node's read-only state is never written."""

import os
import pathlib
import re
import subprocess

import pytest

DOUBLE = pathlib.Path(__file__).resolve().parents[2] / "doubles" / "nvidia_smi" / "nvidia-smi"


def smi(tmp_path, *args, visible=None):
    environment = {**os.environ, "NVSMI_DOUBLE_STATE": str(tmp_path / "state.json")}
    environment.pop("NVIDIA_VISIBLE_DEVICES", None)
    if visible is not None:
        environment["NVIDIA_VISIBLE_DEVICES"] = visible
    return subprocess.run([str(DOUBLE), *args], capture_output=True, text=True, env=environment, check=False)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """Two A100s; GPU 1 with MIG enabled and a 3g.40gb and a 1g.10gb device."""
    tmp_path = tmp_path_factory.mktemp("visible")
    assert smi(tmp_path, "--double-init", "NVIDIA A100-SXM4-80GB", "2").returncode == 0
    assert smi(tmp_path, "-i", "1", "-mig", "1").returncode == 0
    assert smi(tmp_path, "mig", "-i", "1", "-cgi", "3g.40gb,1g.10gb", "-C").returncode == 0
    listed = smi(tmp_path, "-L").stdout
    return tmp_path, re.findall(r"UUID: (GPU-[0-9a-f-]+)", listed), re.findall(r"UUID: (MIG-[0-9a-f-]+)", listed)


def test_all_lists_every_device(host):
    tmp_path, _gpus, _migs = host
    assert smi(tmp_path, "-L", visible="all").stdout == smi(tmp_path, "-L").stdout


@pytest.mark.parametrize("value", ["none", "void", ""])
def test_no_device(host, value):
    result = smi(host[0], "-L", visible=value)
    assert (result.returncode, result.stdout.strip()) == (6, "No devices were found")


def test_a_gpu_uuid_or_index_shows_that_gpu_as_gpu_0(host):
    tmp_path, gpus, _migs = host
    for value in (gpus[1], "1"):
        listed = smi(tmp_path, "-L", visible=value).stdout.strip().splitlines()
        assert listed[0] == f"GPU 0: NVIDIA A100-SXM4-80GB (UUID: {gpus[1]})" and len(listed) == 3


def test_a_mig_uuid_shows_only_that_mig_device_under_its_gpu(host):
    tmp_path, gpus, migs = host
    listed = smi(tmp_path, "-L", visible=migs[1]).stdout.strip().splitlines()
    assert listed == [
        f"GPU 0: NVIDIA A100-SXM4-80GB (UUID: {gpus[1]})",
        f"  MIG 1g.10gb     Device  0: (UUID: {migs[1]})",
    ]


def test_a_list_of_gpus(host):
    tmp_path, gpus, _migs = host
    listed = smi(tmp_path, "-L", visible=f"{gpus[0]},{gpus[1]}").stdout
    assert re.findall(r"^GPU (\d): .*UUID: (GPU-[0-9a-f-]+)", listed, re.M) == [("0", gpus[0]), ("1", gpus[1])]


def test_an_unknown_device_fails_and_the_state_is_not_written(host):
    tmp_path, _gpus, _migs = host
    before = (tmp_path / "state.json").stat().st_mtime_ns
    result = smi(tmp_path, "-L", visible="GPU-00000000-0000-0000-0000-000000000000")
    assert result.returncode == 1 and "unknown device" in result.stderr
    assert smi(tmp_path, "-L", visible="all").returncode == 0
    assert (tmp_path / "state.json").stat().st_mtime_ns == before


def test_cdi_devices_show_the_devices_they_name(host):
    tmp_path, gpus, migs = host
    environment = {
        **os.environ,
        "NVSMI_DOUBLE_STATE": str(tmp_path / "state.json"),
        "NVSMI_DOUBLE_VISIBLE_" + migs[0].replace("-", "_"): migs[0],
        "NVSMI_DOUBLE_VISIBLE_" + gpus[0].replace("-", "_"): gpus[0],
    }
    environment.pop("NVIDIA_VISIBLE_DEVICES", None)
    listed = subprocess.run([str(DOUBLE), "-L"], capture_output=True, text=True, env=environment, check=True).stdout
    assert listed.splitlines() == [
        f"GPU 0: NVIDIA A100-SXM4-80GB (UUID: {gpus[0]})",
        f"GPU 1: NVIDIA A100-SXM4-80GB (UUID: {gpus[1]})",
        f"  MIG 3g.40gb     Device  0: (UUID: {migs[0]})",
    ]
