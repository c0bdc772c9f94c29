# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time site.yml on the site scenario: its first converge, then its no-op run, validation excluded from both.

Run from the repository root (make bench). Builds the test bed's Kubernetes when it is not built
(tests/testbed/build-kubernetes), then runs the molecule scenario `site` through tests/testbed/run-molecule:
create and prepare, converge (site.yml on one RKE2 server and one GPU host, the first converge), idempotence (the
same run again, which molecule fails unless every host shows changed=0), then destroy. Each run's length is the
one profile_tasks prints at its end; the validation stage (the tasks of the gpu_validation role: its checks' Jobs
take the same time in both runs and report their own time, the rest writes and shows their report) is taken out of
both. The no-op run also counts its plans (tests/bench/callback_plugins/plan_runs.py records each cluster_plan
result): the plan is to be computed once and handed back to every later stage. Prints the times, the no-op/converge
ratio, the plans and whether each meets its target, and writes them as JSON (--json, default
tests/output/bench/site.json); both runs' output is kept beside it (site-converge.log, site-idempotence.log,
site-plan-runs.jsonl).
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
RUN_MOLECULE = REPO / "tests" / "testbed" / "run-molecule"
CALLBACKS = REPO / "tests" / "bench" / "callback_plugins"
TARGET = 0.25
# Every task of the validation stage's role (validate.yml), as profile_tasks names it.
VALIDATION_TASKS = "gpuops.cluster.gpu_validation : "
# profile_tasks: "<date>  (0:00:01.726)       0:01:05.959 ***": the task that ended, then the time since the start.
TIMES = re.compile(r"\((\d+):(\d+):(\d+\.\d+)\)\s+(\d+):(\d+):(\d+\.\d+)")
HEADER = re.compile(r"^(TASK|RUNNING HANDLER|PLAY) \[")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _seconds(hours, minutes, seconds):
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def run_times(output):
    """The run's length and the validation stage's time, from profile_tasks' lines in molecule's OUTPUT.

    A task's own time is printed under the header of the task after it (profile_tasks), so each time is given to the
    task before; a header wrapped over several lines is joined first.
    """
    lines = [ANSI.sub("", line).lstrip(" │").rstrip() for line in output.splitlines()]
    task, validation, total = None, 0.0, None
    index = 0
    while index < len(lines):
        line = lines[index]
        if HEADER.match(line):
            header = line
            while "]" not in header and index + 1 < len(lines):
                index += 1
                header += " " + lines[index]
            name = header[header.index("[") + 1 : header.index("]")]
            times = next((TIMES.search(later) for later in lines[index + 1 : index + 4] if TIMES.search(later)), None)
            if times and task and task.startswith(VALIDATION_TASKS):
                validation += _seconds(*times.groups()[:3])
            task = name if not line.startswith("PLAY") else None
        elif line.startswith("TASKS RECAP") or line.startswith("PLAYBOOK RECAP"):
            recap = next((TIMES.search(later) for later in lines[index + 1 : index + 4] if TIMES.search(later)), None)
            if recap:
                # The last task's own time is printed here too.
                if task and task.startswith(VALIDATION_TASKS):
                    validation += _seconds(*recap.groups()[:3])
                task, total = None, _seconds(*recap.groups()[3:])
        index += 1
    if total is None:
        sys.exit("no profile_tasks total found in the run's output: is ansible.posix.profile_tasks enabled?")
    excluded = total - validation
    return {"total_s": round(total, 2), "validation_s": round(validation, 2), "excluded_s": round(excluded, 2)}


def plan_counts(path):
    """How many cluster_plan results of the run in PATH (plan_runs.py's lines) computed the plan, and how many were
    handed back from earlier in the run."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    if not records:
        sys.exit(f"no plan recorded in {path}: was tests/bench/callback_plugins/plan_runs.py loaded?")
    return {
        "computed": sum(1 for record in records if record["reused"] is False),
        "reused": sum(1 for record in records if record["reused"] is True),
    }


def molecule(action, output, env, check=True):
    run = subprocess.run(
        [str(RUN_MOLECULE), action, "-s", "site"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    if output:
        output.write_text(run.stdout + run.stderr, encoding="utf-8")
    if check and run.returncode != 0:
        sys.exit(f"molecule {action} -s site failed (rc {run.returncode}):\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}")
    return run.stdout + run.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=pathlib.Path, default=REPO / "tests" / "output" / "bench" / "site.json")
    args = parser.parse_args()
    args.json = args.json.resolve()
    output = args.json.parent
    output.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    subprocess.run(
        [str(REPO / "tests" / "testbed" / "build-kubernetes")], check=True, stdout=subprocess.DEVNULL, env=env
    )
    molecule("destroy", None, env)
    try:
        molecule("create", None, env)
        molecule("prepare", None, env)
        converge = run_times(molecule("converge", output / "site-converge.log", env))
        plan_runs = output / "site-plan-runs.jsonl"
        plan_runs.unlink(missing_ok=True)
        noop_env = {**env, "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS), "GPUOPS_BENCH_PLAN_RUNS": str(plan_runs)}
        noop = run_times(molecule("idempotence", output / "site-idempotence.log", noop_env))
        plans = plan_counts(plan_runs)
    finally:
        molecule("destroy", None, env, check=False)
    ratio = round(noop["excluded_s"] / converge["excluded_s"], 3)
    for name, times in (("first converge", converge), ("no-op", noop)):
        print(
            f"site.yml {name}: {times['total_s']:6.1f} s, validation checks {times['validation_s']:5.1f} s, "
            f"without them {times['excluded_s']:6.1f} s",
            flush=True,
        )
    met = ratio <= TARGET
    print(f"no-op/first converge, validation excluded: {ratio:.3f} (target <= {TARGET}: {'met' if met else 'NOT met'})")
    once = plans["computed"] == 1
    print(
        f"plans in the no-op run: computed {plans['computed']}, handed back {plans['reused']} "
        f"(target: computed once: {'met' if once else 'NOT met'})"
    )
    summary = {
        "converge": converge,
        "noop": noop,
        "noop_over_converge": ratio,
        "noop_plans": plans,
        "targets": {
            "noop_over_converge": {"target": TARGET, "measured": ratio, "met": met},
            "plan_computed_once": {"target": 1, "measured": plans["computed"], "met": once},
        },
    }
    args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.json}")


if __name__ == "__main__":
    main()
