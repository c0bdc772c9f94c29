# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time the Kubernetes stages on the test bed's cluster: first run, no-op run, and the floor of each.

Run from the repository root (make bench). Starts the harness of tests/harness (the control plane and real
kubelets built from Go modules, the GPU node stand-in) with the GPU nodes of the cluster scenario
(molecule/cluster: its hardware file and group_vars), then runs playbooks/gpu_operator.yml,
gpu_memory_sharing.yml and gpu_sharing.yml in that order (the first converge), each once more (the no-op, which
must change nothing) and, for each, its floor: one kubernetes.core.k8s_info per object kind the stage reads
(tests/bench/k8s/floor.yml). Prints the times and the no-op/floor ratios, writes them as JSON (--json, default
tests/output/bench/k8s.json) and keeps each run's output beside it (k8s/). The harness is stopped afterwards.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

from playbook_run import run_playbook

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENARIO = REPO / "molecule" / "cluster"
HARNESS = REPO / "tests" / "harness" / "cluster"
FLOOR = REPO / "tests" / "bench" / "k8s" / "floor.yml"
# The cluster scenario's hosts and groups (molecule/cluster/molecule.yml); never contacted.
HOSTS = {
    "gpu-a100-1": "gpu_a100",
    "gpu-l4-1": "gpu_l4",
    "gpu-h100-1": "gpu_h100",
    "gpu-hami-1": "gpu_hami",
    "gpu-gpushare-1": "gpu_gpushare",
}
# The object kinds each stage reads (its gpuops.cluster.k8s_reads lookups, its kubernetes.core k8s and helm tasks):
# the floor reads each once, with kubernetes.core.k8s_info as a play that reads the cluster would.
STAGES = {
    "gpu_operator": [
        ("v1", "Namespace"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("nvidia.com/v1", "ClusterPolicy"),
        ("v1", "ConfigMap"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "Deployment"),
        ("v1", "Secret"),
    ],
    "gpu_memory_sharing": [
        ("v1", "Namespace"),
        ("v1", "Node"),
        ("v1", "ConfigMap"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "Deployment"),
        ("v1", "Secret"),
    ],
    "gpu_sharing": [("v1", "Namespace"), ("v1", "ConfigMap"), ("v1", "Node"), ("v1", "Pod")],
}
TARGET = 2.0


def write_inventory(folder):
    lines = ["all:", "  children:", "    gpu_nodes:", "      children:"]
    for host, group in HOSTS.items():
        lines += [f"        {group}:", "          hosts:", f"            {host}:"]
    lines += ["  vars:", "    ansible_connection: local"]
    folder.mkdir(parents=True)
    (folder / "hosts.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "group_vars").symlink_to(SCENARIO / "inventory" / "group_vars")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=pathlib.Path, default=REPO / "tests" / "output" / "bench" / "k8s.json")
    args = parser.parse_args()
    # Absolute: the stages read the harness folder from the environment, wherever a task runs.
    args.json = args.json.resolve()
    output = args.json.parent
    folder = output / "k8s"
    shutil.rmtree(folder, ignore_errors=True)
    write_inventory(folder)
    shared = pathlib.Path(os.environ.get("GPUOPS_SHARED", REPO.parent / "shared"))
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build" / "collections"),
        "ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_tasks",
        # What the cluster scenario's group_vars read: the harness folder, the checkout, the charts.
        "MOLECULE_EPHEMERAL_DIRECTORY": str(folder),
        "MOLECULE_PROJECT_DIRECTORY": str(REPO),
        "GPUOPS_SHARED": str(shared),
        "GPUOPS_NVSMI_FIXTURES": os.environ.get("GPUOPS_NVSMI_FIXTURES", str(shared / "fixtures" / "nvidia-smi")),
        "CONTAINERS_CONF": str(REPO / "tests" / "testbed" / "containers.conf"),
    }
    harness_dir = folder / "harness"
    subprocess.run(
        [str(REPO / "tests" / "testbed" / "build-kubernetes")], check=True, stdout=subprocess.DEVNULL, env=env
    )
    subprocess.run(
        [str(HARNESS), "start", str(harness_dir), str(SCENARIO / "files" / "gpu-nodes.yml")], check=True, env=env
    )
    results = []
    try:
        playbooks = {stage: REPO / "playbooks" / f"{stage}.yml" for stage in STAGES}
        first = {stage: run_playbook(folder, playbook, env)[0] for stage, playbook in playbooks.items()}
        for stage, playbook in playbooks.items():
            noop, recap = run_playbook(folder, playbook, env)
            changed = {host: counts["changed"] for host, counts in recap.items() if counts["changed"]}
            if changed:
                sys.exit(f"the no-op run of {stage} changed something: {changed}")
            kinds = [{"api_version": api, "kind": kind} for api, kind in STAGES[stage]]
            floor = run_playbook(folder, FLOOR, env, "-e", json.dumps({"bench_kinds": kinds}))[0]
            result = {
                "stage": stage,
                "first_s": round(first[stage], 2),
                "noop_s": round(noop, 2),
                "floor_s": round(floor, 2),
                "kinds_read": len(kinds),
                "noop_over_floor": round(noop / floor, 2),
                "target": TARGET,
                "met": noop / floor <= TARGET,
            }
            results.append(result)
            print(
                f"{stage + '.yml:':<24} first {result['first_s']:6.1f} s, no-op {result['noop_s']:6.1f} s, floor "
                f"{result['floor_s']:5.1f} s ({len(kinds)} kinds); no-op/floor {result['noop_over_floor']:.2f} "
                f"(target <= {TARGET}: {'met' if result['met'] else 'NOT met'})",
                flush=True,
            )
    finally:
        subprocess.run([str(HARNESS), "stop", str(harness_dir)], check=False, env=env)
    args.json.write_text(json.dumps({"stages": results}, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
