# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The nvidia-smi test double: real rules, outputs that parse and match recorded real outputs."""

import json
import os
import pathlib
import subprocess

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._host.commands import (
    create_gpu_instances_args,
    query_compute_apps_args,
    query_gpu_args,
    query_xml_args,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import ErrorKind, classify_error
from ansible_collections.gpuops.cluster.plugins.module_utils._host.parsers import (
    parse_compute_instances,
    parse_gpu_instances,
    parse_mig_change,
    parse_query_compute_apps,
    parse_query_gpu,
    parse_query_xml,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._host.extra_parsers import (
    MigModeOutcome,
    parse_gpu_instance_placements,
    parse_gpu_instance_profiles,
    parse_list_devices,
    parse_mig_mode_change,
)

DOUBLE = pathlib.Path(__file__).resolve().parents[2] / "doubles" / "nvidia_smi" / "nvidia-smi"
ENGINE_COLUMNS = 61  # -lgip columns from SM on (SM, DEC, ENC / CE, JPEG, OFA) are not modelled


@pytest.fixture
def smi(tmp_path):
    env = dict(os.environ, NVSMI_DOUBLE_STATE=str(tmp_path / "state.json"))

    def run(*args, rc=0):
        done = subprocess.run([str(DOUBLE), *args], env=env, capture_output=True, text=True, check=False)
        assert done.returncode == rc, done.stdout + done.stderr
        return done.stdout

    run.state = lambda: json.loads((tmp_path / "state.json").read_text())
    run.calls = lambda: (tmp_path / "calls.log").read_text().splitlines()
    return run


def host(smi, product, count=1, mig=True):
    smi("--double-init", product, str(count))
    if mig:
        smi("-mig", "1")
    return smi


def test_lgip_matches_the_recorded_a100_80gb_pcie_table(smi, seed_fixture):
    host(smi, "NVIDIA A100 80GB PCIe")
    recorded = seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-mig-lgip-i0.txt").splitlines()
    produced = smi("mig", "-i", "0", "-lgip").splitlines()
    assert [len(line) for line in produced] == [len(line) for line in recorded]
    assert [line[:ENGINE_COLUMNS] for line in produced] == [line[:ENGINE_COLUMNS] for line in recorded]
    assert parse_gpu_instance_profiles("\n".join(produced))[3].profile_name == "3g.40gb"


def test_seven_1g10gb_on_h100_match_the_recorded_run(smi, read_published_text):
    """GI ids, placements and every table of a recorded H100 session, byte for byte."""
    host(smi, "NVIDIA H100 80GB HBM3")
    for argv, recorded in (
        (("-cgi", "19,19,19,19,19,19,19", "-C"), "notes-mig-cgi-19x7-C.txt"),
        (("-lgi",), "notes-mig-lgi-7x1g10gb.txt"),
        (("-lci",), "notes-mig-lci-7x1g10gb.txt"),
        (("-dci",), "notes-mig-dci-all-i0.txt"),
        (("-dgi",), "notes-mig-dgi-all-i0.txt"),
    ):
        assert smi("mig", "-i", "0", *argv) == read_published_text("h100-80gb-hbm3/" + recorded)


@pytest.mark.parametrize(
    ("cgi", "recorded", "rc"),
    [
        (["9,19,14,19"], "mig-cgi-9-19-14-19-no-C-nvidia-guide.txt", 0),
        (["19,19,14,9"], "mig-cgi-19-19-14-9-error-insufficient-resources-nvidia-guide.txt", 255),
        (["9,3g.20gb", "-C"], "mig-cgi-9-3g20gb-C-nvidia-guide.txt", 0),
    ],
    ids=str,
)
def test_driver_placement_choice_matches_the_mig_user_guide(smi, read_published_text, cgi, recorded, rc):
    host(smi, "NVIDIA A100-SXM4-40GB")
    assert smi("mig", "-cgi", *cgi, rc=rc) == read_published_text("a100-sxm4-40gb/" + recorded)


@pytest.fixture
def read_published_text(published_nvsmi_dir):
    return lambda relative: (published_nvsmi_dir / relative).read_text(encoding="utf-8")


def test_enable_on_busy_gpu_stays_pending_until_reboot(smi, read_published_text):
    host(smi, "NVIDIA A100 80GB PCIe", mig=False)
    smi("--double-client", "0", "1234", "nvidia-persistenced")
    out = smi("-i", "0", "-mig", "1")
    recorded = read_published_text("a100-sxm4-40gb/mig-enable-warning-pending-enable-in-use-nvidia-guide.txt")
    assert out == recorded.replace("00000000:07:00.0", smi.state()["gpus"][0]["pci_bus_id"])
    [change] = parse_mig_mode_change(out)
    assert (change.outcome, change.kind) == (MigModeOutcome.PENDING, ErrorKind.IN_USE)
    [row] = parse_query_gpu(smi(*query_gpu_args()))
    assert (row.mig_mode_current, row.mig_mode_pending) == ("disabled", "enabled")
    assert smi("mig", "-lgi", rc=6).strip() == "No MIG-enabled devices found."
    assert smi.state()["reset_required"] is True
    smi("--simulate-reboot")
    [row] = parse_query_gpu(smi(*query_gpu_args()))
    assert (row.mig_mode_current, row.mig_mode_pending) == ("enabled", "enabled")
    assert smi.state()["reset_required"] is False


def test_reboot_keeps_mig_mode_and_drops_instances(smi):
    host(smi, "NVIDIA H100 80GB HBM3", count=2)
    smi("mig", "-i", "1", "-cgi", "0", "-C")
    assert len(parse_gpu_instances(smi("mig", "-lgi"))) == 1
    smi("--simulate-reboot")
    assert smi("mig", "-lgi", rc=6).strip() == "No GPU instances found."
    assert {r.mig_mode_current for r in parse_query_gpu(smi(*query_gpu_args()))} == {"enabled"}


def test_explicit_placements_max_instances_and_bad_profiles(smi):
    host(smi, "NVIDIA A100-SXM4-80GB")
    created = parse_mig_change(smi(*create_gpu_instances_args(0, [(9, 0), (14, 4)])))
    assert [(g.instance_id, g.profile_name) for g in created.created_gpu_instances] == [(1, "3g.40gb"), (5, "2g.20gb")]
    assert [(g.placement_start, g.placement_size) for g in parse_gpu_instances(smi("mig", "-lgi"))] == [
        (0, 4),
        (4, 2),
    ]
    overlap = smi(*create_gpu_instances_args(0, [(19, 5)]), rc=255)
    assert classify_error(255, overlap).kind is ErrorKind.INSUFFICIENT_RESOURCES
    not_a_placement = smi(*create_gpu_instances_args(0, [(14, 6)]), rc=2)
    assert classify_error(2, not_a_placement).kind is ErrorKind.INVALID_ARGUMENT
    assert classify_error(255, smi("mig", "-dgi", rc=255)).kind is ErrorKind.IN_USE  # CIs still inside
    smi("mig", "-dci")
    smi("mig", "-dgi")
    smi("mig", "-cgi", "5")
    assert classify_error(255, smi("mig", "-cgi", "5", rc=255)).kind is ErrorKind.INSUFFICIENT_RESOURCES
    assert "Invalid Argument" in smi("mig", "-cgi", "8g.80gb", rc=2)


def test_busy_gpu_instance_cannot_be_destroyed(smi, read_published_text):
    host(smi, "NVIDIA A100-SXM4-80GB")
    smi("mig", "-cgi", "19", "-C")
    [gi] = parse_gpu_instances(smi("mig", "-lgi"))
    smi("--double-process", "0", str(gi.instance_id), "4321", "python", "500")
    out = smi("mig", "-i", "0", "-dci", rc=255)
    assert classify_error(255, out).kind is ErrorKind.IN_USE
    [apps] = parse_query_compute_apps(smi(*query_compute_apps_args()))
    assert (apps.pid, apps.process_name, apps.used_memory_mib) == (4321, "python", 500)
    smi("--simulate-reboot")
    assert parse_query_compute_apps(smi(*query_compute_apps_args())) == []


def test_disable_with_clients_fails_like_the_recording(smi, read_published_text):
    host(smi, "NVIDIA H100 80GB HBM3")
    smi("--double-client", "0", "99", "dcgm")
    out = smi("-mig", "0", rc=255)
    bus = smi.state()["gpus"][0]["pci_bus_id"]
    recorded = read_published_text("gh200-480gb/mig-disable-error-in-use-by-another-client.txt")
    assert out == recorded.replace("00000009:01:00.0", bus)


def test_gpu_without_mig(smi):
    host(smi, "Tesla T4", mig=False)
    out = smi("-i", "0", "-mig", "1")
    [change] = parse_mig_mode_change(out)
    assert (change.outcome, change.kind) == (MigModeOutcome.FAILED, ErrorKind.NOT_SUPPORTED)
    assert smi("mig", "-lgip", rc=6).strip() == "No MIG-supported devices found."
    [row] = parse_query_gpu(smi(*query_gpu_args()))
    assert (row.name, row.mig_capable, row.pci_device_id) == ("Tesla T4", False, "0x1EB810DE")
    assert parse_query_xml(smi(*query_xml_args())).gpus[0].mig_mode_current is None


def test_list_devices_and_xml_parse(smi):
    host(smi, "NVIDIA A100-SXM4-80GB", count=2)
    smi("mig", "-i", "1", "-cgi", "9,14,19", "-C")
    gpus = parse_list_devices(smi("-L"))
    assert [len(g.mig_devices) for g in gpus] == [0, 3]
    assert [d.name for d in gpus[1].mig_devices] == ["3g.40gb", "2g.20gb", "1g.10gb"]
    report = parse_query_xml(smi("-q", "-x"))
    assert [g.uuid for g in report.gpus] == [g.uuid for g in gpus] and report.cuda_version == "12.2"
    lgipp = parse_gpu_instance_placements(smi("mig", "-i", "0", "-lgipp"))
    assert {(p.profile_id, p.starts) for p in lgipp} >= {(9, (0, 4)), (0, (0,))}


def test_driver_unloaded_exits_9(smi):
    host(smi, "NVIDIA L4", mig=False)
    smi("--double-driver", "unloaded")
    out = smi(*query_gpu_args(), rc=9)
    assert classify_error(9, out).kind is ErrorKind.DRIVER_NOT_LOADED


def test_injected_cgi_failure_hits_one_gpu_in_the_recorded_form_until_turned_off(smi, read_published_text):
    """--double-fail 1 -cgi: GPU 1's -cgi fails as the recorded in-use failure (exit status 255, nvidia-smi(1)'s
    "other error"; the recording has none) and creates nothing there; GPU 0 and -cci are not affected."""
    host(smi, "NVIDIA A100-SXM4-80GB", count=2)
    smi("--double-fail", "1", "-cgi")

    out = smi("mig", "-i", "1", "-cgi", "20,19", "-C", rc=255)
    smi("mig", "-i", "0", "-cgi", "19", "-C")
    gpus = smi.state()["gpus"]

    recorded = read_published_text("gh200-480gb/mig-cgi-error-in-use-by-another-client.txt")
    assert out == recorded.replace("GPU  0", "GPU  1")
    assert classify_error(255, out).kind is ErrorKind.IN_USE
    assert [len(gpu["gpu_instances"]) for gpu in gpus] == [1, 0]
    smi("--double-fail", "1", "-cgi", "off")
    smi("mig", "-i", "1", "-cgi", "19", "-C")
    assert len(smi.state()["gpus"][1]["gpu_instances"]) == 1


def test_injected_failure_refuses_calls_it_does_not_model(smi, tmp_path):
    host(smi, "NVIDIA A100-SXM4-80GB")
    env = dict(os.environ, NVSMI_DOUBLE_STATE=str(tmp_path / "state.json"))
    argv = [str(DOUBLE), "--double-fail", "0", "-dgi"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "valid: -cgi, -cci" in done.stderr


def test_every_invocation_is_logged(smi):
    host(smi, "NVIDIA A100-SXM4-80GB")
    smi("mig", "-lgip")
    smi("mig", "-cgi", "19", "-C")
    assert smi.calls() == ["nvidia-smi -mig 1", "nvidia-smi mig -lgip", "nvidia-smi mig -cgi 19 -C"]


def test_cci_matches_the_recorded_run(smi, read_published_text):
    """Partial compute instances in a 3g.40gb GPU instance: the -cci and -lci outputs of an A100 80GB PCIe."""
    host(smi, "NVIDIA A100 80GB PCIe")
    smi("mig", "-i", "0", "-cgi", "9:0")
    created = smi("mig", "-i", "0", "-gi", "1", "-cci", "1c.3g.40gb,1c.3g.40gb")
    assert created == read_published_text("a100-80gb-pcie/mig-cci-1c3g40gb-x2.txt")
    listed = parse_compute_instances(smi("mig", "-i", "0", "-lci"))
    recorded = parse_compute_instances(read_published_text("a100-80gb-pcie/mig-lci-gi1.txt"))
    assert listed == recorded


def test_cci_by_profile_id_fills_the_gpu_instance_then_refuses(smi):
    host(smi, "NVIDIA A100-SXM4-80GB")
    smi("mig", "-i", "0", "-cgi", "9:0")
    out = smi("mig", "-i", "0", "-gi", "1", "-cci", "1,0")
    assert [(ci.profile_name, ci.profile_id) for ci in parse_mig_change(out).created_compute_instances] == [
        ("2c.3g.40gb", 1),
        ("1c.3g.40gb", 0),
    ]
    refused = smi("mig", "-i", "0", "-gi", "1", "-cci", "0", rc=255)
    assert "Insufficient Resources" in refused
    smi("mig", "-i", "0", "-gi", "1", "-cci", "2c.1g.10gb", rc=2)


def test_placement_without_start_differs_from_the_recorded_mixed_run(smi, read_published_text):
    """Documented limit of the double: `-cgi 9,14,19 -C` without placements is not the driver's choice.

    The real A100 80GB PCIe run put 3g@0, 2g@4, 1g@6 (GI ids 1, 5, 13); the double puts 3g@4, 2g@0,
    1g@2 (GI ids 2, 3, 9). The GI id of each (size, start) slot agrees with the recording.
    """
    host(smi, "NVIDIA A100 80GB PCIe")
    recorded = parse_mig_change(read_published_text("a100-80gb-pcie/mig-cgi-9-14-19-C.txt"))
    produced = parse_mig_change(smi("mig", "-i", "0", "-cgi", "9,14,19", "-C"))
    assert [gi.instance_id for gi in recorded.created_gpu_instances] == [1, 5, 13]
    assert [gi.instance_id for gi in produced.created_gpu_instances] == [2, 3, 9]
    placements = [(gi.profile_name, gi.placement_start) for gi in parse_gpu_instances(smi("mig", "-lgi"))]
    assert sorted(placements) == [("1g.10gb", 2), ("2g.20gb", 0), ("3g.40gb", 4)]
    # With the recorded placements given explicitly, the double gives the recorded ids.
    host(smi, "NVIDIA A100 80GB PCIe")
    explicit = parse_mig_change(smi("mig", "-i", "0", "-cgi", "9:0,14:4,19:6", "-C"))
    assert explicit == recorded


def test_reset_without_clients_makes_the_pending_mode_effective_like_the_recording(smi, read_published_text):
    """`nvidia-smi -r` on two idle A100-SXM4-80GB (a100-sxm4-80gb/gpu-reset-r-success-2gpus.txt), byte for byte."""
    host(smi, "NVIDIA A100-SXM4-80GB", count=2, mig=False)
    smi("--double-pending-needs-reset", "0")
    out = smi("-i", "0", "-mig", "1")
    bus = [gpu["pci_bus_id"] for gpu in smi.state()["gpus"]]
    recorded = read_published_text("a100-unspecified/mig-enable-warning-pending-enable-not-supported.txt")
    assert out == recorded.replace("00000000:00:03.0", bus[0])
    first = parse_query_gpu(smi(*query_gpu_args()))[0]
    assert (first.mig_mode_current, first.mig_mode_pending) == ("disabled", "enabled")
    assert smi.state()["reset_required"] is True

    out = smi("-r")

    recorded = read_published_text("a100-sxm4-80gb/gpu-reset-r-success-2gpus.txt")
    assert out == recorded.replace("00000000:8B:00.0", bus[0]).replace("00000000:8C:00.0", bus[1])
    assert classify_error(0, out) is None
    assert [r.mig_mode_current for r in parse_query_gpu(smi(*query_gpu_args()))] == ["enabled", "disabled"]
    assert smi.state()["reset_required"] is False
    assert smi.calls()[-2] == "nvidia-smi -r"


def test_reset_of_one_gpu_prints_its_line_and_drops_its_instances(smi, read_published_text):
    """`nvidia-smi -i 2 --gpu-reset` (a100-pcie-40gb/gpu-reset-i2-success.txt): one GPU, its instances gone."""
    host(smi, "NVIDIA A100-PCIE-40GB", count=2)
    smi("mig", "-i", "0", "-cgi", "19", "-C")
    smi("mig", "-i", "1", "-cgi", "19", "-C")
    bus = smi.state()["gpus"][0]["pci_bus_id"]
    recorded = read_published_text("a100-pcie-40gb/gpu-reset-i2-success.txt")
    assert smi("-i", "0", "--gpu-reset") == recorded.replace("00000000:61:00.0", bus)
    assert [gi.gpu for gi in parse_gpu_instances(smi("mig", "-lgi"))] == [1]


def test_reset_with_clients_fails_like_the_recording_and_resets_nothing(smi, read_published_text):
    """Clients on GPUs (a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt), byte for byte."""
    host(smi, "NVIDIA A100-SXM4-80GB", count=2, mig=False)
    smi("--double-client", "0", "777", "nv-hostengine")
    smi("--double-client", "1", "778", "nvidia-persistenced")
    smi("-mig", "1")  # both stay pending: their clients hold them
    bus = [gpu["pci_bus_id"] for gpu in smi.state()["gpus"]]

    out = smi("-r", rc=255)  # the exit status is not recorded; 255 is nvidia-smi(1)'s "other error"

    recorded = read_published_text("a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt")
    assert out == recorded.replace("00000000:8B:00.0", bus[0]).replace("00000000:8C:00.0", bus[1])
    assert classify_error(255, out).kind is ErrorKind.IN_USE
    assert classify_error(0, out).kind is ErrorKind.IN_USE  # a failure whatever the exit status
    assert [r.mig_mode_current for r in parse_query_gpu(smi(*query_gpu_args()))] == ["disabled", "disabled"]
    one = smi("-i", "1", "-r", rc=255)  # one GPU: the closing sentence's singular form is not recorded
    assert one.splitlines()[:2] == [
        "The following GPUs could not be reset:",
        f"  GPU {bus[1]}: In use by another client",
    ]
    assert smi.state()["reset_required"] is True


def test_subsystem_id_is_the_recorded_one(smi, published_nvsmi_dir):
    """--query-gpu pci.sub_device_id and -q -x <pci_sub_system_id> give the id recorded for the product
    (a100-sxm4-80gb/nvidia-smi-q-x.txt), N/A for a product without a recording."""
    recorded = parse_query_xml((published_nvsmi_dir / "a100-sxm4-80gb/nvidia-smi-q-x.txt").read_text()).gpus[0]
    host(smi, "NVIDIA A100-SXM4-80GB", mig=False)
    [row] = parse_query_gpu(smi(*query_gpu_args()))
    [xml] = parse_query_xml(smi(*query_xml_args())).gpus
    assert row.pci_subsystem_id == xml.pci_subsystem_id == recorded.pci_subsystem_id == "0x147F10DE"
    host(smi, "NVIDIA A100 80GB PCIe", mig=False)
    [row] = parse_query_gpu(smi(*query_gpu_args()))
    assert (row.pci_device_id, row.pci_subsystem_id) == ("0x20B510DE", None)
    assert parse_query_xml(smi(*query_xml_args())).gpus[0].pci_subsystem_id is None


def test_a_product_outside_the_catalog_is_played_by_its_name_only(smi):
    # The GPU of the seed document 002 (its nvidia-smi -L), which the collection plans from gpuops_gpu_catalog_extra.
    host(smi, "NVIDIA GeForce RTX 3080 Ti Laptop GPU", mig=False)
    assert smi("-L").startswith("GPU 0: NVIDIA GeForce RTX 3080 Ti Laptop GPU (UUID: GPU-")
    refused = smi(*query_xml_args(), rc=2)
    assert "not in the GPU catalog; only -L is played for it" in refused
