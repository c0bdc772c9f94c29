#!/usr/bin/python
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_mig: declarative MIG layout of the NVIDIA GPUs of a host."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvidia_mig
short_description: Apply a declarative MIG layout (mig-parted v1 config) to the GPUs of a host
version_added: 0.1.0
description:
  - Brings the MIG mode and the GPU and compute instances of every GPU to what one named config
    of a mig-parted v1 document asks for (the format NVIDIA mig-parted and the GPU Operator's
    mig-manager read), C(devices) and C(device-filter) included. GPUs that no entry selects are
    left alone. As mig-parted, C(device-filter) is compared with the PCI device id each GPU reports,
    and a filter with a subsystem id (C(0x20B210DE:0x147F10DE)) with its subsystem id too;
    C(devices) naming a GPU index the host does not have fails before any change.
  - Config names built into the collection for the detected product (C(all-disabled),
    C(all-enabled), C(all-1g.10gb), ..., C(all-balanced)) work without a document; a config of
    the same name in O(config) or O(config_file) overrides the built-in one.
  - A GPU is converged when its MIG mode is the wanted one and it has the wanted profiles at the
    planned placements, each holding exactly the compute instances planned for it (one spanning it, or
    for compute-instance profiles such as C(1c.3g.40gb) those of that GPU-instance profile it shares,
    as mig-parted packs them into the fewest GPU instances). Then nothing but queries run.
  - Otherwise, after validating everything (document, layout placeable on the detected product,
    no compute process on a GPU that changes), it removes the instances that are not wanted, sets
    the MIG mode, and creates the missing instances with C(nvidia-smi mig -cgi PROFILE:START,... -C)
    at placements the planner proved valid, one GPU at a time, and verifies each GPU afterwards. A
    compute-instance profile becomes, as in mig-parted, a compute instance of NVML's profile id for its
    size in a GPU instance it shares with the others of that GPU-instance profile that fit; first the GPU
    instance (C(nvidia-smi mig -cgi PROFILE:START) without C(-C)), then all its compute instances in one
    call (C(nvidia-smi mig -gi GI -cci ID,ID,...)).
  - Nothing stays half-applied. When a change fails on one GPU, every GPU the run changed is put back
    to the layout it had, the failed GPU first, then the others, the last changed first. Instances the
    run created are destroyed, removed ones re-created at their placements, and the MIG mode set back,
    which also cancels a mode change the run left pending (a GPU the run had reset is reset again when
    the mode waits for it). A GPU whose MIG mode was already pending before the run, and which the run
    reset, keeps the mode the reset made effective (what a reboot would have done). The failure message
    and RV(gpus) say every GPU's end state; when putting a GPU back fails too, they give the exact state
    it is in. Errors carry the command, rc, stdout and stderr.
  - The module does not stop services. Free the GPUs first (the C(gpuops.cluster.mig) role drains
    the node and stops the GPU clients).
author:
  - gpuops.cluster maintainers (@gpuops)
options:
  config_name:
    description:
      - Name of the config under C(mig-configs) to apply, or the name of a built-in config.
    type: str
    required: true
  config:
    description:
      - "A whole mig-parted v1 document, C({version: v1, mig-configs: {NAME: [entries]}})."
      - An empty mapping fails; leave O(config) and O(config_file) out for the built-in configs only.
      - Mutually exclusive with O(config_file).
    type: dict
  config_file:
    description:
      - Path on the managed host of a mig-parted v1 document in YAML or JSON.
      - An empty file fails.
      - Mutually exclusive with O(config).
    type: path
  nvidia_smi_path:
    description:
      - Path of C(nvidia-smi); searched in C(PATH) when not given.
    type: path
attributes:
  check_mode:
    support: full
    description: Runs the queries only and returns the planned commands and the layout before and after.
  diff_mode:
    support: full
    description: Before and after per GPU (MIG mode and instances with placements).
  idempotent:
    support: full
    description: A second run with the same config only queries nvidia-smi.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with the NVIDIA driver and MIG-capable GPUs.
notes:
  - A compute-instance profile whose compute instance does not fit its GPU instance (C(4c.3g.40gb)), and
    a C(device-filter) with a subsystem id that could select a GPU whose nvidia-smi reports no subsystem
    id, are refused before any change, naming the GPU and what is valid.
  - In RV(planned_commands) the id of a GPU instance the run creates for a compute-instance profile is
    shown as C(<GI@START:SIZE>), since the driver assigns it.
  - MIG instances do not survive a reboot; the C(gpuops.cluster.mig) role installs a unit that
    re-creates them at boot with the same code.
  - When a MIG mode change stays pending (GPU clients still attached, or GPU passthrough), the module
    resets the GPU as mig-parted does (C(nvidia-smi -i N -r)), unless a compute process uses it; when
    the mode then takes effect it creates the instances (RV(reset_gpus), C(gpus[].reset=done)). When
    the reset fails or is skipped, it returns RV(reboot_required=true) and RV(pending_gpus) with a
    warning giving the reason, and does not create the instances of those GPUs; run it again after
    the reboot.
  - In check mode a GPU whose wanted mode is pending already gets C(gpus[].reset=would_try) and the
    reset in RV(planned_commands); whether a mode change the run makes stays pending, and whether a
    reset works, is only known in a real run.
  - In check mode, compute processes on GPUs that would change are reported in RV(busy_processes) and
    as a warning; a real run fails on them before changing anything.
