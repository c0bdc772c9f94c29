# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One timed ansible-playbook run of the benchmarks, its output kept and its recap read."""

import pathlib
import re
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
RECAP = re.compile(
    r"^(?P<host>\S+)\s+:\s+ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)"
    r"\s+failed=(?P<failed>\d+)\s+skipped=(?P<skipped>\d+)"
)


def run_playbook(folder, playbook, env, *extra):
    """Seconds the run of PLAYBOOK on FOLDER/hosts.yml took, and its recap ({host: {ok, changed, ...}}).

    The output is kept as FOLDER/N-PLAYBOOK.log (N counts the runs); a failed run ends the benchmark with its tail.
    """
    playbook = pathlib.Path(playbook)
    command = [
        str(pathlib.Path(sys.executable).parent / "ansible-playbook"),
        str(playbook),
        "-i",
        str(folder / "hosts.yml"),
    ]
    start = time.perf_counter()
    run = subprocess.run([*command, *extra], cwd=REPO, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    runs = len(list(folder.glob("*.log")))
    (folder / f"{runs + 1}-{playbook.stem}.log").write_text(run.stdout + run.stderr, encoding="utf-8")
    if run.returncode != 0:
        sys.exit(f"{playbook.name} on {folder.name} failed (rc {run.returncode}):\n{run.stdout[-6000:]}\n{run.stderr}")
    recap = {
        match["host"]: {key: int(value) for key, value in match.groupdict().items() if key != "host"}
        for match in map(RECAP.match, run.stdout.splitlines())
        if match
    }
    return elapsed, recap
