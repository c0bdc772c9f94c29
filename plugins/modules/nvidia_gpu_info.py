#!/usr/bin/python
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_gpu_info: facts about the NVIDIA GPUs of a host, read through nvidia-smi."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvidia_gpu_info
short_description: Gather facts about NVIDIA GPUs, their MIG state and processes
version_added: 0.1.0
description:
  - Reads the GPUs of a host through C(nvidia-smi) structured outputs (C(--query-gpu) CSV,
    C(-q -x) XML, C(--query-compute-apps) CSV) and, on GPUs in MIG mode, the GPU and compute
    instance tables (C(nvidia-smi mig -lgi), C(-lci)).
  - Matches every GPU with the gpuops GPU catalog by name, then by PCI device id, and warns when
    a product is not in the catalog (MIG planning is then unavailable for it).
  - When C(nvidia-smi) is missing, cannot reach the driver (exit code 9) or finds no GPU, the
    module does not fail; it returns RV(gpu_detected) false with the RV(reason), so roles decide.
  - Any other C(nvidia-smi) failure fails the module with the command, rc, stdout and stderr.
  - Detects NVSwitch devices from the PCI bus (class 0x0680, vendor 0x10de), which tells
    whether the host needs NVIDIA Fabric Manager.
author:
  - gpuops.cluster maintainers (@gpuops)
options: {}
attributes:
  check_mode:
    support: full
    description: The module only reads; it runs the same queries in check mode.
  diff_mode:
    support: none
    description: The module changes nothing, so there is no diff to show.
  facts:
    support: full
    description:
      - Sets RV(ansible_facts), the results under names prefixed C(nvidia_gpu), which no role of the collection uses
        for its variables.
  idempotent:
    support: full
    description: The module only reads; C(changed) is always false.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with the NVIDIA driver and nvidia-smi.
notes:
  - C(changed) is always false.
seealso:
  - name: nvidia-smi documentation
    description: The NVIDIA System Management Interface manual.
    link: https://docs.nvidia.com/deploy/nvidia-smi/index.html
"""

EXAMPLES = r"""
- name: Read the GPUs of the host
  gpuops.cluster.nvidia_gpu_info:

- name: Stop when the host has no usable GPU
  ansible.builtin.assert:
    that: ansible_facts['nvidia_gpu_detected']
    fail_msg: "No NVIDIA GPU usable on {{ inventory_hostname }}: {{ ansible_facts['nvidia_gpu_reason'] }}"

- name: Group hosts by detected GPU model
  ansible.builtin.group_by:
    key: "gpu_{{ ansible_facts['nvidia_gpus'][0]['name'] | regex_replace('[^A-Za-z0-9]+', '_') }}"
  when: ansible_facts['nvidia_gpus'] | length > 0
"""

RETURN = r"""
gpu_detected:
  description: Whether nvidia-smi reported at least one GPU.
  returned: always
  type: bool
  sample: true
reason:
  description: Why no GPU was detected; empty when RV(gpu_detected) is true.
  returned: always
  type: str
  sample: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
driver_version:
  description: NVIDIA driver version.
  returned: always
  type: str
  sample: "535.54.03"
cuda_version:
  description: Highest CUDA version the driver supports.
  returned: always
  type: str
  sample: "12.2"
nvswitch_present:
  description: Whether NVSwitch devices are on the PCI bus (HGX systems; Fabric Manager needed).
  returned: always
  type: bool
  sample: false
gpus:
  description: One entry per GPU, in nvidia-smi index order.
  returned: always
  type: list
  elements: dict
  contains:
    index: {description: nvidia-smi GPU index., type: int, returned: always, sample: 0}
    uuid: {description: GPU UUID., type: str, returned: always, sample: GPU-513536b6-7d19-9063-b049-1e69664bb298}
    name:
      description: Product name as nvidia-smi prints it.
      type: str
      returned: always
      sample: NVIDIA A100-SXM4-80GB
    pci_bus_id: {description: PCI bus id., type: str, returned: always, sample: "00000000:01:00.0"}
    pci_device_id: {description: PCI device and vendor id., type: str, returned: always, sample: "0x20B210DE"}
    memory_total_mib: {description: Framebuffer memory in MiB., type: int, returned: always, sample: 81920}
    mig_capable: {description: Whether the GPU supports MIG., type: bool, returned: always, sample: true}
    mig_mode_current:
      description: Current MIG mode, V(enabled) or V(disabled); null on GPUs without MIG.
      type: str
      returned: always
      sample: enabled
    mig_mode_pending:
      description: MIG mode after the next GPU reset or reboot.
      type: str
      returned: always
      sample: enabled
    mig_mode_change_pending:
      description: True when the pending MIG mode differs from the current one (reset or reboot needed).
      type: bool
      returned: always
      sample: false
    fabric_state:
      description: NVLink fabric state from C(-q -x) (Hopper and later), null when not applicable.
      type: str
      returned: always
      sample: Completed
    gpu_instances:
      description: GPU instances (MIG), each with its compute instances.
      type: list
      elements: dict
      returned: always
      sample:
        - {id: 1, profile_id: 9, profile_name: 3g.40gb, placement_start: 4, placement_size: 4,
           compute_instances: [{id: 0, profile_id: 2, profile_name: 3g.40gb, placement_start: 0, placement_size: 3}]}
    processes:
      description: Compute processes running on the GPU.
      type: list
      elements: dict
      returned: always
      sample: [{pid: 5762, process_name: python, used_memory_mib: 1005}]
    catalog_product:
      description: Canonical catalog name of the product, null when the catalog does not know it.
      type: str
      returned: always
      sample: NVIDIA A100-SXM4-80GB
    catalog_known:
      description: Whether the product is in the gpuops catalog.
      type: bool
      returned: always
      sample: true
