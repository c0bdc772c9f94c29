# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time playbooks/gpu_hosts.yml on N fresh test hosts: first converge, then a no-op run, against the floor.

Run from the repository root (make bench). For each N (1, 4 and 16 by default) it starts N systemd
containers of the test bed's Debian 12 image, gives each the nvidia-smi double with two NVIDIA L4 (as the
site scenario's GPU hosts), then times runs on them: gpu_hosts.yml (the first converge), then three rounds (--rounds)
of gpu_hosts.yml again (the no-op, which must change nothing) followed by tests/bench/hosts/floor.yml (the same
facts and one module per host: what any play on these hosts costs). The no-op and the floor are the medians of the
rounds: on this 2-core machine the same no-op run took from 14.0 to 18.8 s on the same 16 hosts, more than the
differences the ratio is to tell; every round's times are kept in the JSON. Prints each time, the no-op/floor and
no-op/first ratios and the seconds each added node costs the no-op, and writes them as JSON (--json, default
tests/output/bench/hosts.json); each run's inventory and output are kept beside it (hosts-N/). The hosts are
removed afterwards.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

from playbook_run import run_playbook

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = REPO / "tests" / "bench" / "hosts"
TESTBED = REPO / "tests" / "testbed"
IMAGE = os.environ.get("GPUOPS_TESTBED_IMAGE", "localhost/gpuops-debian12:latest")
LABEL = "gpuops.bench=hosts"
# What the site scenario's GPU hosts are (molecule/site/inventory): two L4, the driver of Debian 12's archive;
# no container engine on the bench hosts, so the toolkit configures none. NVIDIA's repository is unreachable from
# the test bed as from an air-gapped site; the bench names a closed port of each host for it, which refuses at once,
# so that the time a resolver takes to give up on nvidia.github.io (from 0 to 10 s, measured) is not timed.
GROUP_VARS = """\
gpuops_gpu_product: NVIDIA L4
gpuops_gpu_count: 2
nvidia_driver_branch: "535"
nvidia_container_toolkit_runtime: none
nvidia_container_toolkit_repo_url: http://127.0.0.1:9/libnvidia-container/stable
nvidia_container_toolkit_repo_timeout: 5
"""
TARGETS = {"noop_over_floor_at_16": 3.0}


def podman(*args, check=True):
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def remove_hosts():
    ids = podman("ps", "-aq", "--filter", f"label={LABEL}").stdout.split()
    if ids:
        podman("rm", "-f", "-t", "0", *ids)


def start_hosts(names):
    for name in names:
        podman(
            "run", "-d", "--name", name, "--hostname", name, "--label", LABEL, "--systemd=always", IMAGE, "/sbin/init"
        )
    deadline = time.monotonic() + 300
    waiting = set(names)
    while waiting:
        for name in sorted(waiting):
            state = podman("exec", name, "systemctl", "is-system-running", check=False).stdout.strip()
            if state in ("running", "degraded"):
                waiting.discard(name)
        if waiting and time.monotonic() > deadline:
            sys.exit(f"bench hosts not started after 300 s: {', '.join(sorted(waiting))}")
        time.sleep(0.5 if waiting else 0)


