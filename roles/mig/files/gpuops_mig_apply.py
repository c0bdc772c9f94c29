# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Re-create the MIG layout with the same code as the gpuops.cluster.nvidia_mig module.

Installed by the gpuops.cluster.mig role beside module_utils.json, the sources of the collection's _gpu and
_host packages (lookup gpuops.cluster.python_sources), and run at boot by gpuops-mig-apply.service
(python3 gpuops_mig_apply.py [--config-file F] --config-name N [--modules module_utils.json]); without
--config-file only the built-in configs (all-disabled, all-1g.10gb, all-balanced, ...) exist. Exit status:
0 layout in place, 1 not applied (the reason is printed), 2 a MIG mode change waits for a reboot
(a GPU reset, tried first as mig-parted does, failed or was not possible; the reason is printed).
"""

import argparse
import importlib
import importlib.abc
import importlib.util
import json
import os
import shutil
import subprocess
import sys


class Sources(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the modules of SOURCES ({dotted name: source}); each prefix of a name is a package."""

    def __init__(self, sources, origin):
        self.sources = sources
        self.packages = {name.rsplit(".", depth)[0] for name in sources for depth in range(1, name.count(".") + 1)}
        self.origin = origin

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.sources and fullname not in self.packages:
            return None
        origin = f"{self.origin}:{fullname}"
        return importlib.util.spec_from_loader(fullname, self, origin=origin, is_package=fullname in self.packages)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # The role's own copy of the collection's code, run as an import runs a module.
        source = self.sources.get(module.__name__, "")
        exec(compile(source, module.__spec__.origin, "exec"), module.__dict__)


def run(argv):
    completed = subprocess.run(argv, capture_output=True, text=True, check=False)
    return completed.returncode, completed.stdout, completed.stderr


def describe_instance(instance):
    """"3g.40gb at 4:4", and the compute instances of a GI that holds other than one spanning it."""
    text = f"{instance['profile']} at {instance['placement']}"
    if "compute_instance_profiles" not in instance:
        return text
    return f"{text} (compute instances: {', '.join(instance['compute_instance_profiles']) or 'none'})"


def describe(layout):
    if not layout["mig_enabled"]:
        return "MIG disabled"
    instances = ", ".join(describe_instance(i) for i in layout["instances"])
    return "MIG enabled: " + (instances or "no instances")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-file", help="mig-parted v1 document (JSON); omitted: built-in configs only")
    parser.add_argument("--config-name", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    modules = os.path.join(here, "module_utils.json")
    parser.add_argument("--modules", default=modules, help="sources of the collection's packages (JSON)")
    parser.add_argument("--check", action="store_true", help="print the plan, change nothing")
    args = parser.parse_args()
    # The role copies the sources of the collection's _gpu and _host packages there: the very code nvidia_mig runs.
    with open(args.modules, encoding="utf-8") as handle:
        sys.meta_path.insert(0, Sources(json.load(handle), args.modules))
    host = "ansible_collections.gpuops.cluster.plugins.module_utils._host"
    engine = importlib.import_module(host + ".mig_reconcile")
    errors = importlib.import_module(host + ".errors")
    binary = shutil.which("nvidia-smi")
    if binary is None:
        print("nvidia-smi not found in PATH: the MIG layout cannot be restored", file=sys.stderr)
        return 1
    document = None
    if args.config_file:
        with open(args.config_file, encoding="utf-8") as handle:
            document = json.load(handle)
    try:
        result = engine.reconcile(run, binary, document, args.config_name, check_mode=args.check)
    except errors.MigReconcileError as exc:
        print(f"MIG layout {args.config_name} not applied: {exc.message}", file=sys.stderr)
        if exc.command:
            print(json.dumps(exc.command, indent=2), file=sys.stderr)
        return 1
    for gpu in result["gpus"]:
        state = "changed" if gpu["changed"] else "unchanged"
        print(f"GPU {gpu['index']} ({gpu['name']}): {describe(gpu['after'])} [{state}]")
        if gpu.get("reset"):
            reason = f": {gpu['reset_reason']}" if gpu.get("reset_reason") else ""
            print(f"GPU {gpu['index']}: pending MIG mode, GPU reset {gpu['reset']}{reason}")
    for warning in result["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    changing = [c for c in result["commands"] if c.get("changes_state")]
    print(f"{len(result['commands'])} nvidia-smi calls, {len(changing)} of them changed state")
    if result["reboot_required"]:
        print(f"MIG mode change pending on GPUs {result['pending_gpus']}: reboot required", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
