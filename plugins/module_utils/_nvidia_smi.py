"""nvidia-smi command lines and parsers for its outputs (pure Python, no Ansible).

Used by the nvidia_gpu_info and nvidia_mig modules, the boot-time MIG restore and the
nvidia-smi test double's tests. Every ``*_args`` builder returns the arguments that follow the
nvidia-smi binary (callers prepend the path they found); every ``parse_*`` function takes the
text nvidia-smi printed and returns plain dataclasses. The formats follow recorded real outputs
(tests/fixtures/nvidia-smi and the published folder read through GPUOPS_NVSMI_FIXTURES).

Errors are classified by :func:`classify_error` into :class:`ErrorKind` so callers can act on
them (wait for clients to go, plan a reboot, report an unsupported GPU) without matching text.
"""

from __future__ import annotations

import csv
import enum
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

# Fields of the one query nvidia_gpu_info makes per GPU, in output order.
QUERY_GPU_FIELDS = (
    "index",
    "uuid",
    "name",
    "pci.bus_id",
    "pci.device_id",
    "memory.total",
    "driver_version",
    "mig.mode.current",
    "mig.mode.pending",
)
QUERY_COMPUTE_APPS_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")

# nvidia-smi(1) RETURN VALUE: 6 "query was unsuccessful", 9 "NVIDIA driver is not loaded".
RC_NOT_FOUND = 6
RC_DRIVER_NOT_LOADED = 9

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


class NvidiaSmiParseError(ValueError):
    """Output that does not have the shape the parser expects; str() says what was seen."""


# ---------------------------------------------------------------- command lines