seealso:
  - name: mig-parted config format
    description: The mig-parted v1 config file this module reads.
    link: https://github.com/NVIDIA/mig-parted
"""

EXAMPLES = r"""
- name: Seven 1g.10gb instances on every A100 80GB (built-in config, no document needed)
  gpuops.cluster.nvidia_mig:
    config_name: all-1g.10gb

- name: A mixed layout from an inline mig-parted document
  gpuops.cluster.nvidia_mig:
    config_name: mixed
    config:
      version: v1
      mig-configs:
        mixed:
          - devices: [0]
            mig-enabled: true
            mig-devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
          - devices: [1]
            mig-enabled: false
  register: mig

- name: The same from a file the GPU Operator's mig-manager could read too
  gpuops.cluster.nvidia_mig:
    config_file: /etc/gpuops/mig-config.json
    config_name: mixed

- name: Reboot when a MIG mode change waits for it
  ansible.builtin.reboot:
  when: mig.reboot_required
"""

RETURN = r"""
config_name:
  description: The config applied.
  returned: always
  type: str
  sample: mixed
gpus:
  description: One entry per GPU with its layout before and after.
  returned: always
  type: list
  elements: dict
  contains:
    index: {description: nvidia-smi GPU index., type: int, returned: always, sample: 0}
    name: {description: Product name from nvidia-smi., type: str, returned: always, sample: NVIDIA A100-SXM4-80GB}
    uuid: {description: GPU UUID., type: str, returned: always, sample: GPU-513536b6-7d19-9063-b049-1e69664bb298}
    product: {description: Catalog product or null., type: str, returned: always, sample: NVIDIA A100-SXM4-80GB}
    managed: {description: Whether an entry of the config selects this GPU., type: bool, returned: always, sample: true}
    changed: {description: Whether the GPU needed (or in check mode needs) a change., type: bool, returned: always}
    pending: {description: Whether a MIG mode change waits for a reset or reboot., type: bool, returned: always}
    before:
      description: MIG mode, pending mode (null when none) and instances before the run.
      type: dict
      returned: always
      sample: {mig_enabled: false, mig_pending: null, instances: []}
    after:
      description:
        - The same after the run (in check mode, the wanted layout).
        - After a failed change, the state read back from the GPU (null when it can no longer be read).
      type: dict
      returned: always
      sample:
        mig_enabled: true
        mig_pending: null
        instances:
          - {profile: 3g.40gb, placement: "0:4"}
          - {profile: 2g.20gb, placement: "4:2"}
          - {profile: 1g.10gb, placement: "6:1"}
      contains:
        instances:
          description:
            - GPU instances by placement. One that holds anything but one compute instance spanning it also
              has C(compute_instances) (how many) and C(compute_instance_profiles) (each one's profile).
          type: list
          elements: dict
          returned: always
          sample:
            - {profile: 3g.40gb, placement: "4:4", compute_instances: 1, compute_instance_profiles: [1c.3g.40gb]}
    note:
      description: Why a GPU was left alone; empty when it is managed.
      type: str
      returned: always
    reset:
      description:
        - What the run did about a MIG mode change that stayed pending. V(null) when none did.
        - V(done) the GPU was reset, the mode took effect and the instances were created (no reboot);
          V(failed) the reset failed (a client holds the GPU, or the platform cannot reset it);
          V(skipped) a compute process uses the GPU, so it was not reset; V(not_effective) the GPU was
          reset but the mode is still pending; V(would_try) check mode, a real run tries a reset.
          All but V(done) leave the GPU in RV(pending_gpus).
      type: str
      returned: always
      sample: done
    reset_reason:
      description:
        - Why the reset failed, was skipped or did not help (nvidia-smi's reason and its class); empty otherwise.
      type: str
      returned: always
      sample: In use by another client (in_use)
    rolled_back:
      description:
        - After a failed change, for every GPU. V(true) the run had changed the GPU and put it back to its previous
          layout; V(false) putting it back failed (RV(gpus[].rollback_problem) says why, C(after) is where it is);
          V(null) the run had not changed it.
      type: bool
      returned: on failure
    rollback_problem:
      description: After a failed change, why the GPU could not be put back; empty otherwise.
      type: str
      returned: on failure
      sample: "restoring failed: /usr/bin/nvidia-smi mig -i 1 -cgi 9:4,14:0 -C: ... In use by another client"
commands:
  description: Every nvidia-smi call made, with its rc and whether it changes state.
  returned: always
  type: list
  elements: dict
  sample: [{cmd: [/usr/bin/nvidia-smi, "--query-gpu=index,uuid,name", "--format=csv,noheader,nounits"], rc: 0,
            changes_state: false}]
planned_commands:
  description: The state-changing nvidia-smi calls the plan needs (run, unless in check mode).
  returned: always
  type: list
  elements: list
  sample: [[/usr/bin/nvidia-smi, mig, "-i", "0", "-cgi", "9:0,14:4,19:6", "-C"]]
reboot_required:
  description:
    - True when a MIG mode change is still pending after the run, which tried a GPU reset where it could.
    - A reboot makes it effective.
    - After a failed change, true only when a GPU is still pending after everything was put back.
  returned: always
  type: bool
  sample: false
pending_gpus:
  description:
    - Indexes of the GPUs whose MIG mode change is still pending.
    - C(gpus[].reset) and C(gpus[].reset_reason) say why a reset did not help.
  returned: always
  type: list
  elements: int
  sample: []
reset_gpus:
  description: Indexes of the GPUs reset by the run, whose pending MIG mode then took effect (no reboot needed).
  returned: always
  type: list
  elements: int
  sample: [0]
busy_processes:
  description: Compute processes on GPUs that need a change (pid, name, GPU index).
  returned: always
  type: list
  elements: dict
  sample: [{gpu: 0, pid: 5762, name: python3}]
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.yaml import HAS_YAML, yaml_load
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import fail_module
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import MigReconcileError
from ansible_collections.gpuops.cluster.plugins.module_utils._host.mig_reconcile import reconcile


def read_document(module):
    """The mig-parted document from O(config) or O(config_file), or None (built-in configs only)."""
    if module.params["config"] is not None:
        return module.params["config"]
    path = module.params["config_file"]
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        module.fail_json(msg=f"config_file {path} cannot be read: {exc}")
    try:
        return json.loads(text)
    except ValueError:
        if not HAS_YAML:
            module.fail_json(msg=f"config_file {path} is not JSON and PyYAML is not installed to read YAML")
    try:
        return yaml_load(text)
    except Exception as exc:  # any YAML error is the user's file: report it as such
        module.fail_json(msg=f"config_file {path} is neither JSON nor YAML: {exc}")


def checked_document(module, document):
    """An empty config or config_file is a mistake, not a wish for the built-in configs: fail."""
    given = module.params["config"] is not None or module.params["config_file"] is not None
    if given and not document:
        source = "config" if module.params["config"] is not None else f"config_file {module.params['config_file']}"
        module.fail_json(
            msg=f"{source} is empty; valid: a mig-parted v1 document "
            "{version: v1, mig-configs: {NAME: [entries]}}, or neither config nor config_file for the built-in configs"
        )
    return document


def diff_of(gpus):
    return {
        "before": {f"gpu {g['index']}": g["before"] for g in gpus},
        "after": {f"gpu {g['index']}": g["after"] for g in gpus},
    }


def main():
    module = AnsibleModule(
        argument_spec={
            "config_name": {"type": "str", "required": True},
            "config": {"type": "dict"},
            "config_file": {"type": "path"},
            "nvidia_smi_path": {"type": "path"},
        },
        mutually_exclusive=[("config", "config_file")],
        supports_check_mode=True,
    )
    binary = module.params["nvidia_smi_path"] or module.get_bin_path("nvidia-smi", required=True)
    document = checked_document(module, read_document(module))
    name = module.params["config_name"]

    def run(argv):
        return module.run_command(argv)

    try:
        result = reconcile(run, binary, document, name, check_mode=module.check_mode)
    except MigReconcileError as exc:
        fail_module(module, exc, config_name=name)
    for warning in result.pop("warnings"):
        module.warn(warning)
    if result["reboot_required"]:
        why = "; ".join(
            f"GPU {gpu['index']}: reset {gpu['reset']}" + (f" ({gpu['reset_reason']})" if gpu["reset_reason"] else "")
            for gpu in result["gpus"]
            if gpu["index"] in result["pending_gpus"] and gpu["reset"]
        )
        module.warn(
            f"MIG mode change pending on GPUs {result['pending_gpus']}"
            + (f" ({why})" if why else "")
            + ": a reboot is required before their instances can be created; run again afterwards"
        )
    if module._diff:
        result["diff"] = diff_of(result["gpus"])
    module.exit_json(config_name=name, **result)


if __name__ == "__main__":
    main()
