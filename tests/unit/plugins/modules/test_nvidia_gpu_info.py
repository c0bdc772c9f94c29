# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_gpu_info against recorded outputs (run_command patched, exact argv asserted) and the double."""

import json
import os
import pathlib
import subprocess
from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.modules import nvidia_gpu_info

BIN = "/usr/bin/nvidia-smi"
DOUBLE = pathlib.Path(__file__).resolve().parents[3] / "doubles" / "nvidia_smi" / "nvidia-smi"
QUERY = [
    BIN,
    "--query-gpu=index,uuid,name,pci.bus_id,pci.device_id,memory.total,driver_version,mig.mode.current,mig.mode.pending,pci.sub_device_id",
    "--format=csv,noheader,nounits",
]
XML = [BIN, "-q", "-x"]
LGI = [BIN, "mig", "-lgi"]
LCI = [BIN, "mig", "-lci"]
APPS = [BIN, "--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"]
DRIVER_UNREACHABLE = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)


class Exited(Exception):
    pass


def leave(module, **result):
    """Stands in for exit_json and fail_json: stops main() and hands the result to the test."""
    raise Exited(result)


def run_module(responses, binary=BIN, check_mode=False):
    """Run the module; ``responses`` maps each expected argv (in order) to (rc, stdout, stderr)."""
    calls = []

    def run_command(module, argv, **kwargs):
        expected_argv, answer = responses[len(calls)]
        calls.append(argv)
        assert argv == expected_argv
        return answer

    args = {"_ansible_check_mode": True} if check_mode else {}
    with (
        patch_module_args(args),
        patch.object(AnsibleModule, "run_command", run_command),
        patch.object(AnsibleModule, "get_bin_path", lambda module, name: binary),
        patch.object(AnsibleModule, "exit_json", leave),
        patch.object(AnsibleModule, "fail_json", lambda module, **r: leave(module, failed=True, **r)),
        patch.object(nvidia_gpu_info, "nvswitch_present", lambda: False),
        pytest.raises(Exited) as exited,
    ):
        nvidia_gpu_info.main()
    assert len(calls) == len(responses)
    return exited.value.args[0]


def test_missing_nvidia_smi_is_not_a_failure():
    result = run_module([], binary=None)
    assert not result.get("failed") and result["changed"] is False
    assert result["gpu_detected"] is False and "not found" in result["reason"]
    assert result["ansible_facts"]["nvidia_gpus"] == [] and result["ansible_facts"]["nvidia_gpu_detected"] is False


def test_driver_not_loaded_reports_reason():
    result = run_module([(QUERY, (9, DRIVER_UNREACHABLE, ""))])
    assert result["gpu_detected"] is False and not result.get("failed")
    assert result["reason"].startswith("NVIDIA-SMI has failed because it couldn't communicate")


def test_no_devices(read_published_text):
    result = run_module([(QUERY, (6, read_published_text("tesla-t4/nvidia-smi-i1-error-no-devices.txt"), ""))])
    assert result["gpu_detected"] is False and result["reason"] == "No devices were found"


@pytest.fixture
def read_published_text(published_nvsmi_dir):
    return lambda relative: (published_nvsmi_dir / relative).read_text(encoding="utf-8")


def test_mig_gpu_with_recorded_tables(read_published_text):
    """A100-SXM4-80GB: identity from its recorded -q -x, instances from recorded -lgi/-lci tables."""
    xml = read_published_text("a100-sxm4-80gb/nvidia-smi-q-x.txt")
    # The one GPU of that -q -x, as --query-gpu prints it (same values, CSV form).
    query = (
        "0, GPU-513536b6-7d19-9063-b049-1e69664bb298, NVIDIA A100-SXM4-80GB, 00000000:01:00.0, 0x20B210DE, 81920,"
        " 535.54.03, Enabled, Enabled, 0x147F10DE\n"
    )
    result = run_module(
        [
            (QUERY, (0, query, "")),
            (XML, (0, xml, "")),
            (LGI, (0, read_published_text("a100-80gb-pcie/mig-lgi.txt"), "")),
            (LCI, (0, read_published_text("a100-80gb-pcie/mig-lci-gi1.txt"), "")),
            (APPS, (0, "", "")),
        ]
    )
    [gpu] = result["gpus"]
    assert (result["driver_version"], result["cuda_version"]) == ("535.54.03", "12.2")
    assert (gpu["catalog_product"], gpu["catalog_known"], gpu["mig_capable"]) == ("NVIDIA A100-SXM4-80GB", True, True)
    assert (gpu["mig_mode_current"], gpu["mig_mode_pending"], gpu["mig_mode_change_pending"]) == (
        "enabled",
        "enabled",
        False,
    )
    assert [(gi["id"], gi["profile_name"], gi["placement_start"]) for gi in gpu["gpu_instances"]] == [
        (1, "3g.40gb", 4),
        (2, "3g.40gb", 0),
    ]
    assert [ci["id"] for ci in gpu["gpu_instances"][0]["compute_instances"]] == [0, 1]
    assert result["ansible_facts"]["nvidia_gpus"] == result["gpus"] and result["changed"] is False
    # Facts are variables too: none may take the name of a role variable (nvidia_driver_version).
    assert sorted(result["ansible_facts"]) == [
        "nvidia_gpu_cuda_version",
        "nvidia_gpu_detected",
        "nvidia_gpu_driver_version",
        "nvidia_gpu_nvswitch_present",
        "nvidia_gpu_reason",
        "nvidia_gpus",
    ]
    assert result["ansible_facts"]["nvidia_gpu_driver_version"] == result["driver_version"]