def query_gpu_args(fields=QUERY_GPU_FIELDS):
    """``--query-gpu`` as CSV without header or units: one line per GPU, fields in order."""
    return ["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]


def query_compute_apps_args(fields=QUERY_COMPUTE_APPS_FIELDS):
    """``--query-compute-apps``: one line per compute process (its GPU's UUID first)."""
    return ["--query-compute-apps=" + ",".join(fields), "--format=csv,noheader,nounits"]


def query_xml_args():
    """``-q -x``: the full device query as XML (CUDA version, fabric state, MIG devices)."""
    return ["-q", "-x"]


def list_devices_args():
    """``-L``: GPUs and MIG devices with their UUIDs."""
    return ["-L"]


def _gpu_selector(gpu):
    return [] if gpu is None else ["-i", str(gpu)]


def list_gpu_instances_args(gpu=None):
    """``mig -lgi``: existing GPU instances (all GPUs when ``gpu`` is None)."""
    return ["mig", *_gpu_selector(gpu), "-lgi"]


def list_compute_instances_args(gpu=None):
    """``mig -lci``: existing compute instances."""
    return ["mig", *_gpu_selector(gpu), "-lci"]


def list_gpu_instance_profiles_args(gpu=None):
    """``mig -lgip``: GPU instance profiles with free/total instance counts."""
    return ["mig", *_gpu_selector(gpu), "-lgip"]


def list_gpu_instance_placements_args(gpu=None):
    """``mig -lgipp``: the placements each GPU instance profile allows."""
    return ["mig", *_gpu_selector(gpu), "-lgipp"]


def set_mig_mode_args(gpu, enabled):
    """``-i N -mig 1|0``: request MIG mode on one GPU (may stay pending until a reset/reboot)."""
    return ["-i", str(gpu), "-mig", "1" if enabled else "0"]


def create_gpu_instances_args(gpu, instances, default_compute_instance=True):
    """``mig -i N -cgi P[:START],... [-C]``: create GPU instances in the given order.

    ``instances`` is a sequence of ``(profile_id, start)`` pairs; ``start`` None lets the driver
    choose the placement. nvidia-smi's help: "A profile tuple consists of a profile name or ID and
    an optional placement specifier, which consists of a colon and a placement start index."
    ``-C`` also creates the default compute instance (the whole GI) in each new GPU instance.
    """
    if not instances:
        raise ValueError("create_gpu_instances_args needs at least one (profile_id, start) pair")
    tuples = []
    for profile_id, start in instances:
        tuples.append(str(int(profile_id)) if start is None else f"{int(profile_id)}:{int(start)}")
    args = ["mig", "-i", str(gpu), "-cgi", ",".join(tuples)]
    return [*args, "-C"] if default_compute_instance else args


def create_compute_instances_args(gpu, gpu_instance, ci_profile_ids):
    """``mig -i N -gi G -cci P,...``: compute instances by profile id in one GPU instance."""
    return ["mig", "-i", str(gpu), "-gi", str(gpu_instance), "-cci", ",".join(str(p) for p in ci_profile_ids)]


def destroy_compute_instances_args(gpu, gpu_instance=None, compute_instances=None):
    """``mig -i N [-gi G] [-ci C,...] -dci``: destroy compute instances (all of them by default)."""
    args = ["mig", "-i", str(gpu)]
    if gpu_instance is not None:
        args += ["-gi", str(gpu_instance)]
    if compute_instances:
        args += ["-ci", ",".join(str(c) for c in compute_instances)]
    return [*args, "-dci"]


def destroy_gpu_instances_args(gpu, gpu_instances=None):
    """``mig -i N [-gi G,...] -dgi``: destroy GPU instances (all of them by default)."""
    args = ["mig", "-i", str(gpu)]
    if gpu_instances:
        args += ["-gi", ",".join(str(g) for g in gpu_instances)]
    return [*args, "-dgi"]


def gpu_reset_args(gpu):
    """``-i N --gpu-reset``: reset one GPU (makes a pending MIG mode effective where supported)."""
    return ["-i", str(gpu), "--gpu-reset"]


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
        raise NvidiaSmiParseError(f"unexpected MIG mode {raw!r} (expected Enabled, Disabled or N/A)")
    return mode


def normalize_device_id(raw):
    """'0x20B210DE', '20B210DE' -> '0x20B210DE' (mig-parted device-filter form)."""
    text = _value(raw or "")
    if text is None:
        return None
    text = text[2:] if text.lower().startswith("0x") else text
    return "0x" + text.upper()


# ---------------------------------------------------------------- --query-gpu / --query-compute-apps


@dataclass
class GpuQueryRow:
    """One GPU of ``--query-gpu`` (QUERY_GPU_FIELDS)."""

    index: int
    uuid: str
    name: str
    pci_bus_id: str
    pci_device_id: str | None
    memory_total_mib: int | None
    driver_version: str | None
    mig_mode_current: str | None  # "enabled" | "disabled" | None (not MIG-capable)
    mig_mode_pending: str | None

    @property
    def mig_capable(self):
        return self.mig_mode_current is not None


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
            raise NvidiaSmiParseError(f"expected {len(fields)} CSV fields {list(fields)}, got {len(row)} in {row!r}")
        result.append({name: row[column].strip() for column, name in enumerate(fields)})
    return result


def parse_query_gpu(text, fields=QUERY_GPU_FIELDS):
    """``--query-gpu`` output (any field subset of QUERY_GPU_FIELDS, header or not) -> GpuQueryRow list."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    header = all(_HEADER_CELL.match(cell.strip()) for cell in first.split(","))
    rows = parse_query_csv(text, None if header else list(fields))
    gpus = []
    for position, row in enumerate(rows):
        index = _int(row.get("index", "")) if "index" in row else position
        gpus.append(
            GpuQueryRow(
                index=index,
                uuid=_value(row.get("uuid", "")),
                name=_value(row.get("name", row.get("gpu_name", ""))),
                pci_bus_id=_value(row.get("pci.bus_id", "")),
                pci_device_id=normalize_device_id(row.get("pci.device_id", "")),
                memory_total_mib=_int(row.get("memory.total", "")),
                driver_version=_value(row.get("driver_version", "")),
                mig_mode_current=mig_mode(row.get("mig.mode.current", "")),
                mig_mode_pending=mig_mode(row.get("mig.mode.pending", "")),
            )
        )
    return gpus


@dataclass
class ComputeProcess:
    """One line of ``--query-compute-apps``."""

    gpu_uuid: str
    pid: int
    process_name: str
    used_memory_mib: int | None


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
            raise NvidiaSmiParseError(f"expected {len(QUERY_COMPUTE_APPS_FIELDS)} CSV fields, got {line!r}")
        name, used_memory = head[2].rsplit(",", 1)
        pid = _int(head[1])
        if pid is None:
            raise NvidiaSmiParseError(f"expected a pid in the second field of {line!r}")
        processes.append(ComputeProcess(head[0].strip(), pid, name.strip(), _int(used_memory)))
    return processes


# ---------------------------------------------------------------- -q -x


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
        raise NvidiaSmiParseError(f"nvidia-smi -q -x output is not XML: {exc}") from exc
    if root.tag != "nvidia_smi_log":
        raise NvidiaSmiParseError(f"expected <nvidia_smi_log>, got <{root.tag}>")
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
                pci_device_id=normalize_device_id(_text(gpu, "pci/pci_device_id") or ""),
                memory_total_mib=_int(_text(gpu, "fb_memory_usage/total") or ""),
                mig_mode_current=mig_mode(_text(gpu, "mig_mode/current_mig") or ""),
                mig_mode_pending=mig_mode(_text(gpu, "mig_mode/pending_mig") or ""),
                fabric_state=_text(gpu, "fabric/state"),
                fabric_status=_text(gpu, "fabric/status"),
                mig_devices=devices,
            )
        )
    return XmlReport(_text(root, "driver_version"), _text(root, "cuda_version"), gpus)


# ---------------------------------------------------------------- -L


@dataclass
class MigDeviceEntry:
    """A MIG device line of ``-L``; gpu/compute instance ids only in the old (R450/R460) UUID form."""

    name: str
    device_index: int
    uuid: str
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None


@dataclass
class GpuListEntry:
    index: int
    name: str
    uuid: str
    mig_devices: list = field(default_factory=list)


_L_GPU = re.compile(r"^GPU\s+(\d+):\s+(.+?)\s+\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)\s*$")
_L_MIG = re.compile(r"^\s+MIG\s+(\S+)\s+Device\s+(\d+):\s+\(UUID:\s*(MIG-[^)\s]+)\)\s*$")
_OLD_MIG_UUID = re.compile(r"^MIG-GPU-[0-9a-fA-F-]+/(\d+)/(\d+)$")


def parse_list_devices(text):
    """``nvidia-smi -L`` -> GpuListEntry list (MIG devices under their GPU).

    Both UUID forms are understood: ``MIG-<uuid>`` (R470 and later) and
    ``MIG-GPU-<gpu uuid>/<gi>/<ci>`` (R450/R460), whose GI/CI ids are kept.
    """
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        gpu = _L_GPU.match(line)
        if gpu:
            gpus.append(GpuListEntry(int(gpu.group(1)), gpu.group(2), gpu.group(3)))
            continue
        mig = _L_MIG.match(line)
        if mig and gpus:
            entry = MigDeviceEntry(mig.group(1), int(mig.group(2)), mig.group(3))
            old = _OLD_MIG_UUID.match(entry.uuid)
            if old:
                entry.gpu_instance_id, entry.compute_instance_id = int(old.group(1)), int(old.group(2))
            gpus[-1].mig_devices.append(entry)
            continue
        raise NvidiaSmiParseError(f"unexpected line in nvidia-smi -L output: {line!r}")
    return gpus


# ---------------------------------------------------------------- mig -lgi / -lci / -lgip / -lgipp


@dataclass
class GpuInstance:
    gpu: int
    profile_name: str  # without "MIG ", e.g. "3g.40gb"
    profile_id: int
    instance_id: int
    placement_start: int
    placement_size: int


@dataclass
class ComputeInstance:
    gpu: int
    gpu_instance_id: int
    profile_name: str  # "1g.10gb" for a whole-GI CI, "1c.3g.40gb" for a part of one
    profile_id: int
    instance_id: int
    placement_start: int | None  # absent in the R450 layout
    placement_size: int | None


@dataclass
class GpuInstanceProfileRow:
    gpu: int
    profile_name: str
    profile_id: int
    instances_free: int
    instances_total: int
    memory_gib: float


@dataclass
class GpuInstancePlacements:
    gpu: int
    profile_id: int
    starts: tuple
    size: int


_NO_INSTANCES = re.compile(r"No (GPU|compute) instances found", re.IGNORECASE)
_LGI_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|$")
_LCI_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)(?:\s+(\d+):(\d+))?\s*\|$")
_LGIP_ROW = re.compile(
    r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(?:No|Yes)\s+\d+\s+\d+\s+\d+\s*\|$"
)
_LGIP_CONTINUATION = re.compile(r"^\|\s+\d+\s+\d+\s+\d+\s*\|$")
_LGIPP_ROW = re.compile(r"^GPU\s+(\d+)\s+Profile ID\s+(\d+)\s+Placements?\s*:\s*\{([\d,\s]*)\}:(\d+)\s*$")


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
            raise NvidiaSmiParseError(f"unexpected line in nvidia-smi {what} output: {line!r}")
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


def parse_gpu_instance_profiles(text):
    """``mig -lgip`` -> GpuInstanceProfileRow list (one per GPU and profile)."""
    return [
        GpuInstanceProfileRow(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), float(m[6]))
        for m in _table_rows(text, _LGIP_ROW, "mig -lgip", _LGIP_CONTINUATION)
    ]


def parse_gpu_instance_placements(text):
    """``mig -lgipp`` -> GpuInstancePlacements list ("{0,2,4}:2" -> starts (0, 2, 4), size 2)."""
    result = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _LGIPP_ROW.match(line.strip())
        if not match:
            raise NvidiaSmiParseError(f"unexpected line in nvidia-smi mig -lgipp output: {line!r}")
        starts = tuple(int(s) for s in match[3].replace(" ", "").split(",") if s)
        result.append(GpuInstancePlacements(int(match[1]), int(match[2]), starts, int(match[4])))
    return result


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
            result.failures.append(ChangeFailure(match[2], match[1], reason, _kind_of(reason)))
    return result


class _TextEnum(str, enum.Enum):  # enum.StrEnum needs Python 3.11; targets run 3.9
    """As enum.StrEnum: str() and f-strings give the value."""

    def __str__(self):
        return str(self.value)


class MigModeOutcome(_TextEnum):
    APPLIED = "applied"  # "Enabled/Disabled MIG Mode for GPU ..."
    PENDING = "pending"  # "Warning: MIG mode is in pending enable state ..." (reset or reboot needed)
    FAILED = "failed"  # "Unable to enable/disable MIG Mode for GPU ...: <reason>"


@dataclass
class MigModeChange:
    pci_bus_id: str
    enabled: bool
    outcome: MigModeOutcome
    reason: str | None = None
    kind: ErrorKind | None = None


_MODE_APPLIED = re.compile(r"^(Enabled|Disabled) MIG Mode for GPU ([0-9A-Fa-f:.]+)$")
_MODE_PENDING = re.compile(
    r"^Warning: MIG mode is in pending (enable|disable) state for GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f.]+):"
    r"\s*(.*)$"
)
_MODE_FAILED = re.compile(r"^Unable to (enable|disable) MIG Mode for GPU ([0-9A-Fa-f:.]+):\s*(.+)$")


def parse_mig_mode_change(text):
    """Output of ``-mig 1|0`` -> one MigModeChange per GPU line (applied, pending or failed)."""
    changes = []
    for line in text.splitlines():
        line = line.strip()
        if match := _MODE_APPLIED.match(line):
            changes.append(MigModeChange(match[2], match[1] == "Enabled", MigModeOutcome.APPLIED))
        elif match := _MODE_PENDING.match(line):
            reason = match[3].strip() or None
            kind = _kind_of(reason) if reason else None
            changes.append(MigModeChange(match[2], match[1] == "enable", MigModeOutcome.PENDING, reason, kind))
        elif match := _MODE_FAILED.match(line):
            reason = match[3].strip()
            changes.append(
                MigModeChange(match[2], match[1] == "enable", MigModeOutcome.FAILED, reason, _kind_of(reason))
            )
    return changes


# ---------------------------------------------------------------- error classification


class ErrorKind(_TextEnum):
    """What went wrong, in terms a caller can act on."""

    DRIVER_NOT_LOADED = "driver_not_loaded"  # rc 9, "couldn't communicate with the NVIDIA driver"
    NO_DEVICES = "no_devices"  # "No devices were found"
    NO_MIG_DEVICES = "no_mig_devices"  # "No MIG-supported devices found" / "No MIG-enabled devices found"
    NOT_FOUND = "not_found"  # "No GPU instances found" (nothing to list or destroy)
    IN_USE = "in_use"  # "In use by another client": stop the GPU's clients, or reboot
    INSUFFICIENT_RESOURCES = "insufficient_resources"  # layout does not fit the free slices
    PENDING_MIG_MODE = "pending_mig_mode"  # mode change waits for a GPU reset or a reboot
    NOT_SUPPORTED = "not_supported"
    INSUFFICIENT_PERMISSIONS = "insufficient_permissions"
    INVALID_ARGUMENT = "invalid_argument"
    UNKNOWN = "unknown"


_KIND_PATTERNS = (
    (ErrorKind.DRIVER_NOT_LOADED, re.compile(r"couldn't communicate with the NVIDIA driver", re.IGNORECASE)),
    (ErrorKind.PENDING_MIG_MODE, re.compile(r"MIG mode is in pending (enable|disable) state", re.IGNORECASE)),
    (ErrorKind.IN_USE, re.compile(r"In use by another client", re.IGNORECASE)),
    (ErrorKind.INSUFFICIENT_RESOURCES, re.compile(r"Insufficient Resources", re.IGNORECASE)),
    (ErrorKind.INSUFFICIENT_PERMISSIONS, re.compile(r"Insufficient Permissions", re.IGNORECASE)),
    (ErrorKind.NO_MIG_DEVICES, re.compile(r"No MIG-(supported|enabled) devices found", re.IGNORECASE)),
    (ErrorKind.NO_DEVICES, re.compile(r"No devices were found", re.IGNORECASE)),
    (ErrorKind.NOT_FOUND, re.compile(r"No (GPU|compute) instances found|\bNot Found\b", re.IGNORECASE)),
    (ErrorKind.NOT_SUPPORTED, re.compile(r"Not Supported|is not supported", re.IGNORECASE)),
    (ErrorKind.INVALID_ARGUMENT, re.compile(r"Invalid Argument|Invalid combination", re.IGNORECASE)),
)


def _kind_of(text):
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(text):
            return kind
    return ErrorKind.UNKNOWN


@dataclass
class NvidiaSmiError:
    """A classified problem in one nvidia-smi run; ``message`` is its first meaningful line."""

    kind: ErrorKind
    message: str
    rc: int


def classify_error(rc, stdout, stderr=""):
    """Classify a run that failed or warned; None when it reports nothing wrong.

    Covers failing runs (rc != 0) and runs that end in "All done." but carry a warning that
    changes what happened (pending MIG mode, "Unable to enable MIG Mode ...: Not Supported").
    """
    text = "\n".join(part for part in (stdout, stderr) if part)
    if rc == RC_DRIVER_NOT_LOADED:
        kind = ErrorKind.DRIVER_NOT_LOADED
    else:
        kind = _kind_of(text)
        warned = re.search(r"^(Warning: MIG mode|Unable to|Failed to|Terminating early)", text, re.MULTILINE)
        if rc == 0 and not warned:
            return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    message = next((line for line in lines if not line.startswith("Successfully")), lines[0] if lines else "")
    return NvidiaSmiError(kind, message, rc)


# ---------------------------------------------------------------- running nvidia-smi


class CommandFailed(Exception):
    """One nvidia-smi call that failed; carries what a user needs to see, and the classified ``kind``."""

    def __init__(self, argv, rc, stdout, stderr, reason, kind=None):
        super().__init__(reason)
        self.argv, self.rc, self.stdout, self.stderr, self.reason, self.kind = argv, rc, stdout, stderr, reason, kind

    def as_dict(self):
        return {"cmd": self.argv, "rc": self.rc, "stdout": self.stdout, "stderr": self.stderr}


class NvidiaSmiRunner:
    """Runs nvidia-smi through ``run(argv) -> (rc, stdout, stderr)`` and records every call.

    The one way the collection calls nvidia-smi: the facts module, the MIG module and the boot-time
    restore pass their own ``run`` (AnsibleModule.run_command, subprocess).
    """

    def __init__(self, binary, run):
        self.binary, self._run, self.calls = binary, run, []

    def _call(self, args, changes_state):
        argv = [self.binary, *args]
        rc, stdout, stderr = self._run(argv)
        self.calls.append({"cmd": argv, "rc": rc, "changes_state": changes_state})
        return argv, rc, stdout or "", stderr or ""

    def query(self, args, empty_kinds=()):
        """stdout of a query; "" when it fails with a kind in ``empty_kinds`` ("nothing there"); else CommandFailed."""
        argv, rc, stdout, stderr = self._call(args, False)
        if rc == 0:
            return stdout
        problem = classify_error(rc, stdout, stderr)
        kind = problem.kind if problem else None
        if kind is not None and kind in empty_kinds:
            return ""
        raise CommandFailed(argv, rc, stdout, stderr, problem.message if problem else f"exit status {rc}", kind)

    def parsed(self, args, parser, empty_kinds=()):
        """``parser`` applied to a query's output; output of an unexpected shape is a CommandFailed too."""
        stdout = self.query(args, empty_kinds)
        try:
            return parser(stdout)
        except ValueError as exc:  # NvidiaSmiParseError included
            argv, rc = self.calls[-1]["cmd"], self.calls[-1]["rc"]
            raise CommandFailed(
                argv, rc, stdout, "", f"unexpected output, which this collection cannot read: {exc}"
            ) from exc

    def change(self, args):
        """Run a state-changing call; CommandFailed unless nvidia-smi reports success for all of it."""
        argv, rc, stdout, stderr = self._call(args, True)
        problem = classify_error(rc, stdout, stderr)
        failures = parse_mig_change(stdout).failures
        if rc != 0 or failures or (problem and problem.kind != ErrorKind.PENDING_MIG_MODE):
            reason = problem.message if problem else f"exit status {rc}"
            raise CommandFailed(argv, rc, stdout, stderr, reason, problem.kind if problem else None)
        return stdout
