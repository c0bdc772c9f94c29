#!/usr/bin/python
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of the gpuops.cluster.cluster_plan action (the code is plugins/action/cluster_plan.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_plan
short_description: Validate the GPU intent of an inventory and write the cluster plan
version_added: 0.1.0
description:
  - Reads the intent of every host of a group (C(gpuops_gpu_product), C(gpuops_gpu_count),
    C(gpuops_mig_strategy), C(gpuops_mig_manager), C(gpuops_mig_config), C(gpuops_mig_configs),
    C(gpuops_time_slicing), C(gpuops_gpu_catalog_extra)),
    checks it against the GPU catalog, the MIG placement rules and the device plugin's rules, and
    computes what every node will advertise to Kubernetes.
  - A product the catalog lacks is planned as whole GPUs (time-slicing allowed, MIG refused) with a
    warning that names the nearest catalog products; C(gpuops_gpu_catalog_extra) describes it
    (name, memory_mib, compute_capability, pci_device_id) so its memory and compute labels are predicted.
  - Runs on the controller only; no host is contacted. The work is done once per distinct intent.
  - Also checks the variables of the host roles (C(nvidia_driver_*), C(nvidia_container_toolkit_*),
    C(mig_*)) each GPU node sets against the roles' argument specs, so a bad value fails here, before
    any host is contacted, instead of when the role starts on that host.
  - When any intent is invalid the task fails with one line per problem, naming the hosts, the
    variable, what is wrong and what would be valid, and writes nothing.
  - Warns, with "did you mean", about variables of any host that start with C(gpuops_) or a host role's
    prefix but that the collection does not know, and about groups named almost like C(gpu_nodes),
    C(rke2_servers) or C(rke2_agents). Ansible would ignore them without a word.
  - Prints the plan table and the folder of the plan files as plain text, so it reads as a table
    whatever the callback and its result format.
  - Otherwise it writes, into O(dest), C(capacity.json), C(device-plugin-configmap.yaml),
    C(mig-parted-config.yaml), C(mig-parted-configmap.yaml) (the ConfigMap O(mig_configmap) the GPU
    Operator's mig-manager reads, key C(config.yaml)), C(gpu-operator-values.yaml) and C(plan.txt). A file is only
    rewritten when its content changes; the changed files are written to temporary files first and
    then replace the old ones together, so a failed write leaves the previous plan.
  - See C(docs/plan.md) in the collection for every variable, output and error.
author:
  - gpuops.cluster maintainers (@gpuops)
options:
  dest:
    description:
      - Directory the plan files are written to; created when missing.
      - Default is C(.gpuops-plan) in the folder of the first inventory source that is a path (inside an
        inventory folder, beside an inventory file; Ansible never reads hidden entries as inventory), else in
        the current directory. The playbooks pass C(gpuops_plan_dir) here.
      - An existing file at this path, or a folder that cannot be written (a read-only install), fails the
        task before anything is written.
    type: path
  group:
    description: Inventory group whose hosts are the GPU nodes.
    type: str
    default: gpu_nodes
  namespace:
    description: Namespace of the GPU Operator, written into the device-plugin ConfigMap.
    type: str
    default: gpu-operator
  device_plugin_configmap:
    description: Name of the device-plugin ConfigMap, also written into the GPU Operator values.
    type: str
    default: gpuops-device-plugin-config
  mig_configmap:
    description:
      - Name of the ConfigMap holding the mig-parted config (key C(config.yaml)), written as
        C(mig-parted-configmap.yaml) in O(namespace) and into the GPU Operator values.
    type: str
    default: gpuops-mig-parted-config
attributes:
  action:
    support: full
    description: The plan is computed by an action plugin on the controller.
  async:
    support: none
    description: The action plugin runs on the controller and does not support C(async).
  check_mode:
    support: full
    description: Computes and validates the plan, reports which files would change, writes nothing.
  diff_mode:
    support: full
    description: Shows the change of every plan file.
  idempotent:
    support: full
    description: A second run with the same inventory rewrites no file and reports no change.
  platform:
    support: full
    platforms: all
    description: Runs on the controller only; the platform of the GPU nodes does not matter.
notes:
  - A MIG-capable host without C(gpuops_mig_config) is planned with MIG disabled; the collection does
    not manage its MIG mode, and the GPU Operator's mig-manager default (C(all-disabled)) applies.
seealso:
  - name: The cluster plan
    description: docs/plan.md in the collection.
    link: https://github.com/gpuops/cluster/blob/main/docs/plan.md
"""

EXAMPLES = r"""
# Once per run, on the controller, whatever --limit says (the plan covers every GPU node anyway).
- name: Plan the GPU cluster
  gpuops.cluster.cluster_plan:
    dest: /srv/cluster/plan
  delegate_to: localhost
  run_once: true
  register: gpuops_plan

- name: Use what the plan computed
  ansible.builtin.debug:
    msg: "{{ gpuops_plan.capacity.totals }}"
"""

RETURN = r"""
dest:
  description: Directory of the plan files.
  returned: success
  type: str
  sample: /srv/cluster/.plan
files:
  description: Paths of every plan file.
  returned: success
  type: list
  elements: str
changed_files:
  description: Paths of the plan files that were (or in check mode would be) rewritten.
  returned: success
  type: list
  elements: str
reused:
  description:
    - True where the plan this run computed already from the same inputs (C(gpuops_plan), kept by
      C(playbooks/plan.yml)) was handed back without a second computation; false where it was computed.
  returned: success
  type: bool
  sample: true
capacity:
  description: Content of capacity.json.
  returned: success
  type: dict
  contains:
    nodes:
      description: Per host, C(gpu_product), C(gpu_count), C(mig_config), C(resources) and C(labels).
      type: dict
    totals:
      description: Sum of every advertised resource over the cluster.
      type: dict
      sample: {"nvidia.com/gpu": 16, "nvidia.com/mig-1g.10gb": 56}
documents:
  description: The objects the Kubernetes roles apply, the same as the plan files.
  returned: success
  type: dict
  contains:
    device_plugin_configmap:
      description: The device-plugin ConfigMap (each config as YAML text), as in device-plugin-configmap.yaml.
      type: dict
    mig_parted_configmap:
      description: The ConfigMap of the GPU Operator's mig-manager, as in mig-parted-configmap.yaml.
      type: dict
    gpu_operator_values:
      description: The GPU Operator's Helm values, as in gpu-operator-values.yaml.
      type: dict
table:
  description: The plan as a plain-text table, one line per node, then the totals.
  returned: success
  type: str
errors:
  description: Every problem found, when the intent is invalid.
  returned: failure
  type: list
  elements: dict
  contains:
    host:
      description: Inventory host name.
      type: str
    variable:
      description: Variable (or key path inside it) at fault.
      type: str
    message:
      description: What is wrong and what would be valid.
      type: str
"""
