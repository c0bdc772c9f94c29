# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of nvidia-smi outputs: each ``parse_*`` takes the text nvidia-smi printed.

GPUs, instances and processes come out in the shapes of :mod:`.model`; the reports of the commands
that change state (``-cgi``, ``-cci``, ``-dci``, ``-dgi``) in their own small types. The formats
follow recorded real outputs (tests/fixtures/nvidia-smi and the published folder read through
GPUOPS_NVSMI_FIXTURES). Output of another shape raises :class:`ParseError`.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ansible_collections.gpuops.cluster.plugins.module_utils._host.commands import (
    QUERY_COMPUTE_APPS_FIELDS,
    QUERY_GPU_FIELDS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import ErrorKind, ParseError, kind_of
from ansible_collections.gpuops.cluster.plugins.module_utils._host.model import (
    ComputeInstance,
    ComputeProcess,
    GpuInstance,
    GpuState,
)

_NOT_AVAILABLE = {
    "",
    "n/a",
    "[n/a]",
    "[not supported]",
    "not supported",
    "[unknown error]",
    "[insufficient permissions]",
}
_HEADER_CELL = re.compile(r"^[a-z][A-Za-z0-9_.]*(\s*\[[^\]]*\])?$")


# ---------------------------------------------------------------- value helpers


def _value(raw):
    """None for the placeholders nvidia-smi prints when a value is unavailable."""
    text = raw.strip()
    return None if text.casefold() in _NOT_AVAILABLE else text


def _int(raw):
    text = _value(raw)
    if text is None:
        return None
    match = re.match(r"^(-?\d+)", text)
    return int(match.group(1)) if match else None


def mig_mode(raw):
    """'Enabled'/'Disabled' -> 'enabled'/'disabled'; N/A (GPU without MIG) -> None."""
    text = _value(raw or "")
    if text is None:
        return None
    mode = text.casefold()
    if mode not in ("enabled", "disabled"):
        raise ParseError(f"unexpected MIG mode {raw!r} (expected Enabled, Disabled or N/A)")
    return mode


def _device_id(raw):
    """'0x20B210DE', '20B210DE' -> '0x20B210DE' (mig-parted device-filter form).

    Unlike the catalog's normalize_device_id it keeps any value nvidia-smi prints, so a report
    shows what the GPU said even where that is no PCI id of the catalog's form.
    """
    text = _value(raw or "")
    if text is None:
        return None
    text = text[2:] if text.lower().startswith("0x") else text
    return "0x" + text.upper()


# ---------------------------------------------------------------- --query-gpu / --query-compute-apps


def parse_query_csv(text, fields=None):
    """Rows of any ``--query-*`` CSV as dicts keyed by field name.

    With a header (``--format=csv``) the names come from it, units such as `` [MiB]`` dropped;
    without one (``noheader``) ``fields`` gives them. Values keep their text (units included).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True))
    if fields is None:
        fields = [re.sub(r"\s*\[[^\]]*\]$", "", name.strip()) for name in rows[0]]
        rows = rows[1:]
    result = []
    for row in rows:
        if len(row) != len(fields):
            raise ParseError(f"expected {len(fields)} CSV fields {list(fields)}, got {len(row)} in {row!r}")
        result.append({name: row[column].strip() for column, name in enumerate(fields)})
    return result


def parse_query_gpu(text, fields=QUERY_GPU_FIELDS):
    """``--query-gpu`` output (any field subset of QUERY_GPU_FIELDS, header or not) -> GpuState list."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    header = all(_HEADER_CELL.match(cell.strip()) for cell in first.split(","))
    rows = parse_query_csv(text, None if header else list(fields))
    gpus = []
    for position, row in enumerate(rows):
        index = _int(row.get("index", "")) if "index" in row else position
        gpus.append(
            GpuState(
                index=index,
                uuid=_value(row.get("uuid", "")),
                name=_value(row.get("name", row.get("gpu_name", ""))),
                pci_bus_id=_value(row.get("pci.bus_id", "")),
                pci_device_id=_device_id(row.get("pci.device_id", "")),
                memory_total_mib=_int(row.get("memory.total", "")),
                driver_version=_value(row.get("driver_version", "")),
                mig_mode_current=mig_mode(row.get("mig.mode.current", "")),
                mig_mode_pending=mig_mode(row.get("mig.mode.pending", "")),
                pci_subsystem_id=_device_id(row.get("pci.sub_device_id", "")),
            )
        )
    return gpus


def parse_query_compute_apps(text):
    """``--query-compute-apps`` (QUERY_COMPUTE_APPS_FIELDS, noheader) -> ComputeProcess list.

    nvidia-smi does not quote the process name, which may hold commas (``python3 -c a,b``): the
    first two fields and the last one are split off and the rest is the name.
    """
    if "No running processes found" in text:
        return []
    processes = []
    for line in text.splitlines():
        if not line.strip():
            continue
        head = line.split(",", 2)
        if len(head) != 3 or "," not in head[2]:
            raise ParseError(f"expected {len(QUERY_COMPUTE_APPS_FIELDS)} CSV fields, got {line!r}")
        name, used_memory = head[2].rsplit(",", 1)
        pid = _int(head[1])
        if pid is None:
            raise ParseError(f"expected a pid in the second field of {line!r}")
        processes.append(ComputeProcess(head[0].strip(), pid, name.strip(), _int(used_memory)))
    return processes


# ---------------------------------------------------------------- -q -x
# Read only for what --query-gpu lacks (CUDA version, NVLink fabric state): these types are a parse
# step, not another shape of a GPU; read_host copies what it needs into GpuState.


@dataclass
class XmlMigDevice:
    index: int
    gpu_instance_id: int
    compute_instance_id: int
    memory_total_mib: int | None


@dataclass
class XmlGpu:
    pci_bus_id: str
    product_name: str | None
    uuid: str | None
    minor_number: int | None
    pci_device_id: str | None
    pci_subsystem_id: str | None  # <pci_sub_system_id>, e.g. 147F10DE (a100-sxm4-80gb/nvidia-smi-q-x.txt)
    memory_total_mib: int | None
    mig_mode_current: str | None
    mig_mode_pending: str | None
    fabric_state: str | None  # NVLink fabric (NVSwitch systems, Hopper and later); None when N/A
    fabric_status: str | None
    mig_devices: list = field(default_factory=list)


@dataclass
class XmlReport:
    driver_version: str | None
    cuda_version: str | None
    gpus: list


def _text(element, path):
    found = element.find(path)
    return None if found is None or found.text is None else _value(found.text)


def parse_query_xml(text):
    """``nvidia-smi -q -x`` -> XmlReport (driver/CUDA versions, per GPU identity, MIG, fabric)."""
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as exc:
        raise ParseError(f"nvidia-smi -q -x output is not XML: {exc}") from exc
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"expected <nvidia_smi_log>, got <{root.tag}>")
    gpus = []
    for gpu in root.findall("gpu"):
        devices = [
            XmlMigDevice(
                index=int(_text(dev, "index")),
                gpu_instance_id=int(_text(dev, "gpu_instance_id")),
                compute_instance_id=int(_text(dev, "compute_instance_id")),
                memory_total_mib=_int(_text(dev, "fb_memory_usage/total") or ""),
            )
            for dev in gpu.findall("mig_devices/mig_device")
        ]
        gpus.append(
            XmlGpu(
                pci_bus_id=gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
                product_name=_text(gpu, "product_name"),
                uuid=_text(gpu, "uuid"),
                minor_number=_int(_text(gpu, "minor_number") or ""),
                pci_device_id=_device_id(_text(gpu, "pci/pci_device_id") or ""),
                pci_subsystem_id=_device_id(_text(gpu, "pci/pci_sub_system_id") or ""),
                memory_total_mib=_int(_text(gpu, "fb_memory_usage/total") or ""),
                mig_mode_current=mig_mode(_text(gpu, "mig_mode/current_mig") or ""),
                mig_mode_pending=mig_mode(_text(gpu, "mig_mode/pending_mig") or ""),
                fabric_state=_text(gpu, "fabric/state"),
                fabric_status=_text(gpu, "fabric/status"),
                mig_devices=devices,
            )
        )
    return XmlReport(_text(root, "driver_version"), _text(root, "cuda_version"), gpus)


