# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What became of one validation pod, read from its status (a Pod as the API returns it, as a dict).

The result is the container's terminated state: exit code and termination message. Pod logs are never read.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """FINISHED: the container terminated (or the pod failed before it ran); STATE says how, for people."""

    finished: bool
    state: str
    exit_code: int | None = None
    message: str = ""
    started_at: str | None = None
    finished_at: str | None = None


def _scheduling_problem(status):
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") != "True":
            reason = condition.get("reason") or "not scheduled"
            return f"not scheduled ({reason}): {condition.get('message') or 'no message'}"
    return None


def pod_outcome(pod):
    """The Outcome of POD (None: no pod was created)."""
    if pod is None:
        return Outcome(False, "no pod was created")
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    state = (containers[0].get("state") or {}) if containers else {}
    terminated = state.get("terminated")
    if terminated:
        return Outcome(
            True,
            f"terminated ({terminated.get('reason') or 'no reason'})",
            terminated.get("exitCode"),
            terminated.get("message") or "",
            terminated.get("startedAt"),
            terminated.get("finishedAt"),
        )
    phase = status.get("phase") or "Unknown"
    if phase in ("Succeeded", "Failed"):
        # Stopped before the container ran (deadline, eviction): the pod's own reason says why.
        detail = ": ".join(part for part in (status.get("reason"), status.get("message")) if part)
        return Outcome(True, f"pod {phase} without a container result{': ' + detail if detail else ''}")
    waiting = state.get("waiting")
    if waiting:
        detail = ": ".join(part for part in (waiting.get("reason"), waiting.get("message")) if part)
        return Outcome(False, f"container waiting ({detail or 'no reason'})")
    if state.get("running"):
        return Outcome(False, f"still running since {state['running'].get('startedAt')}")
    node = (pod.get("spec") or {}).get("nodeName")
    if node and not containers:
        return Outcome(False, f"scheduled on {node}, but its kubelet reported no container (pod {phase})")
    return Outcome(False, _scheduling_problem(status) or f"pod {phase}")
