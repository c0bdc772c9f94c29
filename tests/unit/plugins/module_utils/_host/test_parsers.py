# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia-smi parsers and command lines on recorded real nvidia-smi outputs.

Seed cases read tests/fixtures/nvidia-smi (sources in the .source.txt beside each file). Published
cases are discovered by file name in the folder GPUOPS_NVSMI_FIXTURES names; without it they skip.
"""

import os
import pathlib
import re

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._host.commands import (
    create_gpu_instances_args,
    destroy_compute_instances_args,
    destroy_gpu_instances_args,
    list_compute_instances_args,
    list_gpu_instances_args,
    query_compute_apps_args,
    query_gpu_args,
    set_mig_mode_args,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import ErrorKind, ParseError, classify_error
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
    list_gpu_instance_placements_args,
    parse_gpu_instance_placements,
    parse_gpu_instance_profiles,
    parse_list_devices,
    parse_mig_mode_change,
)

SEED = "nvidia-smi/"


def published(*globs):
    """Relative paths of published outputs matching any glob; one skipping case when the folder is absent."""
    folder = pathlib.Path(os.environ.get("GPUOPS_NVSMI_FIXTURES", "/nonexistent"))
    found = sorted(
        {str(p.relative_to(folder)) for g in globs for p in folder.glob(g) if not p.name.endswith(".source.txt")}
    )
    return found or ["<GPUOPS_NVSMI_FIXTURES unset>"]


@pytest.fixture
def read_published(published_nvsmi_dir):
    return lambda relative: (published_nvsmi_dir / relative).read_text(encoding="utf-8")


# ---------------------------------------------------------------- seed fixtures (asserted values)


def test_seed_lgip_a100_80gb_pcie(seed_fixture):
    rows = parse_gpu_instance_profiles(seed_fixture(SEED + "a100-80gb-pcie-seed004-mig-lgip-i0.txt"))
    assert [(r.profile_name, r.profile_id, r.instances_free, r.instances_total, r.memory_gib) for r in rows] == [
        ("1g.10gb", 19, 7, 7, 9.5),
        ("1g.10gb+me", 20, 1, 1, 9.5),
        ("2g.20gb", 14, 3, 3, 19.5),
        ("3g.40gb", 9, 2, 2, 39.25),
        ("4g.40gb", 5, 1, 1, 39.25),
        ("7g.80gb", 0, 1, 1, 79.0),
    ]
    assert {r.gpu for r in rows} == {0}


def test_seed_cgi_9_14_19_with_compute_instances(seed_fixture):
    result = parse_mig_change(seed_fixture(SEED + "a100-80gb-pcie-seed004-mig-cgi-9-14-19-C.txt"))
    assert [(g.instance_id, g.profile_name, g.profile_id) for g in result.created_gpu_instances] == [
        (1, "3g.40gb", 9),
        (5, "2g.20gb", 14),
        (13, "1g.10gb", 19),
    ]
    assert [(c.gpu_instance_id, c.instance_id, c.profile_id) for c in result.created_compute_instances] == [
        (1, 0, 2),
        (5, 0, 1),
        (13, 0, 0),
    ]
    assert result.failures == []


def test_seed_cgi_seven_1g10gb(seed_fixture):
    result = parse_mig_change(seed_fixture(SEED + "a100-80gb-pcie-seed004-mig-cgi-19x7-C.txt"))
    assert [g.instance_id for g in result.created_gpu_instances] == [9, 7, 8, 11, 12, 13, 14]
    assert len(result.created_compute_instances) == 7


@pytest.mark.parametrize(
    ("name", "gpus", "mig_names"),
    [
        (
            "a100-80gb-pcie-seed004-L-mig-7x1g10gb.txt",
            [("NVIDIA A100 80GB PCIe", "GPU-9f0cc172-1db7-8b47-7302-fa9b2ade0c7b")],
            ["1g.10gb"] * 7,
        ),
        (
            "a100-80gb-pcie-seed004-L-mig-mixed.txt",
            [("NVIDIA A100 80GB PCIe", "GPU-9f0cc172-1db7-8b47-7302-fa9b2ade0c7b")],
            ["3g.40gb", "2g.20gb", "1g.10gb"],
        ),
        ("tesla-t4-seed001-L.txt", [("Tesla T4", "GPU-491287c9-bc95-b926-a488-9503064e72a1")], []),
        (
            "rtx-3080ti-laptop-seed002-L.txt",
            [("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "GPU-1b17e588-c712-9244-37de-93a8a77ebe6d")],
            [],
        ),
        (
            "gtx-1080ti-1060-seed002-L-2gpus.txt",
            [
                ("NVIDIA GeForce GTX 1080 Ti", "GPU-5ba4538b-234f-2c18-6a7a-458d0a7fb348"),
                ("NVIDIA GeForce GTX 1060", "GPU-c6dc4e3b-7f0d-4e22-ac41-479ae1c6fbdc"),
            ],
            [],
        ),
    ],
)
def test_seed_list_devices(seed_fixture, name, gpus, mig_names):
    parsed = parse_list_devices(seed_fixture(SEED + name))
    assert [(g.name, g.uuid) for g in parsed] == gpus
    assert [d.name for g in parsed for d in g.mig_devices] == mig_names
    assert [d.device_index for g in parsed for d in g.mig_devices] == list(range(len(mig_names)))
    assert all(re.fullmatch(r"MIG-[0-9a-f-]{36}", d.uuid) for g in parsed for d in g.mig_devices)


def test_seed_query_single_fields(seed_fixture):
    [row] = parse_query_gpu(
        seed_fixture(SEED + "a100-80gb-pcie-seed004-query-mig-mode-current-noheader.txt"), ["mig.mode.current"]
    )
    assert row.mig_mode_current == "enabled" and row.mig_capable
    [row] = parse_query_gpu(seed_fixture(SEED + "rtx-3080ti-laptop-seed002-query-gpu-name-noheader.txt"), ["gpu_name"])
    assert row.name == "NVIDIA GeForce RTX 3080 Ti Laptop GPU"


# ---------------------------------------------------------------- published outputs (every applicable file)


@pytest.mark.parametrize("relative", published("*/*lgip*.txt"), ids=str)
def test_published_lgip(read_published, relative):
    text = read_published(relative)
    if "error" in relative:
        error = classify_error(6, text)
        assert error.kind is ErrorKind.NO_MIG_DEVICES
        return
    if "lgipp" in relative:
        rows = parse_gpu_instance_placements(text)
        assert len(rows) == text.count("Profile ID")
        assert all(r.starts and r.size >= 1 for r in rows)
        return
    rows = parse_gpu_instance_profiles(text)
    assert len(rows) == len(re.findall(r"\|\s+\d+\s+MIG ", text))
    assert all(re.fullmatch(r"\d+g\.\d+gb([+-][\w.]+)*", r.profile_name) for r in rows)
    assert all(0 <= r.instances_free <= r.instances_total and r.memory_gib > 0 for r in rows)


def test_published_lgipp_values(read_published):
    rows = parse_gpu_instance_placements(read_published("a100-sxm4-40gb/mig-lgipp-nvidia-guide.txt"))
    assert {(r.profile_id, r.starts, r.size) for r in rows} == {
        (19, (0, 1, 2, 3, 4, 5, 6), 1),
        (20, (0, 1, 2, 3, 4, 5, 6), 1),
        (15, (0, 2, 4, 6), 2),
        (14, (0, 2, 4), 2),
        (9, (0, 4), 4),
        (5, (0,), 4),
        (0, (0,), 8),
    }


def test_published_lgip_multi_gpu_fragment(read_published):
    rows = parse_gpu_instance_profiles(read_published("h200/mig-lgip-fragment-multi-gpu.txt"))
    assert [(r.gpu, r.profile_name, r.profile_id) for r in rows] == [
        (2, "3g.71gb", 9),
        (2, "4g.71gb", 5),
        (2, "7g.141gb", 0),
        (3, "1g.18gb", 19),
        (3, "1g.18gb+me", 20),
    ]


@pytest.mark.parametrize("relative", published("*/*-lgi-*.txt", "*/*-lgi.txt"), ids=str)
def test_published_lgi(read_published, relative):
    text = read_published(relative)
    rows = parse_gpu_instances(text)
    assert len(rows) == len(re.findall(r"\|\s+\d+\s+MIG ", text)) > 0
    assert all(r.placement_size >= 1 and r.placement_start >= 0 for r in rows)


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("a100-80gb-pcie/mig-lgi.txt", [(1, "3g.40gb", 9, 4, 4), (2, "3g.40gb", 9, 0, 4)]),
        (
            "rtx-pro-6000-blackwell-server/mig-lgi-i0-mixed.txt",
            [(5, "1g.24gb", 14, 6, 3), (6, "1g.24gb", 14, 9, 3), (1, "2g.48gb", 5, 0, 6)],
        ),
        ("a100-pcie-40gb/mig-lgi-r460-narrow.txt", [(1, "3g.20gb", 9, 0, 4), (2, "3g.20gb", 9, 4, 4)]),
    ],
    ids=str,
)
def test_published_lgi_values(read_published, relative, expected):
    rows = parse_gpu_instances(read_published(relative))
    assert [
        (r.instance_id, r.profile_name, r.profile_id, r.placement_start, r.placement_size) for r in rows
    ] == expected


@pytest.mark.parametrize("relative", published("*/*-lci-*.txt", "*/*-lci.txt"), ids=str)
def test_published_lci(read_published, relative):
    text = read_published(relative)
    if "error" in relative:
        assert classify_error(4, text).kind is ErrorKind.INSUFFICIENT_PERMISSIONS
        return
    rows = parse_compute_instances(text)
    assert len(rows) == len(re.findall(r"\|\s+\d+\s+\d+\s+MIG ", text)) > 0


def test_published_lci_layouts(read_published):
    new = parse_compute_instances(read_published("a100-80gb-pcie/mig-lci-gi1.txt"))
    assert [(c.gpu_instance_id, c.profile_name, c.instance_id, c.placement_start) for c in new] == [
        (1, "1c.3g.40gb", 0, 0),
        (1, "1c.3g.40gb", 1, 1),
    ]
    old = parse_compute_instances(read_published("a100-sxm4-40gb/mig-lci-gi1-old-layout-nvidia-guide.txt"))
    assert [(c.instance_id, c.placement_start) for c in old] == [(0, None), (1, None), (2, None)]


@pytest.mark.parametrize("relative", published("*/nvidia-smi-L*.txt"), ids=str)
def test_published_list_devices(read_published, relative):
    text = read_published(relative)
    parsed = parse_list_devices(text)
    assert len(parsed) == len(re.findall(r"^GPU \d+:", text, re.MULTILINE))
    devices = [d for g in parsed for d in g.mig_devices]
    assert len(devices) == text.count("  MIG ")
    assert all(d.uuid.startswith("MIG-") for d in devices)


def test_published_old_mig_uuid_form(read_published):
    parsed = parse_list_devices(read_published("a100-pcie-40gb/nvidia-smi-L-6gpus-mig-old-uuid-format.txt"))
    assert [len(g.mig_devices) for g in parsed] == [0, 0, 0, 0, 2, 2]
    first = parsed[4].mig_devices[0]
    assert (first.uuid, first.gpu_instance_id, first.compute_instance_id) == (
        "MIG-GPU-fb8bbc70-d551-45f9-43d4-9734f9cddb2c/1/0",
        1,
        0,
    )


@pytest.mark.parametrize("relative", published("*/query-gpu-*.txt"), ids=str)
def test_published_query_gpu(read_published, relative):
    text = read_published(relative)
    if "allfields" in relative:
        [row] = parse_query_gpu(text)
        assert row.uuid.startswith("GPU-") and row.pci_device_id.startswith("0x") and row.memory_total_mib > 10000
        assert row.mig_mode_current == (
            "enabled" if relative.endswith("-mig.txt") else ("disabled" if "nomig" in relative else None)
        )
        return
    fields = re.search(r"--query-gpu=(\S+)", read_published(relative[:-4] + ".source.txt"))[1].split(",")
    rows = parse_query_gpu(text, fields)
    assert len(rows) == len([line for line in text.splitlines() if line.strip()]) - (0 if "noheader" in relative else 1)
    if "mig.mode.current" in fields:
        assert all(r.mig_mode_current in ("enabled", "disabled") for r in rows)


def test_published_query_gpu_values(read_published):
    rows = parse_query_gpu(read_published("unknown-gpu/query-gpu-uuid-mig-mode-current-pending-csv-4gpus.txt"))
    assert [(r.uuid[:12], r.mig_mode_current, r.mig_mode_pending) for r in rows] == [
        ("GPU-ec845691", "enabled", "enabled"),
        ("GPU-91672fbd", "disabled", "disabled"),
        ("GPU-b4199570", "disabled", "disabled"),
        ("GPU-1a4dff29", "disabled", "disabled"),
    ]
    [t4] = parse_query_gpu(read_published("tesla-t4/query-gpu-index-name-memory-fabric-csv.txt"))
    assert (t4.name, t4.memory_total_mib, t4.mig_capable) == ("Tesla T4", 15360, False)


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (
            "a100-sxm4-80gb/nvidia-smi-q-x.txt",
            ("535.54.03", "12.2", "NVIDIA A100-SXM4-80GB", "0x20B210DE", "enabled", [3, 4, 5, 6]),
        ),
        ("tesla-t4/nvidia-smi-q-x.txt", ("515.105.01", "11.7", "Tesla T4", "0x1EB810DE", None, [])),
        # As recorded: this A10G (a cloud VM) reports PCI device id 000000DE.
        ("a10g/nvidia-smi-q-x.txt", ("515.105.01", "11.7", "NVIDIA A10G", "0x000000DE", None, [])),
    ],
    ids=str,
)
def test_published_query_xml(read_published, relative, expected):
    report = parse_query_xml(read_published(relative))
    gpu = report.gpus[0]
    got = (report.driver_version, report.cuda_version, gpu.product_name, gpu.pci_device_id, gpu.mig_mode_current)
    assert (*got, [d.gpu_instance_id for d in gpu.mig_devices]) == expected
    assert gpu.uuid.startswith("GPU-") and gpu.memory_total_mib > 10000 and gpu.fabric_state is None


@pytest.mark.parametrize(
    ("relative", "subsystem_id"),
    [
        ("a100-sxm4-80gb/nvidia-smi-q-x.txt", "0x147F10DE"),
        ("tesla-t4/nvidia-smi-q-x.txt", "0x12A210DE"),
        ("h100-80gb-hbm3/query-gpu-csv-allfields-mig.txt", "0x16C110DE"),
        ("h200/query-gpu-csv-allfields-mig.txt", "0x18BE10DE"),
    ],
    ids=str,
)
def test_published_subsystem_ids(read_published, relative, subsystem_id):
    """The PCI subsystem id mig-parted's device-filter "<device>:<subsystem>" compares (pkg/types/device.go
    DeviceID.Matches): -q -x <pci><pci_sub_system_id>, --query-gpu pci.sub_device_id."""
    text = read_published(relative)
    gpu = parse_query_xml(text).gpus[0] if relative.endswith("-q-x.txt") else parse_query_gpu(text)[0]
    assert gpu.pci_subsystem_id == subsystem_id


def test_query_gpu_without_a_subsystem_id():
    [row] = parse_query_gpu(
        "0, GPU-x, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 0x20B210DE, 81920, 535.54.03, Enabled, Enabled, [N/A]\n"
    )
    assert (row.pci_device_id, row.pci_subsystem_id) == ("0x20B210DE", None)


@pytest.mark.parametrize("relative", published("*/*cgi*.txt", "*/*cci*.txt", "*/*dci*.txt", "*/*dgi*.txt"), ids=str)
def test_published_instance_changes(read_published, relative):
    text = read_published(relative)
    result = parse_mig_change(text)
    counted = (
        len(result.created_gpu_instances)
        + len(result.created_compute_instances)
        + len(result.destroyed_gpu_instances)
        + len(result.destroyed_compute_instances)
    )
    assert counted == text.count("Successfully")
    if "error" in relative:
        kind = ErrorKind.IN_USE if "in-use" in relative else ErrorKind.INSUFFICIENT_RESOURCES
        assert [f.kind for f in result.failures] == [kind]
        assert classify_error(255, text).kind is kind
    else:
        assert result.failures == [] and classify_error(0, text) is None


@pytest.mark.parametrize("relative", published("*/mig-enable*.txt", "*/mig-disable*.txt"), ids=str)
def test_published_mig_mode_changes(read_published, relative):
    text = read_published(relative)
    changes = parse_mig_mode_change(text)
    assert len(changes) == len(re.findall(r"MIG Mode for GPU|pending (enable|disable) state", text)) > 0
    if "pending" in relative:
        assert {c.outcome for c in changes} == {MigModeOutcome.PENDING}
        assert classify_error(0, text).kind is ErrorKind.PENDING_MIG_MODE
    elif "error" in relative:
        assert MigModeOutcome.FAILED in {c.outcome for c in changes}
        expected = ErrorKind.NOT_SUPPORTED if "not-supported" in relative else ErrorKind.IN_USE
        assert next(c.kind for c in changes if c.outcome is MigModeOutcome.FAILED) is expected
    else:
        assert {c.outcome for c in changes} == {MigModeOutcome.APPLIED}
        assert all(c.enabled == ("enable" in relative) for c in changes)


def test_published_pending_reason(read_published):
    [change] = parse_mig_mode_change(
        read_published("a100-unspecified/mig-enable-warning-pending-enable-not-supported.txt")
    )
    assert (change.pci_bus_id, change.kind) == ("00000000:00:03.0", ErrorKind.NOT_SUPPORTED)
    [change] = parse_mig_mode_change(
        read_published("a100-80gb-pcie/mig-enable-warning-pending-in-use-by-another-client.txt")
    )
    assert (change.pci_bus_id, change.enabled, change.kind) == ("00000001:00:00.0", True, ErrorKind.IN_USE)


@pytest.mark.parametrize(
    ("relative", "kind"),
    [
        ("tesla-t4/nvidia-smi-i1-error-no-devices.txt", ErrorKind.NO_DEVICES),
        ("tesla-t4/mig-lgip-error-no-mig-enabled-devices.txt", ErrorKind.NO_MIG_DEVICES),
        (
            "rtx-pro-6000-blackwell-workstation/mig-lgip-error-no-mig-supported-devices.txt",
            ErrorKind.NO_MIG_DEVICES,
        ),
        ("unknown-gpu/mig-lci-error-insufficient-permissions.txt", ErrorKind.INSUFFICIENT_PERMISSIONS),
        ("a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt", ErrorKind.IN_USE),
        ("a100-sxm4-80gb/gpu-reset-r-error-not-supported-nvlink.txt", ErrorKind.NOT_SUPPORTED),
        ("a100-unspecified/gpu-reset-error-not-supported.txt", ErrorKind.NOT_SUPPORTED),
    ],
    ids=str,
)
def test_published_errors_classify(read_published, relative, kind):
    error = classify_error(3, read_published(relative))
    assert error.kind is kind and error.message


# ---------------------------------------------------------------- classification and command lines


def test_driver_not_loaded_by_exit_code():
    text = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running."
    )
    error = classify_error(9, text)
    assert error.kind is ErrorKind.DRIVER_NOT_LOADED and error.message == text


def test_table_with_unexpected_row_fails_loudly(seed_fixture):
    text = seed_fixture(SEED + "a100-80gb-pcie-seed004-mig-lgip-i0.txt").replace("9.50       No", "9.50       ??")
    with pytest.raises(ParseError, match="unexpected line"):
        parse_gpu_instance_profiles(text)


def test_no_instances_lists_are_empty():
    assert parse_gpu_instances("No GPU instances found.\n") == []
    assert parse_compute_instances("No compute instances found.\n") == []


def test_command_lines():
    assert query_gpu_args() == [
        "--query-gpu=index,uuid,name,pci.bus_id,pci.device_id,memory.total,driver_version,mig.mode.current,mig.mode.pending,pci.sub_device_id",
        "--format=csv,noheader,nounits",
    ]
    assert query_compute_apps_args() == [
        "--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
        "--format=csv,noheader,nounits",
    ]
    assert list_gpu_instances_args() == ["mig", "-lgi"]
    assert list_compute_instances_args(1) == ["mig", "-i", "1", "-lci"]
    assert list_gpu_instance_placements_args(0) == ["mig", "-i", "0", "-lgipp"]
    assert set_mig_mode_args(2, True) == ["-i", "2", "-mig", "1"]
    assert set_mig_mode_args(0, False) == ["-i", "0", "-mig", "0"]
    assert create_gpu_instances_args(0, [(9, 4), (14, 0), (19, None)]) == [
        "mig",
        "-i",
        "0",
        "-cgi",
        "9:4,14:0,19",
        "-C",
    ]
    assert create_gpu_instances_args(1, [(0, 0)], default_compute_instance=False) == [
        "mig",
        "-i",
        "1",
        "-cgi",
        "0:0",
    ]
    assert destroy_compute_instances_args(0) == ["mig", "-i", "0", "-dci"]
    assert destroy_compute_instances_args(0, 1, [0, 1]) == ["mig", "-i", "0", "-gi", "1", "-ci", "0,1", "-dci"]
    assert destroy_gpu_instances_args(0, [7, 8]) == ["mig", "-i", "0", "-gi", "7,8", "-dgi"]
    with pytest.raises(ValueError):
        create_gpu_instances_args(0, [])


def test_instance_rows_are_kept_beside_a_no_instances_line(read_published):
    """[] only when there is no row: a "No ... found" line for another GPU must not hide the rows."""
    lgi = read_published("a100-80gb-pcie/mig-lgi.txt") + "No GPU instances found.\n"
    lci = read_published("a100-80gb-pcie/mig-lci-gi1.txt") + "No compute instances found.\n"
    assert parse_gpu_instances(lgi) == parse_gpu_instances(read_published("a100-80gb-pcie/mig-lgi.txt"))
    assert parse_gpu_instances(lgi) != []
    assert [ci.profile_name for ci in parse_compute_instances(lci)] == ["1c.3g.40gb", "1c.3g.40gb"]


def test_compute_apps_process_name_with_commas():
    """nvidia-smi does not quote process names: the name is what lies between the pid and the last field."""
    text = "GPU-1, 4242, python3 -c import a,b, 2048\nGPU-2, 7, /usr/bin/x, [N/A]\n"
    processes = parse_query_compute_apps(text)
    assert [(p.gpu_uuid, p.pid, p.process_name, p.used_memory_mib) for p in processes] == [
        ("GPU-1", 4242, "python3 -c import a,b", 2048),
        ("GPU-2", 7, "/usr/bin/x", None),
    ]
    with pytest.raises(ParseError):
        parse_query_compute_apps("GPU-1, 4242\n")