# ---------------------------------------------------------------- mig -lgi / -lci


_NO_INSTANCES = re.compile(r"No (GPU|compute) instances found", re.IGNORECASE)
_LGI_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|$")
_LCI_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)(?:\s+(\d+):(\d+))?\s*\|$")


def _table_rows(text, pattern, what, continuation=None):
    """Match the data rows of an nvidia-smi box table.

    Borders and the header (everything above the ``|====`` rule; a fragment without one is all
    data) are skipped; any other line must match ``pattern`` or ``continuation`` (the second line
    of a two-line row), so a changed layout fails loudly instead of losing rows.
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    rule = next((pos for pos, line in enumerate(lines) if line.startswith("|=")), -1)
    rows = []
    for line in lines[rule + 1 :]:
        if line.startswith("+"):
            continue
        match = pattern.match(line)
        if match:
            rows.append(match)
        elif continuation is None or not continuation.match(line):
            raise ParseError(f"unexpected line in nvidia-smi {what} output: {line!r}")
    return rows


def _without_empty_notes(text):
    """The text without "No GPU/compute instances found" lines (printed per GPU that has none)."""
    return "\n".join(line for line in text.splitlines() if not _NO_INSTANCES.search(line))


def parse_gpu_instances(text):
    """``mig -lgi`` -> GpuInstance list ([] when the output has no instance row)."""
    return [
        GpuInstance(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6]))
        for m in _table_rows(_without_empty_notes(text), _LGI_ROW, "mig -lgi")
    ]


def parse_compute_instances(text):
    """``mig -lci`` -> ComputeInstance list ([] when the output has no instance row)."""
    return [
        ComputeInstance(
            int(m[1]),
            int(m[2]),
            m[3],
            int(m[4]),
            int(m[5]),
            None if m[6] is None else int(m[6]),
            None if m[7] is None else int(m[7]),
        )
        for m in _table_rows(_without_empty_notes(text), _LCI_ROW, "mig -lci")
    ]


# ---------------------------------------------------------------- change commands


@dataclass
class CreatedGpuInstance:
    gpu: int
    instance_id: int
    profile_name: str
    profile_id: int


@dataclass
class CreatedComputeInstance:
    gpu: int
    gpu_instance_id: int
    instance_id: int | None  # absent in the R450 "-cci" line
    profile_name: str
    profile_id: int


@dataclass
class ChangeFailure:
    """An "Unable to ..." line: what failed on which GPU, and why (classified)."""

    gpu: str  # index for instance commands, PCI bus id for MIG mode commands
    action: str
    reason: str
    kind: ErrorKind


@dataclass
class MigChangeResult:
    """What a -cgi/-cci/-dci/-dgi run reported, line by line; ``failures`` empty when all worked."""

    created_gpu_instances: list = field(default_factory=list)
    created_compute_instances: list = field(default_factory=list)
    destroyed_gpu_instances: list = field(default_factory=list)  # (gpu, gi)
    destroyed_compute_instances: list = field(default_factory=list)  # (gpu, gi, ci)
    failures: list = field(default_factory=list)


_CREATED_GI = re.compile(
    r"Successfully created GPU instance ID\s+(\d+) on GPU\s+(\d+) using profile MIG (\S+) \(ID\s+(\d+)\)"
)
_CREATED_CI = re.compile(
    r"Successfully created compute instance(?: ID\s+(\d+))? on GPU\s+(\d+) GPU instance ID\s+(\d+)"
    r" using profile MIG (\S+) \(ID\s+(\d+)\)"
)
_DESTROYED_CI = re.compile(
    r"Successfully destroyed compute instance ID\s+(\d+) from GPU\s+(\d+) GPU instance ID\s+(\d+)"
)
_DESTROYED_GI = re.compile(r"Successfully destroyed GPU instance ID\s+(\d+) from GPU\s+(\d+)")
_UNABLE = re.compile(r"Unable to (.+?) (?:on|from) GPU\s+([0-9A-Fa-f:.]+?)(?: using profile \S+)?:\s*(.+)$")


def parse_mig_change(text):
    """Output of ``mig -cgi [-C]``, ``-cci``, ``-dci`` and ``-dgi`` -> MigChangeResult."""
    result = MigChangeResult()
    for line in text.splitlines():
        line = line.strip()
        if match := _CREATED_GI.match(line):
            result.created_gpu_instances.append(
                CreatedGpuInstance(int(match[2]), int(match[1]), match[3], int(match[4]))
            )
        elif match := _CREATED_CI.match(line):
            ci = None if match[1] is None else int(match[1])
            result.created_compute_instances.append(
                CreatedComputeInstance(int(match[2]), int(match[3]), ci, match[4], int(match[5]))
            )
        elif match := _DESTROYED_CI.match(line):
            result.destroyed_compute_instances.append((int(match[2]), int(match[3]), int(match[1])))
        elif match := _DESTROYED_GI.match(line):
            result.destroyed_gpu_instances.append((int(match[2]), int(match[1])))
        elif match := _UNABLE.match(line):
            reason = match[3].strip()
            result.failures.append(ChangeFailure(match[2], match[1], reason, kind_of(reason)))
    return result


# ---------------------------------------------------------------- -r / --gpu-reset


@dataclass
class GpuResetResult:
    """What ``nvidia-smi [-i N] -r`` reported: the PCI bus ids reset, and one failure per GPU that was not."""

    reset: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # ChangeFailure, ``gpu`` the PCI bus id


_RESET_DONE = re.compile(r"^GPU\s+([0-9A-Fa-f:.]+) was successfully reset\.$")
_RESET_FAILED = re.compile(r"^GPU\s+([0-9A-Fa-f:.]+):\s*(.+)$")
_RESET_UNSUPPORTED = re.compile(r"^Resetting GPU\s+([0-9A-Fa-f:.]+) is not supported\.?$")


def parse_gpu_reset(text):
    """Output of ``nvidia-smi -r`` / ``--gpu-reset`` -> GpuResetResult.

    Formats as recorded: "GPU 00000000:8B:00.0 was successfully reset." per GPU then "All done."
    (a100-sxm4-80gb/gpu-reset-r-success-2gpus.txt); "The following GPUs could not be reset:" then
    "  GPU 00000000:8B:00.0: In use by another client" per GPU
    (a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt, ...-not-supported-nvlink.txt);
    "Resetting GPU 00000000:00:03.0 is not supported." (a100-unspecified/gpu-reset-error-not-supported.txt).
    """
    result = GpuResetResult()
    failing = False
    for line in text.splitlines():
        line = line.strip()
        if match := _RESET_DONE.match(line):
            result.reset.append(match[1])
        elif match := _RESET_UNSUPPORTED.match(line):
            result.failures.append(ChangeFailure(match[1], "reset", "Not Supported", ErrorKind.NOT_SUPPORTED))
        elif line.startswith("The following GPUs could not be reset"):
            failing = True
        elif failing and (match := _RESET_FAILED.match(line)):
            reason = match[2].strip()
            result.failures.append(ChangeFailure(match[1], "reset", reason, kind_of(reason)))
    return result
