# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Re-create the MIG layout with the same code as the gpuops.cluster.nvidia_mig module.

Installed by the gpuops.cluster.mig role beside module_utils.json, the sources of the collection's _gpu and
_host packages (lookup gpuops.cluster.python_sources), and run at boot by gpuops-mig-apply.service
(python3 gpuops_mig_apply.py [--config-file F] --config-name N [--modules module_utils.json] [--held-back UNIT]...);
without --config-file only the built-in configs (all-disabled, all-1g.10gb, all-balanced, ...) exist. Exit status:
0 layout in place, 1 not applied (the reason and each GPU's end state are printed), 2 a MIG mode change waits
for a reboot (a GPU reset, tried first as mig-parted does, failed or was not possible; the reason is printed).
Failures go to stderr, which systemd writes to the journal. The units named by --held-back (the Kubernetes
units whose drop-ins require this one) do not start while it fails: the failure says so.
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


UNIT = "gpuops-mig-apply.service"


def run(argv):
    completed = subprocess.run(argv, capture_output=True, text=True, check=False)
    return completed.returncode, completed.stdout, completed.stderr


class Failed(Exception):
    """The layout is not in place: what failed, in lines for the journal."""

    def __init__(self, lines, status=1):
        super().__init__(lines[0])
        self.lines, self.status = lines, status


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-file", help="mig-parted v1 document (JSON); omitted: built-in configs only")
    parser.add_argument("--config-name", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    modules = os.path.join(here, "module_utils.json")
    parser.add_argument("--modules", default=modules, help="sources of the collection's packages (JSON)")
    parser.add_argument("--check", action="store_true", help="print the plan, change nothing")
    parser.add_argument(
        "--held-back", action="append", default=[], metavar="UNIT", help="a unit that does not start while this fails"
    )
    return parser.parse_args()


def load_engine(modules):
    """The collection's mig_reconcile, errors and model modules from the role's copy of their sources."""
    try:
        with open(modules, encoding="utf-8") as handle:
            sys.meta_path.insert(0, Sources(json.load(handle), modules))
    except (OSError, ValueError) as exc:
        raise Failed([f"the collection's MIG code {modules} cannot be read: {exc}"]) from exc
    host = "ansible_collections.gpuops.cluster.plugins.module_utils._host"
    return tuple(importlib.import_module(f"{host}.{name}") for name in ("mig_reconcile", "errors", "model"))


def read_document(path):
    """The mig-parted document, or None for the built-in configs."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise Failed([f"the MIG config file {path} cannot be read as JSON: {exc}"]) from exc


def apply(args, engine, errors, document):
    """Run the reconcile; Failed with the reason and each GPU's end state when it fails."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        raise Failed(["nvidia-smi not found in PATH"])
    try:
        return engine.reconcile(run, binary, document, args.config_name, check_mode=args.check)
    except errors.MigReconcileError as exc:
        lines = [exc.message]
        # A failed change puts every GPU back; one line per GPU, so the journal shows where each one is.
        lines += [engine.end_state_text(gpu) for gpu in exc.result.get("gpus", []) if "rolled_back" in gpu]
        if exc.command:  # one line: one journal entry
            lines.append("the nvidia-smi call that failed: " + json.dumps(exc.command))
        raise Failed(lines) from exc


def report(result, describe):
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
        raise Failed([f"MIG mode change pending on GPUs {result['pending_gpus']}: reboot required"], 2)


def held_back(units):
    """What the journal says about Kubernetes when the restore failed (systemd.unit(5): a unit that Requires=
    and is After= a unit whose start fails is not started: "Dependency failed")."""
    return (
        f"Kubernetes is held back: {', '.join(units)} require {UNIT} and do not start until it succeeds, so this "
        "node offers no GPU whose layout differs from the plan. Fix the cause above, then run "
        f"`systemctl start {UNIT}` (or start one of those units, which runs it first), or reboot"
    )


def main():
    args = arguments()
    try:
        engine, errors, model = load_engine(args.modules)
        report(apply(args, engine, errors, read_document(args.config_file)), model.describe_layout)
    except Failed as failure:
        print(f"MIG layout {args.config_name} not applied: {failure.lines[0]}", file=sys.stderr)
        for line in failure.lines[1:]:
            print(line, file=sys.stderr)
        if args.held_back:
            print(held_back(args.held_back), file=sys.stderr)
        return failure.status
    return 0


if __name__ == "__main__":
    sys.exit(main())
