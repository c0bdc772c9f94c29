# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run loop: create each check's Jobs, wait for their pods' results, judge them, and remove every Job and
pod again, also on failure, timeout and error.

API is any object with the methods of _validation.kube.KubeApi (namespace_exists, create_namespace, list_nodes,
create_job, list_jobs, list_pods, delete_jobs, delete_pods; where a node offers its GPUs through DRA also
list_resource_slices, create_claim_object, delete_claim_objects), each taking and returning plain dicts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import dra_claims, dra_slices, evaluate
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import (
    CAPACITY,
    CHECKS,
    CUDA,
    DRA,
    SHARING,
    SMOKE,
    capped_note,
    cuda_probes,
    sharing_groups,
    smoke_probes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.manifests import (
    COMPONENT,
    JOB_LABEL,
    LEFTOVER_SELECTOR,
    MANAGED_BY,
    PodSettings,
    claim_ref,
    describe_command,
    job_manifest,
    job_name,
    labels,
    selector,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.outcome import Outcome, pod_outcome
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.report import result


class CleanupError(GpuopsError, RuntimeError):
    """Jobs or pods of the validation still exist after the cleanup timeout."""


@dataclass(frozen=True)
class RunSettings:
    namespace: str
    checks: tuple
    pods: PodSettings
    poll_interval: float = 2.0
    cleanup_timeout: int = 120
    sharing_max_pods: int = 32


def _scope(target):
    return evaluate.capacity_scope(target.plan.get("resources") or {})


def _groups(check, targets, settings):
    """[(probes, group or None)] of CHECK: smoke and cuda judge each pod alone, sharing a group at once."""
    if check == SMOKE:
        return [((probe,), None) for probe in smoke_probes(targets)]
    if check == CUDA:
        return [((probe,), None) for probe in cuda_probes(targets)]
    return [(group.probes, group) for group in sharing_groups(targets, settings.sharing_max_pods)]


def planned_checks(targets, settings, run_id):
    """What a run would do, without doing it: one entry per node and resource, with its pods (check mode)."""
    entries = []
    for check in (check for check in CHECKS if check in settings.checks):
        if check == DRA:
            entries += [
                {
                    "summary": f"{check} on {t.node}: its ResourceSlices of {t.dra['driver']} compared with the "
                    f"plan's {len(t.dra['devices'])} devices, no pod",
                    "check": check,
                    "node": t.node,
                    "host": t.host,
                    "resource": t.dra["driver"],
                    "pods": [],
                }
                for t in targets
                if t.dra is not None
            ]
            continue
        if check == CAPACITY:
            entries += [
                {
                    "summary": f"{check} on {t.node}: allocatable {_scope(t)} compared with the plan, no pod",
                    "check": check,
                    "node": t.node,
                    "host": t.host,
                    "resource": _scope(t),
                    "pods": [],
                }
                for t in targets
            ]
            continue
        for probes, group in _groups(check, targets, settings):
            first = probes[0]
            manifests = [job_manifest(run_id, probe, settings.namespace, settings.pods) for probe in probes]
            pod_spec = manifests[0]["spec"]["template"]["spec"]
            limits = pod_spec["containers"][0]["resources"].get("limits") or {}
            asks = ", ".join(f"{name}: {value}" for name, value in limits.items()) or dra_claims.describe(first.expect)
            entry = {
                "summary": f"{check} on {first.target.node}, {first.expect.resource}: {len(probes)} pod(s), "
                f"each asking {asks} and expecting {first.expect.describe()}",
                "check": check,
                "node": first.target.node,
                "host": first.target.host,
                "resource": first.expect.resource,
                "expect": first.expect.describe(),
                "pods": [manifest["metadata"]["name"] for manifest in manifests],
                "image": pod_spec["containers"][0]["image"],
                "command": describe_command(manifests[0]),
                # What each pod asks for, and which scheduler binds it (memory-shared nodes differ here).
                "limits": limits,
                "scheduler_name": pod_spec.get("schedulerName", "default-scheduler"),
            }
            if group is not None and group.capped:
                entry["note"] = capped_note(group)
            entries.append(entry)
    return entries


class ValidationRun:
    """One run: call run(); the results come back, cleanup problems are in cleanup_problems."""

    def __init__(self, api, targets, settings: RunSettings, run_id, monotonic=None, sleep=None):
        self.api, self.targets, self.settings, self.run_id = api, targets, settings, run_id
        self.monotonic, self.sleep = monotonic or time.monotonic, sleep or time.sleep
        self.cleanup_problems = []
        # Claims are made and removed only where a node offers its GPUs through DRA: other clusters may lack the API.
        self.uses_dra = any(target.dra is not None for target in targets)
        self._published = None

    @property
    def namespace(self):
        return self.settings.namespace

    def run(self):
        self._ensure_namespace()
        # Leftovers of an earlier run that died would hold GPUs and confuse the counts.
        self._remove(LEFTOVER_SELECTOR)
        results = []
        try:
            for check in CHECKS:
                if check in self.settings.checks:
                    no_pod = {CAPACITY: self._capacity, DRA: self._dra}.get(check)
                    results += no_pod() if no_pod else self._pods(check)
        finally:
            try:
                self._remove(selector(labels(self.run_id)))
            except Exception as err:
                self.cleanup_problems.append(str(err))
        return results

    def _ensure_namespace(self):
        if self.api.namespace_exists(self.namespace):
            return
        # Baseline is enough: the pods ask for no privilege, host path or host network.
        self.api.create_namespace(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": self.namespace,
                    "labels": dict([MANAGED_BY, COMPONENT, ("pod-security.kubernetes.io/enforce", "baseline")]),
                },
            }
        )

    def _published_devices(self):
        """{node: its devices in the newest generation of its pool} of every DRA node, from one list of each
        driver's ResourceSlices, read once per run."""
        if self._published is None:
            dra_targets = [target for target in self.targets if target.dra is not None]
            slices = {
                driver: self.api.list_resource_slices(driver)
                for driver in sorted({target.dra["driver"] for target in dra_targets})
            }
            self._published = {
                target.node: dra_slices.published_devices(
                    slices[target.dra["driver"]], target.dra["driver"], target.node
                )
                for target in dra_targets
            }
        return self._published

    def _dra(self):
        """Each DRA node's published devices against the plan's."""
        dra_targets = [target for target in self.targets if target.dra is not None]
        if not dra_targets:
            return []
        start = self.monotonic()
        published_by_node = self._published_devices()
        results = []
        for target in dra_targets:
            driver = target.dra["driver"]
            published = published_by_node[target.node]
            lines = dra_slices.node_differences(target.node, target.dra["devices"], published)
            names = sorted(device["name"] for device in published)
            if lines:
                verdict = evaluate.Verdict(False, "; ".join(lines), names)
            else:
                verdict = evaluate.Verdict(True, f"{len(names)} devices published as planned", names)
            results.append(result(DRA, target, driver, verdict, self.monotonic() - start))
        return results

    def _pin(self, check, groups):
        """GROUPS with every DRA probe pinned to a device its node publishes, and the results of the groups whose
        node publishes no device of the kind they claim (no pod is made for those)."""
        kept, refused = [], []
        for probes, group in groups:
            expect = probes[0].expect
            if not expect.device_class:
                kept.append((probes, group))
                continue
            target = probes[0].target
            chosen = dra_claims.pinned(expect, self._published_devices().get(target.node))
            if chosen is None:
                verdict = evaluate.Verdict(
                    False,
                    f"{target.node} publishes no device of DeviceClass {expect.device_class} that is "
                    f"{expect.describe()} (see the dra check)",
                )
                refused.append(result(check, target, expect.resource, verdict, 0.0))
                continue
            probes = tuple(replace(probe, expect=chosen) for probe in probes)
            kept.append((probes, replace(group, expect=chosen, probes=probes) if group is not None else None))
        return kept, refused

    def _create_claims(self, probes):
        """The claim objects of PROBES' pods: a template per pod, one shared claim per sharing group."""
        made = set()
        for probe in probes:
            if not probe.expect.device_class:
                continue
            kind, name = claim_ref(self.run_id, probe)
            if name in made:
                continue
            driver = probe.target.dra["driver"]
            object_labels = labels(self.run_id, probe.check)
            self.api.create_claim_object(
                self.namespace,
                dra_claims.claim_object(kind, name, self.namespace, object_labels, probe.expect, driver),
            )
            made.add(name)

    def _capacity(self):
        start = self.monotonic()
        nodes = {node["metadata"]["name"]: node for node in self.api.list_nodes()}
        results = []
        for target in self.targets:
            node = nodes.get(target.node)
            if node is None:
                verdict = evaluate.Verdict(False, f"no Node named {target.node} in the cluster")
            else:
                allocatable = (node.get("status") or {}).get("allocatable") or {}
                verdict = evaluate.capacity(target.plan.get("resources") or {}, allocatable)
            results.append(result(CAPACITY, target, _scope(target), verdict, self.monotonic() - start))
        return results

    def _pods(self, check):
        groups, refused = self._pin(check, _groups(check, self.targets, self.settings))
        if not groups:
            return refused
        check_selector = selector(labels(self.run_id, check))
        start = self.monotonic()
        try:
            for probes, _group in groups:
                self._create_claims(probes)
                for probe in probes:
                    self.api.create_job(
                        self.namespace, job_manifest(self.run_id, probe, self.namespace, self.settings.pods)
                    )
            names = [job_name(self.run_id, probe) for probes, _group in groups for probe in probes]
            outcomes, seconds = self._wait(names, check_selector, start)
        finally:
            self._remove(check_selector)
        return refused + [self._judge(check, probes, group, outcomes, seconds) for probes, group in groups]

    def _wait(self, names, check_selector, start):
        """{job name: Outcome} and {job name: seconds until finished}, polling until all finished or the deadline."""
        deadline = start + self.settings.pods.timeout
        seconds = {}
        while True:
            pods = {}
            for pod in self.api.list_pods(self.namespace, check_selector):
                job = ((pod.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL)
                pods[job] = pod
            now = self.monotonic()
            outcomes = {name: pod_outcome(pods.get(name)) for name in names}
            for name, outcome in outcomes.items():
                if outcome.finished and name not in seconds:
                    seconds[name] = now - start
            if len(seconds) == len(names) or now >= deadline:
                break
            self.sleep(max(min(self.settings.poll_interval, deadline - now), 0))
        missing = [name for name in names if not outcomes[name].finished and pods.get(name) is None]
        if missing:
            outcomes.update(self._job_states(check_selector, missing))
        return outcomes, {name: seconds.get(name, now - start) for name in names}

    def _job_states(self, check_selector, names):
        """Why a Job has no pod, from its conditions (a quota or admission refusal shows there or in events)."""
        jobs = {job["metadata"]["name"]: job for job in self.api.list_jobs(self.namespace, check_selector)}
        states = {}
        for name in names:
            conditions = ((jobs.get(name) or {}).get("status") or {}).get("conditions") or []
            detail = "; ".join(
                f"{item.get('type')}: {item.get('reason')}: {item.get('message')}" for item in conditions
            )
            states[name] = Outcome(False, f"no pod was created for Job {name}{' (' + detail + ')' if detail else ''}")
        return states

    def _judge(self, check, probes, group, outcomes, seconds):
        names = [job_name(self.run_id, probe) for probe in probes]
        first = probes[0]
        if check == SHARING:
            verdict = evaluate.sharing(group, [outcomes[name] for name in names])
        else:
            outcome = outcomes[names[0]]
            if not outcome.finished:
                verdict = evaluate.unfinished(outcome, self.settings.pods.timeout)
            elif check == SMOKE:
                verdict = evaluate.smoke(first.expect, outcome)
            else:
                verdict = evaluate.cuda(outcome)
        return result(check, first.target, first.expect.resource, verdict, max(seconds[name] for name in names))

    def _remove(self, what):
        """Delete the Jobs and pods selected by WHAT and wait until the API has none left."""
        self.api.delete_jobs(self.namespace, what)
        # The garbage collector removes a Job's pods after the Job; deleting them too does not wait for it.
        self.api.delete_pods(self.namespace, what)
        start = self.monotonic()
        deadline, forced = start + self.settings.cleanup_timeout, False
        while True:
            left = [f"Job {job['metadata']['name']}" for job in self.api.list_jobs(self.namespace, what)]
            pods = [f"Pod {pod['metadata']['name']}" for pod in self.api.list_pods(self.namespace, what)]
            left += pods
            now = self.monotonic()
            if not left:
                if self.uses_dra:
                    # Once no pod uses them: the claims made from templates go with their pods.
                    self.api.delete_claim_objects(self.namespace, what)
                return
            if pods and not forced and now - start >= self.settings.cleanup_timeout / 2:
                # A pod bound to a node whose kubelet is gone never confirms its deletion: remove it from the
                # API without waiting (the kubelet stops its containers when it comes back).
                self.api.delete_pods(self.namespace, what, force=True)
                forced = True
                continue
            if now >= deadline:
                raise CleanupError(
                    f"after {self.settings.cleanup_timeout} s these objects of the validation are still in namespace "
                    f"{self.namespace}: {', '.join(left)}; delete them with the selector {what}"
                )
            self.sleep(max(min(self.settings.poll_interval, deadline - now), 0))
