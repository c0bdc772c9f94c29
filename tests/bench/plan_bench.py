# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time playbooks/plan.yml on generated inventories of GPU nodes (a benchmark, not a test).

Run from the repository root (make bench). Measures 10 and 1000 nodes with three intents (the
plan computes each distinct intent once), then 1000 nodes whose intents are ALL distinct (each
its own time-slicing replicas), so that the cache cannot hide work that grows faster than the
node count. Prints the times and their ratios to the 10-node run; the plan is meant to be linear
in nodes, with a ratio of at most 3 and under 30 s for 1000 nodes.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "playbooks" / "plan.yml"
SIZES = (10, 1000)
DISTINCT_NODES = 1000
# Three GPU models in equal parts, as in inventories/example.
MODELS = {
    "gpu_a100_80gb": "gpuops_gpu_product: NVIDIA A100-SXM4-80GB\ngpuops_gpu_count: 8\n"
    "gpuops_mig_config: all-balanced\n",
    "gpu_h100": "gpuops_gpu_product: NVIDIA H100 80GB HBM3\ngpuops_gpu_count: 8\ngpuops_mig_config: all-1g.10gb\n",
    "gpu_l4": "gpuops_gpu_product: NVIDIA L4\ngpuops_gpu_count: 4\ngpuops_time_slicing:\n  replicas: 4\n",
}


def write_inventory(folder, nodes, distinct=False):
    """DISTINCT: every host gets its own gpuops_time_slicing replicas, so no two intents are equal."""
    lines = [
        "all:",
        "  children:",
        "    rke2_servers:",
        "      hosts:",
        "        cp-1:",
        "    gpu_nodes:",
        "      children:",
    ]
    models = list(MODELS)
    for index, model in enumerate(models):
        lines += [f"        {model}:", "          hosts:"]
        for n in range(index, nodes, len(models)):
            lines.append(f"            {model.replace('_', '-')}-{n:04d}:")
            if distinct:
                lines += ["              gpuops_time_slicing:", f"                replicas: {n + 2}"]
    (folder / "group_vars").mkdir(parents=True)
    (folder / "hosts.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "group_vars" / "all.yml").write_text("gpuops_mig_strategy: mixed\n", encoding="utf-8")
    for model, text in MODELS.items():
        (folder / "group_vars" / f"{model}.yml").write_text(text, encoding="utf-8")


def time_plan(folder):
    command = [
        str(pathlib.Path(sys.executable).parent / "ansible-playbook"),
        str(PLAYBOOK),
        "-i",
        str(folder),
        "-e",
        f"gpuops_plan_dir={folder / 'plan'}",
    ]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    start = time.perf_counter()
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"plan of {folder.name} failed (rc {run.returncode}):\n{run.stdout}\n{run.stderr}")
    return elapsed


def measure(tmp, name, nodes, distinct=False):
    folder = pathlib.Path(tmp) / name
    write_inventory(folder, nodes, distinct)
    elapsed = time_plan(folder)
    capacity = json.loads((folder / "plan" / "capacity.json").read_text(encoding="utf-8"))["nodes"]
    if len(capacity) != nodes:
        sys.exit(f"plan of {nodes} GPU nodes holds {len(capacity)} nodes")
    configs = {node["labels"]["nvidia.com/device-plugin.config"] for node in capacity.values()}
    if distinct and len(configs) != nodes:
        sys.exit(f"{nodes} distinct intents gave {len(configs)} device-plugin configs")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=pathlib.Path, help="also write the times and ratios to this file")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="gpuops-bench-") as tmp:
        base = measure(tmp, f"nodes-{SIZES[0]}", SIZES[0])
        runs.append({"nodes": SIZES[0], "distinct": False, "seconds": round(base, 2), "ratio": 1.0})
        print(f"plan of {SIZES[0]:>4} GPU nodes: {base:.2f} s")
        for nodes in SIZES[1:]:
            elapsed = measure(tmp, f"nodes-{nodes}", nodes)
            runs.append(
                {"nodes": nodes, "distinct": False, "seconds": round(elapsed, 2), "ratio": round(elapsed / base, 2)}
            )
            print(f"plan of {nodes:>4} GPU nodes: {elapsed:.2f} s, ratio to {SIZES[0]}: {elapsed / base:.2f}")
        elapsed = measure(tmp, f"distinct-{DISTINCT_NODES}", DISTINCT_NODES, distinct=True)
        runs.append(
            {"nodes": DISTINCT_NODES, "distinct": True, "seconds": round(elapsed, 2), "ratio": round(elapsed / base, 2)}
        )
        print(
            f"plan of {DISTINCT_NODES:>4} GPU nodes, all intents distinct: {elapsed:.2f} s, "
            f"ratio to {SIZES[0]}: {elapsed / base:.2f}"
        )
    print(f"target: ratio <= 3 and < 30 s for {SIZES[-1]} nodes")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"runs": runs, "target": {"ratio": 3, "seconds": 30}}, indent=2) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
