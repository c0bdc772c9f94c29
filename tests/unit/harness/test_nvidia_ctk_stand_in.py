# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia-ctk stand-in's `cdi generate` names the devices `nvidia-smi -L` lists, as nvidia-ctk does."""

import json
import os
import pathlib
import subprocess
import sys

DOUBLES = pathlib.Path(__file__).resolve().parents[2] / "doubles"
sys.path.insert(0, str(DOUBLES))
import nvidia_ctk  # noqa: E402

NVIDIA_SMI = DOUBLES / "nvidia_smi/nvidia-smi"


def run_double(state, *arguments):
    environment = {**os.environ, "NVSMI_DOUBLE_STATE": str(state)}
    return subprocess.run(
        [sys.executable, str(NVIDIA_SMI), *arguments], env=environment, check=True, text=True, capture_output=True
    ).stdout


def test_gpus_and_mig_devices_by_index_and_uuid(tmp_path):
    state = tmp_path / "state.json"
    run_double(state, "--double-init", "NVIDIA A100-SXM4-80GB", "2")
    run_double(state, "-i", "0", "-mig", "1")
    run_double(state, "mig", "-i", "0", "-cgi", "1g.10gb,1g.10gb", "-C")
    listing = run_double(state, "-L")
    names = [device["name"] for device in nvidia_ctk.cdi_devices(listing)]
    uuids = [line.rsplit("UUID: ", 1)[1].rstrip(")") for line in listing.splitlines()]
    assert names == ["0", uuids[0], "0:0", uuids[1], "0:1", uuids[2], "1", uuids[3], "all"]
    every = nvidia_ctk.cdi_devices(listing)[-1]["containerEdits"]["deviceNodes"]
    assert every == [{"path": "/dev/nvidia0"}, {"path": "/dev/nvidia1"}]


def test_generate_writes_where_the_refresh_service_says_and_fails_without_a_driver(tmp_path, monkeypatch):
    output = tmp_path / "run/cdi/nvidia.yaml"
    monkeypatch.setenv("NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", str(output))
    monkeypatch.setattr(nvidia_ctk, "CALL_LOG", tmp_path / "calls.log")
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    assert nvidia_ctk.main(["cdi", "generate"]) == 1
    assert not output.exists()
    (tmp_path / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA L4 (UUID: GPU-0a1b)'\n")
    (tmp_path / "nvidia-smi").chmod(0o755)
    assert nvidia_ctk.main(["cdi", "generate"]) == 0
    spec = json.loads(output.read_text())
    assert (spec["kind"], [device["name"] for device in spec["devices"]]) == (
        "nvidia.com/gpu",
        ["0", "GPU-0a1b", "all"],
    )
