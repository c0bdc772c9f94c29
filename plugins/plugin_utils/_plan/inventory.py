# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Mistakes in an inventory that Ansible accepts without a word, turned into warnings before any host is touched.

Ansible ignores a variable nobody reads and a group nobody targets, so `gpuops_timeslicing`
or a group `rke2_server` would silently leave a node unshared or outside the cluster; it merges
the variables of every group of a host, reads one of two vars files of the same name, and takes an
empty value as null. These checks name the hosts, the variable or group, what happens and what to do,
with "did you mean" where a name is close to a known one.
"""

from __future__ import annotations

import difflib
import os

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product, normalize_product_name
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import hosts_text

# The groups of the inventory contract (README, docs/plan.md).
CONTRACT_GROUPS = ("gpu_nodes", "rke2_servers", "rke2_agents")
GPU_GROUP, RKE2_GROUPS = "gpu_nodes", ("rke2_servers", "rke2_agents")
PRODUCT_VARIABLE = "gpuops_gpu_product"
# The variables that say how a node's GPUs are split or shared: from two groups, they merge into a mix of both.
SHARING_VARIABLES = (
    "gpuops_mig_config",
    "gpuops_mig_configs",
    "gpuops_time_slicing",
    "gpuops_mps",
    "gpuops_memory_sharing",
)
# What an empty (null) sharing variable means to the plan, and a value that shares.
NULL_MEANINGS = {
    "gpuops_time_slicing": ("no time-slicing", "nothing is time-sliced on those nodes", "{replicas: 4}"),
    "gpuops_mps": ("no MPS", "no GPU of those nodes runs MPS", "{replicas: 4}"),
    "gpuops_memory_sharing": ("no memory sharing", "NVIDIA's device plugin serves those nodes", "{backend: hami}"),
}
# ansible-core 2.19 lib/ansible/parsing/dataloader.py DataLoader.find_vars_files: of NAME (a folder), NAME.yml,
# NAME.yaml and NAME.json, only the first found is read (C.YAML_FILENAME_EXTENSIONS gives the order).
VARS_FILE_EXTENSIONS = (".yml", ".yaml", ".json")
VARS_FOLDERS = ("group_vars", "host_vars")

# Cluster-wide run settings read by the playbooks and roles, besides the GPU intent variables.
RUN_VARIABLES = (
    "gpuops_plan_dir",
    "gpuops_serial",
    "gpuops_max_fail_percentage",
    "gpuops_reboot",
    # The controller's kubeconfig for the Kubernetes roles (gpu_operator, gpu_sharing).
    "gpuops_kubeconfig",
    # Where the GPU Operator runs and the names of the ConfigMaps its operands read (plan and roles).
    "gpuops_operator_namespace",
    "gpuops_device_plugin_configmap",
    "gpuops_mig_configmap",
    # Set during a run, not by users: a host reboots at most once per run; the plan playbook's result.
    "gpuops_host_rebooted",
    "gpuops_plan",
)

_NAME_CUTOFF = 0.8
# Warnings are one line each: fewer hosts named than in errors.
_HOSTS_SHOWN = 5


def _closest(name, candidates):
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=_NAME_CUTOFF)
    return close[0] if close else None


def unknown_variable_warnings(names_by_host, known_by_prefix):
    """One warning per unknown variable under a prefix the collection owns, naming its hosts.

    NAMES_BY_HOST: {host: iterable of variable names defined for it}. KNOWN_BY_PREFIX:
    {prefix: known names with that prefix}, e.g. {"gpuops_": (...), "mig_": (...)}; the longest
    matching prefix decides. Private names (leading underscores) never match a prefix.
    """
    prefixes = sorted(known_by_prefix, key=len, reverse=True)
    every_known = {name for names in known_by_prefix.values() for name in names}
    unknown = {}
    for host, names in names_by_host.items():
        for name in names:
            prefix = next((p for p in prefixes if name.startswith(p)), None)
            if prefix is not None and name not in known_by_prefix[prefix]:
                unknown.setdefault(name, []).append(host)
    warnings = []
    for name in sorted(unknown):
        guess = _closest(name, every_known)
        hint = f"did you mean {guess}?" if guess else "see the README's inventory contract and the roles' docs"
        warnings.append(
            f"{name} (set for {hosts_text(unknown[name], _HOSTS_SHOWN)}) is not a variable of gpuops.cluster "
            f"and is ignored; {hint}"
        )
    return warnings


def group_warnings(group_names):
    """Warnings for inventory groups named almost like a group of the contract (rke2_server, gpu_node)."""
    present = set(group_names)
    warnings = []
    for group in sorted(present - set(CONTRACT_GROUPS)):
        meant = _closest(group, CONTRACT_GROUPS)
        if meant is None:
            continue
        where = "" if meant in present else f" (the inventory has no group {meant})"
        warnings.append(
            f"group {group} is not a group of gpuops.cluster, so its hosts are not treated as {meant}{where}; "
            f"did you mean {meant}?"
        )
    return warnings


def _hosts_are(hosts):
    return f"{hosts_text(hosts, _HOSTS_SHOWN)} {'is' if len(hosts) == 1 else 'are'}"


def _product_key(value):
    # One product however it is spelt ("NVIDIA L4", "L4", GFD's "NVIDIA-L4").
    if not isinstance(value, str):
        return repr(value)
    product = find_product(value)
    return product.name if product else normalize_product_name(value)


def _winner(name, groups, group_vars):
    """The group whose value of NAME the host gets: the last of GROUPS (Ansible's merge order) that sets it."""
    return next(group for group in reversed(groups) if name in group_vars.get(group, {}))


def _overlaps(groups, group_vars, ancestors, own):
    """(kind, first, second, text) for each pair of unrelated GROUPS of a host whose GPU settings collide."""
    found = []
    for index, first in enumerate(groups):
        for second in groups[index + 1 :]:
            if first in ancestors.get(second, ()) or second in ancestors.get(first, ()):
                continue  # a child group refines its parent's values on purpose
            first_vars = {k: v for k, v in group_vars.get(first, {}).items() if k not in own}
            second_vars = {k: v for k, v in group_vars.get(second, {}).items() if k not in own}
            found += _pair_overlaps(first, first_vars, second, second_vars, groups, group_vars)
    return found


def _pair_overlaps(first, first_vars, second, second_vars, groups, group_vars):
    found = []
    if PRODUCT_VARIABLE in first_vars and PRODUCT_VARIABLE in second_vars:
        values = (first_vars[PRODUCT_VARIABLE], second_vars[PRODUCT_VARIABLE])
        if _product_key(values[0]) != _product_key(values[1]):
            winner = _winner(PRODUCT_VARIABLE, groups, group_vars)
            found.append(
                (
                    "product",
                    first,
                    second,
                    f"which set {PRODUCT_VARIABLE} differently ({values[0]!r} and {values[1]!r}): Ansible merges both "
                    f"groups into the host, so it is planned with {PRODUCT_VARIABLE} from {winner} "
                    f"({group_vars[winner][PRODUCT_VARIABLE]!r}); keep each GPU node in one GPU-model group, or set "
                    "the variable in the host's host_vars",
                )
            )
    first_sharing = {k: v for k, v in first_vars.items() if k in SHARING_VARIABLES}
    second_sharing = {k: v for k, v in second_vars.items() if k in SHARING_VARIABLES}
    if first_sharing and second_sharing and first_sharing != second_sharing:
        names = sorted({*first_sharing, *second_sharing})
        sources = " and ".join(f"{name} from {_winner(name, groups, group_vars)}" for name in names)
        found.append(
            (
                "sharing",
                first,
                second,
                f"which both set GPU sharing ({first}: {', '.join(sorted(first_sharing))}; {second}: "
                f"{', '.join(sorted(second_sharing))}): Ansible merges them variable by variable, so it is planned "
                f"with {sources}; keep each GPU node in one GPU-model group, or set these variables in the host's "
                "host_vars",
            )
        )
    return found


def group_overlap_warnings(host_groups, group_vars, ancestors, host_own=None):
    """Warnings for GPU nodes in two unrelated groups that set the product differently, or both set GPU sharing.

    HOST_GROUPS: {host: its groups in Ansible's merge order (inventory/helpers.py sort_groups: depth, priority,
    name; the later wins)}. GROUP_VARS: {group: {variable: value}} as each group sets them itself (product and
    sharing variables suffice). ANCESTORS: {group: names of its ancestor groups}. HOST_OWN: {host: variables the
    host sets itself}, which settle a collision. A parent and its child are layered on purpose: never warned.
    """
    grouped = {}
    for host, groups in host_groups.items():
        own = (host_own or {}).get(host, ())
        for key in _overlaps(list(groups), group_vars, ancestors, own):
            grouped.setdefault(key, []).append(host)
    return [
        f"{_hosts_are(hosts)} in groups {first} and {second}, {text}"
        for (_kind, first, second, text), hosts in grouped.items()
    ]


def null_sharing_warnings(nulls, host_groups=None, group_vars=None):
    """Warnings for sharing variables left empty (null), which the plan reads as no sharing.

    NULLS: {host: [variables whose value is null]}. A null that switches off a value another group of the host
    sets (HOST_GROUPS, GROUP_VARS as for group_overlap_warnings) is deliberate: there is no other way to unset it.
    """
    by_variable = {}
    for host, names in nulls.items():
        groups = (host_groups or {}).get(host, ())
        for name in names:
            overridden = any((group_vars or {}).get(group, {}).get(name) is not None for group in groups)
            if name in NULL_MEANINGS and not overridden:
                by_variable.setdefault(name, []).append(host)
    warnings = []
    for name, hosts in sorted(by_variable.items()):
        meaning, effect, example = NULL_MEANINGS[name]
        warnings.append(
            f"{name} is set with no value (null) for {hosts_text(hosts, _HOSTS_SHOWN)}: the plan reads it as "
            f"{meaning}, so {effect}; give it a value such as {example}, or remove the key (no value of {name} "
            f"means {meaning}: null is only for switching off what a parent group sets)"
        )
    return warnings


def outside_rke2_warnings(groups, gpu_group=GPU_GROUP):
    """A warning for the GPU nodes that no RKE2 group holds: no play of cluster.yml ever makes them nodes."""
    in_rke2 = {host for group in RKE2_GROUPS for host in groups.get(group) or ()}
    outside = [host for host in groups.get(gpu_group) or () if host not in in_rke2]
    if not outside:
        return []
    one = len(outside) == 1
    them = "it" if one else "them"
    become = "it never becomes a Kubernetes node" if one else "they never become Kubernetes nodes"
    return [
        f"{_hosts_are(outside)} in {gpu_group} but in neither {RKE2_GROUPS[0]} nor {RKE2_GROUPS[1]}: "
        f"playbooks/cluster.yml never installs RKE2 on {them}, so {become}, and gpu_sharing fails on {them} after "
        f"the GPU hosts are prepared; add {them} to {RKE2_GROUPS[1]} (or {RKE2_GROUPS[0]}), or remove {them} from "
        f"{gpu_group}"
    ]


def missing_group_message(group, group_names):
    """Why the plan cannot start without GROUP, with the nearest groups the inventory has ("did you mean")."""
    near = difflib.get_close_matches(group, sorted(set(group_names) - {"all", "ungrouped"}), n=3, cutoff=0.6)
    if not near:
        return (
            f"group {group!r} is not in the inventory; put the GPU nodes in a group {group} (the README's "
            "inventory contract)"
        )
    return (
        f"group {group!r} is not in the inventory; did you mean {' or '.join(near)}? Rename it {group}: the plan and "
        f"the playbooks read the GPU nodes from {group}"
    )


def _source_folders(sources):
    """The folders Ansible looks for group_vars and host_vars in: each inventory source's, a file's own folder."""
    folders = []
    for source in sources or ():
        source = str(source)
        if "," in source and not os.path.exists(source):
            continue  # a host list ("n1,n2,")
        folder = source if os.path.isdir(source) else os.path.dirname(source)
        if folder not in folders:
            folders.append(folder)
    return folders


def _shadowed(folder):
    """(ignored path, path read in its place) in one group_vars or host_vars FOLDER."""
    entries = set(os.listdir(folder))
    stems = {os.path.splitext(entry)[0] if entry.endswith(VARS_FILE_EXTENSIONS) else entry for entry in entries}
    found = []
    for stem in sorted(stems):
        # The name alone (a folder, or a file without extension) is looked for first.
        candidates = [stem] if stem in entries else []
        candidates += [stem + ext for ext in VARS_FILE_EXTENSIONS if stem + ext in entries]
        found += [(os.path.join(folder, other), os.path.join(folder, candidates[0])) for other in candidates[1:]]
    return found


def _shadowed_warning(ignored, read):
    name = os.path.basename(ignored)
    if os.path.isdir(read):
        return (
            f"{ignored} is not read: Ansible reads the folder {read} in its place (a folder wins over a file of the "
            f"same name); move {name} into that folder (e.g. as main.yml)"
        )
    stem = os.path.splitext(name)[0]
    order = ", ".join((stem, *(stem + ext for ext in VARS_FILE_EXTENSIONS)))
    return (
        f"{ignored} is not read: Ansible reads {read} in its place (of {order} only the first found is read); "
        "merge the two files"
    )


def shadowed_vars_file_warnings(sources):
    """Warnings for vars files Ansible skips because a folder or another file of the same name comes first.

    SOURCES: the inventory sources (ansible_inventory_sources). A group_vars/all.yml beside group_vars/all/
    (where ansible-vault's file often goes) is never read, and nothing says so.
    """
    warnings = []
    for source in _source_folders(sources):
        for kind in VARS_FOLDERS:
            folder = os.path.join(source, kind)
            if os.path.isdir(folder):
                warnings += [_shadowed_warning(ignored, read) for ignored, read in _shadowed(folder)]
    return warnings
