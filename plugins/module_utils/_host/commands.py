# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia-smi command lines: each builder returns the arguments that follow the binary.

Callers prepend the path they found (the runner does). The argv forms follow nvidia-smi's help and
the recorded real sessions under tests/fixtures/nvidia-smi.
"""

from __future__ import annotations

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
    # "0x147F10DE": mig-parted's device-filter "<device>:<subsystem>" compares it (pkg/types/device.go).
    "pci.sub_device_id",
)
QUERY_COMPUTE_APPS_FIELDS = ("gpu_uuid", "pid", "process_name", "used_memory")


def query_gpu_args(fields=QUERY_GPU_FIELDS):
    """``--query-gpu`` as CSV without header or units: one line per GPU, fields in order."""
    return ["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]


def query_compute_apps_args(fields=QUERY_COMPUTE_APPS_FIELDS):
    """``--query-compute-apps``: one line per compute process (its GPU's UUID first)."""
    return ["--query-compute-apps=" + ",".join(fields), "--format=csv,noheader,nounits"]


def query_xml_args():
    """``-q -x``: the full device query as XML (CUDA version, fabric state, MIG devices)."""
    return ["-q", "-x"]


def gpu_selector(gpu):
    """``-i N`` for one GPU; nothing (every GPU) when ``gpu`` is None."""
    return [] if gpu is None else ["-i", str(gpu)]


def list_gpu_instances_args(gpu=None):
    """``mig -lgi``: existing GPU instances (all GPUs when ``gpu`` is None)."""
    return ["mig", *gpu_selector(gpu), "-lgi"]


def list_compute_instances_args(gpu=None):
    """``mig -lci``: existing compute instances."""
    return ["mig", *gpu_selector(gpu), "-lci"]


def set_mig_mode_args(gpu, enabled):
    """``-i N -mig 1|0``: request MIG mode on one GPU (may stay pending until a reset/reboot)."""
    return ["-i", str(gpu), "-mig", "1" if enabled else "0"]


def gpu_reset_args(gpu):
    """``-i N -r``: reset one GPU, which makes its pending MIG mode effective where a reset is possible.

    mig-parted resets the GPUs whose mode change stays pending the same way, ``nvidia-smi -r -i
    BUS_IDS`` (NVIDIA/mig-parted cmd/nvidia-mig-parted/util/device.go, nvmlResetAllGPUs). It fails
    while any process (a client such as nvidia-persistenced included) holds the GPU, and where the
    platform cannot reset a single GPU (some VM passthrough and NVLink setups).
    """
    return ["-i", str(gpu), "-r"]


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