def test_unknown_product_warns_and_skips_mig_queries(seed_fixture):
    """Seed 002's laptop GPU (name, bus id, driver, memory, UUID from its own -L and nvidia-smi table)."""
    [name] = seed_fixture("nvidia-smi/rtx-3080ti-laptop-seed002-query-gpu-name-noheader.txt").split("\n", 1)[:1]
    query = (
        f"0, GPU-1b17e588-c712-9244-37de-93a8a77ebe6d, {name}, 00000000:01:00.0, [N/A], 16384, 535.98, [N/A], [N/A],"
        " [N/A]\n"
    )
    with patch.object(AnsibleModule, "warn") as warn:
        result = run_module(
            [
                (QUERY, (0, query, "")),
                (
                    XML,
                    (
                        0,
                        "<nvidia_smi_log><driver_version>535.98</driver_version><cuda_version>12.2</cuda_version></nvidia_smi_log>",
                        "",
                    ),
                ),
                (APPS, (0, "", "")),
            ]
        )
    [gpu] = result["gpus"]
    assert (gpu["catalog_product"], gpu["catalog_known"], gpu["mig_capable"], gpu["gpu_instances"]) == (
        None,
        False,
        False,
        [],
    )
    warn.assert_called_once_with(
        "product NVIDIA GeForce RTX 3080 Ti Laptop GPU is not in the gpuops catalog; MIG planning unavailable"
    )


def test_unexpected_error_fails_with_command(read_published_text):
    query = (
        "0, GPU-513536b6-7d19-9063-b049-1e69664bb298, NVIDIA A100-SXM4-80GB, 00000000:01:00.0, 0x20B210DE, 81920,"
        " 535.54.03, Enabled, Enabled, 0x147F10DE\n"
    )
    denied = read_published_text("unknown-gpu/mig-lci-error-insufficient-permissions.txt")
    xml = read_published_text("a100-sxm4-80gb/nvidia-smi-q-x.txt")
    lgi = read_published_text("a100-80gb-pcie/mig-lgi.txt")
    result = run_module([(QUERY, (0, query, "")), (XML, (0, xml, "")), (LGI, (0, lgi, "")), (LCI, (4, denied, ""))])
    assert result["failed"] and result["cmd"] == LCI and result["rc"] == 4 and result["stdout"] == denied
    assert "Insufficient Permissions" in result["msg"]


def double_runner(tmp_path):
    env = dict(os.environ, NVSMI_DOUBLE_STATE=str(tmp_path / "state.json"))

    def run(*args):
        done = subprocess.run([str(DOUBLE), *args], env=env, capture_output=True, text=True, check=False)
        return done.returncode, done.stdout, done.stderr

    return run, tmp_path / "calls.log"


def test_against_the_double_in_check_mode(tmp_path):
    """The module reads the double's real-format outputs: MIG pending on a busy GPU, instances on the other."""
    run, log = double_runner(tmp_path)
    run("--double-init", "NVIDIA H100 80GB HBM3", "2")
    run("--double-client", "1", "4242", "nvidia-persistenced")
    assert run("-i", "0", "-mig", "1")[0] == 0 and run("-i", "1", "-mig", "1")[0] == 0
    run("mig", "-i", "0", "-cgi", "9,14:0,19", "-C")
    run("--double-process", "0", "2", "777", "python", "1024")
    log.unlink()

    def run_command(module, argv, **kwargs):
        return run(*argv[1:])

    with (
        patch_module_args({"_ansible_check_mode": True}),
        patch.object(AnsibleModule, "run_command", run_command),
        patch.object(AnsibleModule, "get_bin_path", lambda module, name: str(DOUBLE)),
        patch.object(AnsibleModule, "exit_json", leave),
        pytest.raises(Exited) as exited,
    ):
        nvidia_gpu_info.main()
    result = exited.value.args[0]
    first, second = result["gpus"]
    assert [
        (gi["id"], gi["profile_name"], gi["placement_start"], gi["placement_size"]) for gi in first["gpu_instances"]
    ] == [
        (2, "3g.40gb", 4, 4),
        (3, "2g.20gb", 0, 2),
        (9, "1g.10gb", 2, 1),
    ]
    assert first["processes"] == [{"pid": 777, "process_name": "python", "used_memory_mib": 1024}]
    assert (second["mig_mode_current"], second["mig_mode_pending"], second["mig_mode_change_pending"]) == (
        "disabled",
        "enabled",
        True,
    )
    assert second["catalog_product"] == "NVIDIA H100 80GB HBM3" and result["changed"] is False
    assert log.read_text().splitlines() == [
        " ".join([str(DOUBLE).rsplit("/", 1)[1], *argv[1:]]) for argv in (QUERY, XML, LGI, LCI, APPS)
    ]
    assert json.loads((tmp_path / "state.json").read_text())["reset_required"] is True


def test_output_of_an_unexpected_shape_fails_with_command_and_output(read_published_text):
    query = (
        "0, GPU-513536b6-7d19-9063-b049-1e69664bb298, NVIDIA A100-SXM4-80GB, 00000000:01:00.0, 0x20B210DE, 81920,"
        " 535.54.03, Enabled, Enabled, 0x147F10DE\n"
    )
    xml = read_published_text("a100-sxm4-80gb/nvidia-smi-q-x.txt")
    lgi = read_published_text("a100-80gb-pcie/mig-lgi.txt").replace("MIG 3g.40gb", "MIG 3g.40gb ???", 1)
    result = run_module([(QUERY, (0, query, "")), (XML, (0, xml, "")), (LGI, (0, lgi, ""))])
    assert result["failed"] and result["cmd"] == LGI and result["stdout"] == lgi and result["rc"] == 0
    assert "cannot read" in result["msg"] and "???" in result["msg"]