ansible_facts:
  description: The same data as facts.
  returned: always
  type: dict
  contains:
    nvidia_gpu_detected: {description: Same as RV(gpu_detected)., type: bool, returned: always}
    nvidia_gpu_reason: {description: Same as RV(reason)., type: str, returned: always}
    nvidia_gpus: {description: Same as RV(gpus)., type: list, elements: dict, returned: always}
    nvidia_gpu_driver_version: {description: Same as RV(driver_version)., type: str, returned: always}
    nvidia_gpu_cuda_version: {description: Same as RV(cuda_version)., type: str, returned: always}
    nvidia_gpu_nvswitch_present: {description: Same as RV(nvswitch_present)., type: bool, returned: always}
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import fail_module
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import CommandFailed, ErrorKind
from ansible_collections.gpuops.cluster.plugins.module_utils._host.runner import NvidiaSmiRunner
from ansible_collections.gpuops.cluster.plugins.module_utils._host.state import read_host

PCI_DEVICES_GLOB = "/sys/bus/pci/devices/*"
NVIDIA_VENDOR = "0x10de"
NVSWITCH_CLASS_PREFIX = "0x0680"  # PCI "bridge, other": how NVSwitch chips enumerate


def nvswitch_present(pci_glob=PCI_DEVICES_GLOB):
    """Whether an NVIDIA device of PCI class 0x0680 (NVSwitch) is on the bus."""
    for device in glob.glob(pci_glob):
        try:
            with open(os.path.join(device, "vendor")) as vendor, open(os.path.join(device, "class")) as klass:
                if vendor.read().strip().lower() == NVIDIA_VENDOR and klass.read().strip().startswith(
                    NVSWITCH_CLASS_PREFIX
                ):
                    return True
        except OSError:
            continue
    return False


def _instance_fields(instance, **more):
    return {
        "id": instance.instance_id,
        "profile_id": instance.profile_id,
        "profile_name": instance.profile_name,
        "placement_start": instance.placement_start,
        "placement_size": instance.placement_size,
        **more,
    }


def _gpu_instance(gi):
    """A GPU instance and its compute instances as the module returns them."""
    return _instance_fields(gi, compute_instances=[_instance_fields(ci) for ci in gi.compute_instances])


def gather(module):
    """Everything the module returns, as a dict (without ``changed``)."""
    result = {
        "gpu_detected": False,
        "reason": "",
        "driver_version": "",
        "cuda_version": "",
        "nvswitch_present": nvswitch_present(),
        "gpus": [],
    }
    binary = module.get_bin_path("nvidia-smi")
    if not binary:
        result["reason"] = "nvidia-smi was not found in PATH (is the NVIDIA driver installed?)"
        return result
    smi = NvidiaSmiRunner(binary, module.run_command)
    try:
        host = read_host(smi, details=True)
    except CommandFailed as failed:
        # Only the first query tells "no usable GPU"; any later failure is a failure.
        if failed.kind not in (ErrorKind.DRIVER_NOT_LOADED, ErrorKind.NO_DEVICES) or len(smi.calls) > 1:
            raise
        result["reason"] = failed.reason
        return result
    if not host.gpus:
        result["reason"] = "nvidia-smi listed no GPU"
        return result
    for gpu in host.gpus:
        product = find_product(gpu.name, gpu.pci_device_id)
        if product is None:
            module.warn(f"product {gpu.name} is not in the gpuops catalog; MIG planning unavailable")
        result["gpus"].append(
            {
                "index": gpu.index,
                "uuid": gpu.uuid,
                "name": gpu.name,
                "pci_bus_id": gpu.pci_bus_id,
                "pci_device_id": gpu.pci_device_id,
                "memory_total_mib": gpu.memory_total_mib,
                "mig_capable": gpu.mig_capable,
                "mig_mode_current": gpu.mig_mode_current,
                "mig_mode_pending": gpu.mig_mode_pending,
                "mig_mode_change_pending": gpu.mig_mode_current != gpu.mig_mode_pending,
                "fabric_state": gpu.fabric_state,
                "gpu_instances": [_gpu_instance(gi) for gi in gpu.instances],
                "processes": [
                    {"pid": p.pid, "process_name": p.process_name, "used_memory_mib": p.used_memory_mib}
                    for p in gpu.processes
                ],
                "catalog_product": product.name if product else None,
                "catalog_known": product is not None,
            }
        )
    result.update(
        gpu_detected=True,
        driver_version=host.driver_version or "",
        cuda_version=host.cuda_version or "",
    )
    return result


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    try:
        result = gather(module)
    except CommandFailed as failed:
        fail_module(module, failed, msg=f"nvidia-smi failed: {failed.reason}")
    facts = {
        "nvidia_gpu_detected": result["gpu_detected"],
        "nvidia_gpu_reason": result["reason"],
        "nvidia_gpus": result["gpus"],
        # nvidia_gpu_*, never nvidia_driver_*: facts are variables too, and would shadow the nvidia_driver role's.
        "nvidia_gpu_driver_version": result["driver_version"],
        "nvidia_gpu_cuda_version": result["cuda_version"],
        "nvidia_gpu_nvswitch_present": result["nvswitch_present"],
    }
    module.exit_json(changed=False, ansible_facts=facts, **result)


if __name__ == "__main__":
    main()
