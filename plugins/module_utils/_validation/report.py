# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The results of a validation run as JSON and as JUnit XML (one testsuite per check, one testcase per node
and resource), for AWX, CI and people."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.cluster.plugins.module_utils._validation.checks import CHECKS

RESULT_KEYS = ("check", "node", "host", "resource", "passed", "reason", "devices", "seconds")


def result(check, target, resource, verdict, seconds):
    return {
        "check": check,
        "node": target.node,
        "host": target.host,
        "resource": resource,
        "passed": verdict.passed,
        "reason": verdict.reason,
        "devices": list(verdict.devices),
        "seconds": round(float(seconds), 1),
    }


def summary(results):
    failed = [item for item in results if not item["passed"]]
    return {"passed": len(results) - len(failed), "failed": len(failed)}


def failure_message(results):
    """One line per failed check: "gpu-l4-1 (node gpu-l4-1) smoke nvidia.com/gpu: <reason>"."""
    lines = []
    for item in results:
        if not item["passed"]:
            where = item["host"] if item["host"] == item["node"] else f"{item['host']} (node {item['node']})"
            resource = f" {item['resource']}" if item["resource"] else ""
            lines.append(f"{where} {item['check']}{resource}: {item['reason']}")
    return lines


def as_json(results, run_id):
    return json.dumps({"run": run_id, **summary(results), "results": results}, indent=2, sort_keys=True) + "\n"


def _ordered_checks(results):
    present = {item["check"] for item in results}
    return [check for check in CHECKS if check in present] + sorted(present - set(CHECKS))


def as_junit(results, run_id):
    root = ET.Element("testsuites", name="gpu_validation", id=run_id)
    for check in _ordered_checks(results):
        cases = [item for item in results if item["check"] == check]
        failures = sum(1 for item in cases if not item["passed"])
        suite = ET.SubElement(
            root,
            "testsuite",
            name=check,
            tests=str(len(cases)),
            failures=str(failures),
            errors="0",
            time=f"{sum(item['seconds'] for item in cases):.1f}",
        )
        for item in cases:
            name = f"{item['node']} {item['resource']}".strip()
            case = ET.SubElement(
                suite, "testcase", classname=f"gpu_validation.{check}", name=name, time=f"{item['seconds']:.1f}"
            )
            if not item["passed"]:
                failure = ET.SubElement(case, "failure", message=item["reason"], type=check)
                failure.text = item["reason"]
            if item["devices"]:
                ET.SubElement(case, "system-out").text = "devices: " + ", ".join(item["devices"])
    root.set("tests", str(len(results)))
    root.set("failures", str(summary(results)["failed"]))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
