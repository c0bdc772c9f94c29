# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read the GPUs of a host once, into the one shape the facts module and MIG reconcile both use."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._host import commands, parsers
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import ErrorKind
from ansible_collections.gpuops.cluster.plugins.module_utils._host.model import ENABLED

# The query kinds that mean "nothing there" rather than a failure (rc 6 with these messages).
EMPTY_KINDS = (ErrorKind.NOT_FOUND, ErrorKind.NO_MIG_DEVICES)


@dataclass(frozen=True)
class HostState:
    """The GPUs of a host (GpuState, index order) and the versions of its driver stack."""

    gpus: tuple
    driver_version: str | None = None
    cuda_version: str | None = None  # read with details only (-q -x)


def _instances_by_gpu(gpu_instances, compute_instances):
    """GPU index -> its GpuInstances, each holding the compute instances ``mig -lci`` lists in it."""
    children = {}
    for ci in compute_instances:
        children.setdefault((ci.gpu, ci.gpu_instance_id), []).append(ci)
    by_gpu = {}
    for gi in gpu_instances:
        cis = tuple(children.get((gi.gpu, gi.instance_id), ()))
        by_gpu.setdefault(gi.gpu, []).append(dataclasses.replace(gi, compute_instances=cis))
    return by_gpu


def read_host(smi, only_gpu=None, details=False):
    """HostState of every GPU (or of ``only_gpu``) through the NvidiaSmiRunner ``smi``.

    Calls, in this order: ``--query-gpu``; with DETAILS ``-q -x`` (CUDA version, fabric state);
    ``mig -lgi`` and ``mig -lci`` when a GPU has MIG enabled (-lci only when there is a GPU
    instance); with DETAILS ``--query-compute-apps``. Raises CommandFailed as the runner does.
    """
    gpus = smi.parsed(commands.query_gpu_args(), parsers.parse_query_gpu)
    if only_gpu is not None:
        gpus = [gpu for gpu in gpus if gpu.index == only_gpu]
    if not gpus:
        return HostState(())
    report = smi.parsed(commands.query_xml_args(), parsers.parse_query_xml) if details else None
    instances = {}
    if any(gpu.mig_mode_current == ENABLED for gpu in gpus):
        gis = smi.parsed(commands.list_gpu_instances_args(only_gpu), parsers.parse_gpu_instances, EMPTY_KINDS)
        cis = (
            smi.parsed(commands.list_compute_instances_args(only_gpu), parsers.parse_compute_instances, EMPTY_KINDS)
            if gis
            else []
        )
        instances = _instances_by_gpu(gis, cis)
    processes = smi.parsed(commands.query_compute_apps_args(), parsers.parse_query_compute_apps) if details else []
    fabric = {gpu.uuid: gpu.fabric_state for gpu in report.gpus} if report else {}
    gpus = tuple(
        dataclasses.replace(
            gpu,
            instances=tuple(instances.get(gpu.index, ())),
            fabric_state=fabric.get(gpu.uuid),
            processes=tuple(p for p in processes if p.gpu_uuid == gpu.uuid),
        )
        for gpu in gpus
    )
    return HostState(
        gpus,
        driver_version=(report.driver_version if report else None) or gpus[0].driver_version,
        cuda_version=report.cuda_version if report else None,
    )
