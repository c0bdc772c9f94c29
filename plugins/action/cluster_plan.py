# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuops.cluster.cluster_plan: the whole plan runs once, on the controller."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping

import yaml
from ansible.errors import AnsibleError
from ansible.inventory.helpers import sort_groups
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.vars.plugins import get_vars_from_inventory_sources
from ansible_collections.gpuops.cluster.plugins.filter.awx_survey import INVENTORY_PREFIX as AWX_SURVEY_PREFIX
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import (
    DEFAULT_SETTINGS,
    FILES,
    INTENT_VARIABLES,
    ROLE_VARIABLES,
    plan_cluster,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.documents import settings_problems
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentError, IntentErrors
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.inventory import (
    NULL_MEANINGS,
    PRODUCT_VARIABLE,
    RKE2_GROUPS,
    RUN_VARIABLES,
    SHARING_VARIABLES,
    group_overlap_warnings,
    group_warnings,
    missing_group_message,
    null_sharing_warnings,
    outside_rke2_warnings,
    shadowed_vars_file_warnings,
    unknown_variable_warnings,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.failure import failed_result
from ansible_collections.gpuops.cluster.plugins.plugin_utils.inventory_paths import beside_inventory
from ansible_collections.gpuops.cluster.plugins.plugin_utils.plain import plain
from ansible_collections.gpuops.cluster.plugins.plugin_utils.role_variables import (
    HOST_ROLES,
    RoleVariableChecker,
    load_role_defaults,
    load_role_options,
)

display = Display()

# Where the plan goes when gpuops_plan_dir (dest) is not given, next to the inventory.
DEFAULT_DEST_NAME = ".gpuops-plan"
ARGUMENT_SPEC = {
    "dest": {"type": "path"},
    "group": {"type": "str", "default": "gpu_nodes"},
    "namespace": {"type": "str"},
    "device_plugin_configmap": {"type": "str"},
    "mig_configmap": {"type": "str"},
}
# The plan of this run, kept by playbooks/tasks/plan.yml: a later plan of the same inputs reuses it.
RUN_PLAN_VARIABLE = "gpuops_plan"
# The hosts a run plans without though they are still in the group (a node being removed).
LEAVING_VARIABLE = "__gpuops_plan_leaving"
# Cluster-wide inventory variables that name the settings a task leaves out, so the plan playbook and
# every Kubernetes role agree on one namespace and one pair of ConfigMap names.
SETTING_VARIABLES = {
    "namespace": "gpuops_operator_namespace",
    "device_plugin_configmap": "gpuops_device_plugin_configmap",
    "mig_configmap": "gpuops_mig_configmap",
}


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the ConfigMap's embedded configs) as YAML literal blocks."""


def _represent_str(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def dump_yaml(document):
    return yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False)


def dump_json(document):
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


class HostView(Mapping):
    """One host's variables, each templated when read."""

    def __init__(self, variables, templar):
        self._variables = variables
        self._templar = templar

    def __getitem__(self, name):
        return self._templar.template(self._variables[name])

    def __contains__(self, name):
        # Mapping's own would template the value just to see whether the name is set.
        return name in self._variables

    def __iter__(self):
        return iter(self._variables)

    def __len__(self):
        return len(self._variables)


def _template(host_vars, host, name, errors):
    """The plain value of one variable, or None with an IntentError when it cannot be templated."""
    try:
        return plain(host_vars[name])
    except AnsibleError as error:
        errors.append(IntentError(host, name, f"cannot be templated: {to_text(error.message)}"))
        return None


def _role_values(host_vars, host, names, role_checker, errors, untemplated=None):
    """{variable: templated value} of the role variables among NAMES the host sets, each checked (errors added).

    UNTEMPLATED, a list, takes the errors of values that could not be templated instead of ERRORS.
    """
    values = {}
    for name in sorted(names.intersection(host_vars)):
        failed = []
        values[name] = _template(host_vars, host, name, failed)
        # A value that could not be templated is reported once, not checked as None.
        problem = None if failed else role_checker.problem(name, values[name])
        (errors if untemplated is None else untemplated).extend(failed)
        if problem:
            errors.append(IntentError(host, name, problem))
    return values


def read_intent(hostvars, hosts, role_checker=None, role_defaults=None):
    """({host: {variable: value}}, [IntentError]) templating only the gpuops_* intent variables.

    HOSTVARS maps a host to its variables. With ROLE_CHECKER, the host roles' variables each host
    sets are templated and checked too. With ROLE_DEFAULTS, the driver's branch and version and the RKE2 version
    (set, else the role's default) join the intent, for the plan to check them against the node's GPUs and, on a
    DRA node, against the DRA driver's minimums.
    """
    nodes, errors = {}, []
    role_names = role_checker.names if role_checker else frozenset()
    for host in hosts:
        host_vars = hostvars[host]
        intent = {}
        for name in INTENT_VARIABLES:
            if name in host_vars:
                intent[name] = _template(host_vars, host, name, errors)
        role_values = _role_values(host_vars, host, role_names, role_checker, errors) if role_checker else {}
        if role_defaults is not None:
            for name in ROLE_VARIABLES:
                # Templated once: the role check above already read the ones the host sets.
                if name in role_values:
                    intent[name] = role_values[name]
                elif name in host_vars:
                    intent[name] = _template(host_vars, host, name, errors)
                else:
                    intent[name] = role_defaults.get(name)
        nodes[host] = intent
    return nodes, errors


def rke2_host_errors(hostvars, groups, role_checker, checked):
    """[IntentError] of the rke2 role's variables on the hosts of rke2_servers and rke2_agents, where the role runs,
    but CHECKED (the GPU nodes, whose role variables read_intent checks)."""
    checked = set(checked)
    hosts = dict.fromkeys(host for group in RKE2_GROUPS for host in groups.get(group) or () if host not in checked)
    errors = []
    for host in hosts:
        # A value that needs the host's facts (rke2_node_ip from ansible_default_ipv4) cannot be templated here:
        # on these hosts it is left to the role, which templates it after gathering them.
        _role_values(hostvars[host], host, role_checker.names_of("rke2"), role_checker, errors, untemplated=[])
    return errors


def null_intents(nodes, errors):
    """{host: [sharing variables set to null]}; a value that could not be templated (also None) is left out."""
    failed = {(error.host, error.variable) for error in errors}
    return {
        host: names
        for host, intent in nodes.items()
        if (names := [n for n in NULL_MEANINGS if n in intent and intent[n] is None and (host, n) not in failed])
    }


class InventoryGroups:
    """What each group of the inventory sets itself, which hostvars (merged per host) cannot tell.

    Read as Ansible's variable manager reads them (ansible-core 2.19 lib/ansible/vars/manager.py get_vars): the
    variables the inventory source gives a group or host, then the vars plugins' (group_vars/, host_vars/ beside
    the inventory), only for the product and sharing variables.
    """

    WATCHED = (PRODUCT_VARIABLE, *SHARING_VARIABLES)

    def __init__(self, inventory, loader, sources):
        self._inventory = inventory
        self._loader = loader
        self._sources = [source for source in sources or () if source]
        self._group_vars = {}

    def _own(self, entity):
        variables = {
            **entity.get_vars(),
            **get_vars_from_inventory_sources(self._loader, self._sources, [entity], "task"),
        }
        return {name: variables[name] for name in self.WATCHED if name in variables}

    def group_vars(self, name):
        if name not in self._group_vars:
            self._group_vars[name] = self._own(self._inventory.groups[name])
        return self._group_vars[name]

    def host_groups(self, host):
        """The host's groups but all, in the order Ansible merges them (the later wins)."""
        groups = self._inventory.get_host(host).get_groups()
        return [group.name for group in sort_groups(groups) if group.name != "all"]

    def views(self, hosts):
        """(host_groups, group_vars, ancestors, host_own) of HOSTS, as inventory.group_overlap_warnings takes them."""
        host_groups = {host: self.host_groups(host) for host in hosts}
        names = {name for groups in host_groups.values() for name in groups}
        group_vars = {name: self.group_vars(name) for name in names}
        ancestors = {name: {g.name for g in self._inventory.groups[name].get_ancestors()} for name in names}
        # Only hosts in two groups that set these variables can collide: the others' own variables are not read.
        busy = [host for host, groups in host_groups.items() if sum(bool(group_vars[g]) for g in groups) > 1]
        host_own = {host: set(self._own(self._inventory.get_host(host))) for host in busy}
        return host_groups, group_vars, ancestors, host_own


def inventory_warnings(hostvars, groups, role_names):
    """Warnings for unknown gpuops_* and role variables in HOSTVARS ({host: variables}), and for misnamed groups."""
    known = {"gpuops_": (*INTENT_VARIABLES, *RUN_VARIABLES)}
    for role in HOST_ROLES:
        known[role + "_"] = tuple(name for name in role_names if name.startswith(role + "_"))
    prefixes = tuple(known)
    # AWX survey answers (gpuops_awx_<option>, playbooks/tasks/awx_survey_answers.yml gives them to the hosts as
    # <option> before the plan) are extra vars, not inventory variables.
    names = {
        host: [n for n in host_vars if n.startswith(prefixes) and not n.startswith(AWX_SURVEY_PREFIX)]
        for host, host_vars in hostvars.items()
    }
    return group_warnings(groups) + unknown_variable_warnings(names, known)


def default_dest(task_vars):
    """A hidden folder next to the inventory (Ansible never reads hidden entries of an inventory folder),
    or in the current directory when the inventory is not a path."""
    return beside_inventory(task_vars.get("ansible_inventory_sources"), DEFAULT_DEST_NAME)


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_all(texts):
    """Write {path: text}: every temporary file first, then replace them all, so a failure while
    writing leaves the previous plan as it was; temporary files are removed on any failure."""
    temporaries = {}
    try:
        for path, text in texts.items():
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".gpuops-plan-")
            temporaries[path] = temporary
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.chmod(temporary, 0o644)
        for path, temporary in temporaries.items():
            os.replace(temporary, path)
    finally:
        for temporary in temporaries.values():
            if os.path.exists(temporary):
                os.unlink(temporary)


def _nearest_existing(path):
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


def _dest_problem(dest):
    """Why DEST cannot hold the plan, or None (checked before anything is written)."""
    move = "; set gpuops_plan_dir to another folder (it is created if absent)"
    if os.path.exists(dest) and not os.path.isdir(dest):
        return f"dest {dest} exists and is not a directory{move}"
    for name in FILES:
        path = os.path.join(dest, name)
        if os.path.isdir(path):
            return f"{path} is a directory; remove it so the plan file can be written there"
    existing = _nearest_existing(dest)
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the plan cannot be written to {dest}: {existing} is not writable (a read-only install?){move}"
    return None


def _earlier_plan(earlier, inputs):
    """The plan this run computed already (RUN_PLAN_VARIABLE) when it was made from the same inputs, as the
    outcome of a plan that changes nothing: the roles that plan again within a run get it without a second
    computation. None when there is none, or when the group, its hosts, the settings or the folder differ."""
    if not isinstance(earlier, Mapping) or earlier.get("failed") or plain(earlier.get("inputs")) != inputs:
        return None
    kept = ("dest", "files", "capacity", "scheduler_extenders", "dra", "documents", "table", "inputs")
    kept_plan = {key: plain(earlier[key]) for key in kept if key in earlier}
    return {**kept_plan, "changed": False, "changed_files": [], "reused": True}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        args = validation.validated_parameters
        dest = args["dest"] or default_dest(task_vars)

        groups = task_vars.get("groups", {})
        if args["group"] in groups:
            inputs, sources = self._inputs(args, task_vars, groups[args["group"]], dest)
            # Before the hosts' variables are read: a plan this run made already from the same inputs is handed back.
            earlier = _earlier_plan(task_vars.get(RUN_PLAN_VARIABLE), inputs)
            if earlier is not None:
                return {**result, **earlier}
        checker = RoleVariableChecker(load_role_options())
        self._role_defaults = load_role_defaults()
        # Each host's variables are computed once: Ansible does it anew at every hostvars[host].
        hostvars = {host: self._host_view(task_vars, host) for host in groups.get("all", ())}
        # Shown on failure too: a misspelt variable often explains an error ("gpuops_gpu_product: is not set").
        warnings = inventory_warnings(hostvars, groups, checker.names)
        warnings += shadowed_vars_file_warnings(task_vars.get("ansible_inventory_sources"))
        if args["group"] not in groups:
            message = missing_group_message(args["group"], groups)
            return {**result, "failed": True, "msg": message, **({"warnings": warnings} if warnings else {})}
        gpu_hosts, settings = inputs["hosts"], inputs["settings"]
        nodes, errors = read_intent(hostvars, gpu_hosts, checker, self._role_defaults)
        errors += rke2_host_errors(hostvars, groups, checker, gpu_hosts)
        warnings += self._group_warnings(task_vars, gpu_hosts, nodes, errors)
        warnings += outside_rke2_warnings(groups, args["group"])
        errors += [IntentError("all", sources[name], message) for name, message in settings_problems(settings).items()]
        try:
            plan = plan_cluster(nodes, settings)
        except IntentErrors as invalid:
            plan = None
            # A variable that could not be templated is reported once, not again as "not set".
            seen = {(e.host, e.variable) for e in errors}
            errors += [e for e in invalid.errors if (e.host, e.variable) not in seen]
        if warnings:
            result["warnings"] = warnings
        if errors:
            headline = "The GPU intent in the inventory is invalid; nothing was written."
            return {**result, **failed_result(IntentErrors(errors), headline)}
        problem = _dest_problem(dest)
        if problem:
            return {**result, "failed": True, "changed": False, "msg": problem + "; nothing was written."}
        outcome = self._apply(plan, dest)
        outcome["inputs"] = inputs
        outcome["warnings"] = warnings + outcome.get("warnings", [])
        if not outcome.get("failed"):
            self._show(plan.table + self._files_line(outcome))
        return {**result, **outcome}

    def _inputs(self, args, task_vars, group_hosts, dest):
        """What a plan is made from besides the hosts' variables (the group, its hosts, the settings, the folder),
        and where each setting came from."""
        # Hosts on their way out of the cluster (playbooks/remove_node.yml sets it): planned as if gone already.
        leaving = plain(self._templar.template(task_vars.get(LEAVING_VARIABLE) or [])) or []
        settings, sources = {}, {}
        for name, variable in SETTING_VARIABLES.items():
            if args[name] is not None:
                settings[name], sources[name] = args[name], f"option {name}"
            else:
                settings[name] = plain(self._templar.template(task_vars.get(variable, DEFAULT_SETTINGS[name])))
                sources[name] = variable
        hosts = [host for host in group_hosts if host not in leaving]
        return {"group": args["group"], "hosts": hosts, "settings": settings, "dest": dest}, sources

    def _group_warnings(self, task_vars, hosts, nodes, errors):
        """Warnings that need each group's own variables: GPU nodes in two GPU-model groups, null sharing."""
        nulls = null_intents(nodes, errors)
        # HostVars is built on the run's InventoryManager (ansible-core 2.19 lib/ansible/vars/hostvars.py), which no
        # public attribute of an action gives; without it only the null check runs, group-blind.
        inventory = getattr(task_vars.get("hostvars"), "_inventory", None)
        if inventory is None:
            return null_sharing_warnings(nulls)
        reader = InventoryGroups(inventory, self._loader, task_vars.get("ansible_inventory_sources"))
        host_groups, group_vars, ancestors, host_own = reader.views(hosts)
        return group_overlap_warnings(host_groups, group_vars, ancestors, host_own) + null_sharing_warnings(
            nulls, host_groups, group_vars
        )

    def _host_view(self, task_vars, host):
        # hostvars[host] templates with that host's variables only; an inventory value such as
        # "{{ hostvars['srv1'].ansible_host }}" also needs hostvars and groups, as a task on the host has.
        # The host roles' defaults are under them, as in a task of those roles.
        variables = task_vars["hostvars"].raw_get(host)
        context = {
            **self._role_defaults,
            **variables,
            "hostvars": task_vars["hostvars"],
            "groups": task_vars.get("groups", {}),
        }
        return HostView(variables, self._templar.copy_with_new_env(available_variables=context))

    def _show(self, text):
        """Print for people as plain text: a table reads as one with any callback and result format."""
        if not self._task.no_log:
            display.display(text.rstrip("\n"))

    def _files_line(self, outcome):
        if self._task.check_mode:
            state = "check mode, nothing written"
        else:
            state = f"{len(outcome['changed_files'])} of {len(outcome['files'])} files changed"
        return f"Plan files: {outcome['dest']} ({state}); set gpuops_plan_dir to move them\n"

    def _apply(self, plan, dest):
        files = plan.files(dump_yaml, dump_json)
        changed_files, diffs = [], []
        for name, text in files.items():
            path = os.path.join(dest, name)
            before = _read(path)
            if before == text:
                continue
            changed_files.append(path)
            if self._task.diff:
                diffs.append({"before": before or "", "after": text, "before_header": path, "after_header": path})
        if changed_files and not self._task.check_mode:
            try:
                os.makedirs(dest, exist_ok=True)
                _write_all({path: files[os.path.basename(path)] for path in changed_files})
            except OSError as error:
                return {
                    "failed": True,
                    "changed": False,
                    "msg": f"the plan cannot be written to {dest}: {error.strerror} ({error.filename}); set "
                    "gpuops_plan_dir to a writable folder",
                }
        outcome = {
            "changed": bool(changed_files),
            "reused": False,
            "dest": dest,
            "files": [os.path.join(dest, name) for name in files],
            "changed_files": changed_files,
            "capacity": plan.capacity,
            # The kube-scheduler extenders of the memory-sharing backends (gpushare's), read by the rke2 role.
            "scheduler_extenders": plan.scheduler_extenders,
            # What NVIDIA's DRA driver is expected to publish on the DRA nodes (dra.json).
            "dra": plan.dra,
            # What the Kubernetes roles apply: the same documents as the files, as the API takes them.
            "documents": {**plan.manifests(dump_yaml), "gpu_operator_values": plan.gpu_operator_values},
            "table": plan.table,
        }
        if plan.notes:
            outcome["warnings"] = list(plan.notes)
        if diffs:
            outcome["diff"] = diffs
        return outcome
