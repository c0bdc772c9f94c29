# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The site bench's reading of molecule's output: the run's length and its validation stage's time."""

import importlib.util
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "site_bench.py"
_spec = importlib.util.spec_from_file_location("site_bench", BENCH)
site_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(site_bench)

BAR = "  \x1b[2m│\x1b[0m "
# The end of the site scenario's idempotence step as molecule printed it (CI of 2026-12-06): the validation tasks'
# headers wrap, each task's time is printed under the next header, the last one's and the run's length under TASKS
# RECAP. A task of another role before them is not validation.
IDEMPOTENCE = "\n".join(
    BAR + line
    for line in [
        "TASK [gpuops.cluster.gpu_sharing : Read the cluster's nodes] ***",
        "Sunday 06 December 2026  16:10:36 +0000 (0:00:00.040)       0:00:37.740",
        "\x1b[0;32mok: [localhost]\x1b[0m",
        "",
        "TASK [gpuops.cluster.gpu_validation : Run the validation checks on every",
        "  GPU node (no Job or pod is left behind)] ***",
        "Sunday 06 December 2026  16:10:37 +0000 (0:00:00.036)       0:00:38.776",
        "  *******",
        "\x1b[0;32mok: [localhost]\x1b[0m",
        "",
        "TASK [gpuops.cluster.gpu_validation : Show the pods each check would run",
        "  (check mode)] ***",
        "Sunday 06 December 2026  16:11:02 +0000 (0:00:24.448)       0:01:03.225",
        "  *******",
        "PLAY RECAP",
        "\x1b[32msite-gpu-1                 : ok=48   changed=0    unreachable=0    failed=0\x1b[0m",
        "PLAYBOOK RECAP",
        "  *****************************************************************",
        "Playbook run took 0 days, 0 hours, 1 minutes, 5 seconds",
        "",
        "TASKS RECAP",
        "  ********************************************************************",
        "Sunday 06 December 2026  16:11:05 +0000 (0:00:01.726)       0:01:05.959",
    ]
)


def test_the_run_length_and_the_validation_stage_come_from_profile_tasks():
    # The nodes' read (1.0 s) stays; the checks (24.448 s) and the report (1.726 s) are validation.
    assert site_bench.run_times(IDEMPOTENCE) == {"total_s": 65.96, "validation_s": 26.17, "excluded_s": 39.79}


def test_a_run_without_profile_tasks_stops_the_bench():
    with pytest.raises(SystemExit, match="no profile_tasks total"):
        site_bench.run_times("PLAY RECAP\nlocalhost : ok=1 changed=0\n")
