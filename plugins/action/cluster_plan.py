# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpuops.cluster.cluster_plan: the whole plan runs once, on the controller."""

from __future__ import annotations

import json
import os
import tempfile

import yaml
from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible_collections.gpuops.cluster.plugins.module_utils._cluster_plan import (
    DEFAULT_SETTINGS,
    FILES,
    INTENT_VARIABLES,
    IntentError,
    IntentErrors,
    plan_cluster,
)

ARGUMENT_SPEC = {
    "dest": {"type": "path", "required": True},
    "group": {"type": "str", "default": "gpu_nodes"},
    "namespace": {"type": "str", "default": DEFAULT_SETTINGS["namespace"]},
    "device_plugin_configmap": {"type": "str", "default": DEFAULT_SETTINGS["device_plugin_configmap"]},
    "mig_configmap": {"type": "str", "default": DEFAULT_SETTINGS["mig_configmap"]},
    "rke2": {"type": "bool"},
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


def _plain(value):
    # Templated values carry Ansible's tagged types; the plan and the YAML dumper want plain ones.
    return json.loads(json.dumps(value, default=to_text))


def read_intent(hostvars, hosts):
    """({host: {variable: value}}, [IntentError]) templating only the gpuops_* intent variables."""
    nodes, errors = {}, []
    for host in hosts:
        host_vars = hostvars[host]
        intent = {}
        for name in INTENT_VARIABLES:
            if name not in host_vars:
                continue
            try:
                intent[name] = _plain(host_vars[name])
            except AnsibleError as error:
                errors.append(IntentError(host, name, f"cannot be templated: {to_text(error.message)}"))
        nodes[host] = intent
    return nodes, errors


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


def _dest_problem(dest):
    """Why DEST cannot hold the plan, or None (checked before anything is written)."""
    if os.path.exists(dest) and not os.path.isdir(dest):
        return f"dest {dest} exists and is not a directory; give gpuops_plan_dir a directory (it is created if absent)"
    for name in FILES:
        path = os.path.join(dest, name)
        if os.path.isdir(path):
            return f"{path} is a directory; remove it so the plan file can be written there"
    return None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        args = validation.validated_parameters

        groups = task_vars.get("groups", {})
        if args["group"] not in groups:
            return {**result, "failed": True, "msg": f"group {args['group']!r} is not in the inventory"}
        nodes, errors = read_intent(task_vars["hostvars"], groups[args["group"]])
        rke2 = args["rke2"]
        if rke2 is None:
            rke2 = bool(groups.get("rke2_servers") or groups.get("rke2_agents"))
        settings = {
            "namespace": args["namespace"],
            "device_plugin_configmap": args["device_plugin_configmap"],
            "mig_configmap": args["mig_configmap"],
            "rke2": rke2,
        }
        try:
            plan = plan_cluster(nodes, settings)
        except IntentErrors as invalid:
            plan = None
            # A variable that could not be templated is reported once, not again as "not set".
            seen = {(e.host, e.variable) for e in errors}
            errors += [e for e in invalid.errors if (e.host, e.variable) not in seen]
        if errors:
            return {
                **result,
                "failed": True,
                "changed": False,
                "errors": [{"host": e.host, "variable": e.variable, "message": e.message} for e in errors],
                "msg": "The GPU intent in the inventory is invalid; nothing was written.\n" + str(IntentErrors(errors)),
            }
        problem = _dest_problem(args["dest"])
        if problem:
            return {**result, "failed": True, "changed": False, "msg": problem + "; nothing was written."}
        return {**result, **self._apply(plan, args["dest"])}

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
            os.makedirs(dest, exist_ok=True)
            _write_all({path: files[os.path.basename(path)] for path in changed_files})
        outcome = {
            "changed": bool(changed_files),
            "dest": dest,
            "files": [os.path.join(dest, name) for name in files],
            "changed_files": changed_files,
            "capacity": plan.capacity,
            "table": plan.table,
        }
        if plan.notes:
            outcome["warnings"] = list(plan.notes)
        if diffs:
            outcome["diff"] = diffs
        return outcome