def write_inventory(folder, names):
    lines = [
        "all:",
        "  children:",
        "    gpu_nodes:",
        "      children:",
        "        gpu_model_nvidia_l4:",
        "          hosts:",
    ]
    lines += [f"            {name}:" for name in names]
    lines += ["  vars:", "    ansible_connection: podman"]
    (folder / "group_vars").mkdir(parents=True)
    (folder / "hosts.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "group_vars" / "gpu_model_nvidia_l4.yml").write_text(GROUP_VARS, encoding="utf-8")


def measure(output, nodes, env, rounds):
    folder = output / f"hosts-{nodes}"
    shutil.rmtree(folder, ignore_errors=True)
    names = [f"gpuops-bench-{nodes:02d}-{index:02d}" for index in range(1, nodes + 1)]
    write_inventory(folder, names)
    start_hosts(names)
    try:
        plan_dir = ("-e", f"gpuops_plan_dir={folder / 'plan'}")
        run_playbook(folder, BENCH / "prepare.yml", env, *plan_dir)
        first = run_playbook(folder, REPO / "playbooks" / "gpu_hosts.yml", env, *plan_dir)[0]
        noops, floors = [], []
        for _round in range(rounds):
            noop, recap = run_playbook(folder, REPO / "playbooks" / "gpu_hosts.yml", env, *plan_dir)
            changed = {host: counts["changed"] for host, counts in recap.items() if counts["changed"]}
            if changed:
                sys.exit(f"a no-op run of {nodes} hosts changed something: {changed}")
            noops.append(noop)
            floors.append(run_playbook(folder, BENCH / "floor.yml", env, *plan_dir)[0])
    finally:
        remove_hosts()
    host_tasks = [recap[name]["ok"] + recap[name]["skipped"] for name in names]
    noop, floor = statistics.median(noops), statistics.median(floors)
    return {
        "nodes": nodes,
        "first_s": round(first, 2),
        "noop_s": round(noop, 2),
        "floor_s": round(floor, 2),
        "noop_runs_s": [round(seconds, 2) for seconds in noops],
        "floor_runs_s": [round(seconds, 2) for seconds in floors],
        "noop_over_floor": round(noop / floor, 2),
        "noop_over_first": round(noop / first, 2),
        "noop_tasks_per_host": max(host_tasks),
        "noop_tasks_on_controller": sum(recap.get("localhost", {}).get(k, 0) for k in ("ok", "skipped")),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rounds", type=int, default=3, help="no-op and floor runs, in turn, after the first converge")
    parser.add_argument("--json", type=pathlib.Path, default=REPO / "tests" / "output" / "bench" / "hosts.json")
    args = parser.parse_args()
    os.environ["CONTAINERS_CONF"] = str(TESTBED / "containers.conf")
    subprocess.run([str(TESTBED / "install-podman")], check=True)
    subprocess.run([str(TESTBED / "build-image"), "bookworm"], check=True)
    remove_hosts()
    results = []
    # Absolute: the stages read the harness folder from the environment, wherever a task runs.
    args.json = args.json.resolve()
    output = args.json.parent
    output.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build" / "collections"),
        "ANSIBLE_CONNECTION_PLUGINS": str(TESTBED / "connection_plugins"),
        "ANSIBLE_PIPELINING": "true",
        # Each task's time in the kept logs (hosts-N/*.log), for finding what a no-op run still spends.
        "ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_tasks",
        # Where the nvidia-smi double's archive is packed (molecule/mig/tasks/nvidia_smi_double_files.yml).
        "MOLECULE_EPHEMERAL_DIRECTORY": str(output),
    }
    for nodes in sorted(args.nodes):
        result = measure(output, nodes, env, args.rounds)
        results.append(result)
        print(
            f"gpu_hosts.yml on {nodes:>2} hosts: first {result['first_s']:6.1f} s, no-op {result['noop_s']:6.1f} s "
            f"({' '.join(map(str, result['noop_runs_s']))}), floor {result['floor_s']:5.1f} s "
            f"({' '.join(map(str, result['floor_runs_s']))}); no-op/floor {result['noop_over_floor']:.2f}, "
            f"no-op/first {result['noop_over_first']:.2f}; {result['noop_tasks_per_host']} tasks per host",
            flush=True,
        )
    summary = {"runs": results}
    if len(results) > 1:
        low, high = results[0], results[-1]
        summary["noop_s_per_added_node"] = round((high["noop_s"] - low["noop_s"]) / (high["nodes"] - low["nodes"]), 2)
        summary["floor_s_per_added_node"] = round(
            (high["floor_s"] - low["floor_s"]) / (high["nodes"] - low["nodes"]), 2
        )
        per_node = f"no-op +{summary['noop_s_per_added_node']} s, floor +{summary['floor_s_per_added_node']} s"
        print(f"each added node: {per_node}")
    at_16 = next((r for r in results if r["nodes"] == 16), None)
    if at_16:
        summary["targets"] = {
            "noop_over_floor_at_16": {
                "target": TARGETS["noop_over_floor_at_16"],
                "measured": at_16["noop_over_floor"],
                "met": at_16["noop_over_floor"] <= TARGETS["noop_over_floor_at_16"],
            }
        }
        print(
            f"target: no-op <= {TARGETS['noop_over_floor_at_16']}x the floor on 16 hosts: "
            f"{'met' if summary['targets']['noop_over_floor_at_16']['met'] else 'NOT met'}"
        )
    args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
