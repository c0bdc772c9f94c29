# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The site bench's record of a run's plans: one JSON line per gpuops.cluster.cluster_plan result.

Loaded without being enabled (CALLBACK_NEEDS_ENABLED is false) wherever ANSIBLE_CALLBACK_PLUGINS names this folder,
and silent unless GPUOPS_BENCH_PLAN_RUNS names the file to append to: each line gives the task, the host and whether
the plan was computed or handed back from earlier in the run (the action's `reused`).
"""

import json
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuops_plan_runs"
    CALLBACK_NEEDS_ENABLED = False

    def v2_runner_on_ok(self, result):
        path = os.environ.get("GPUOPS_BENCH_PLAN_RUNS")
        action = getattr(result._task, "resolved_action", None) or result._task.action
        if not path or action not in ("gpuops.cluster.cluster_plan", "cluster_plan"):
            return
        record = {
            "task": result._task.get_name(),
            "host": result._host.get_name(),
            "reused": result._result.get("reused"),
        }
        with open(path, "a", encoding="utf-8") as runs:
            runs.write(json.dumps(record) + "\n")
