# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The JSON and JUnit XML reports that AWX and CI read."""

import json
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.cluster.plugins.module_utils._validation import report

RESULTS = [
    {"check": "capacity", "node": "n1", "host": "h1", "resource": "nvidia.com/*", "passed": True,
     "reason": "allocatable equals the plan: nvidia.com/gpu=4", "devices": [], "seconds": 0.0},
    {"check": "smoke", "node": "n1", "host": "h1", "resource": "nvidia.com/gpu", "passed": False,
     "reason": 'expected one GPU, found 2 GPU lines in \'GPU 0: <"&>\'', "devices": ["GPU-a", "GPU-b"],
     "seconds": 3.25},
    {"check": "smoke", "node": "n2", "host": "h2", "resource": "nvidia.com/gpu", "passed": True,
     "reason": "sees one GPU", "devices": ["GPU-c"], "seconds": 2.0},
]  # fmt: skip


def test_junit_has_one_suite_per_check_and_a_failure_with_the_reason():
    root = ET.fromstring(report.as_junit(RESULTS, "abc12345").encode())

    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "1"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["capacity", "smoke"]
    assert (suites["smoke"].get("tests"), suites["smoke"].get("failures")) == ("2", "1")
    cases = suites["smoke"].findall("testcase")
    assert [case.get("name") for case in cases] == ["n1 nvidia.com/gpu", "n2 nvidia.com/gpu"]
    failure = cases[0].find("failure")
    assert failure.get("message") == RESULTS[1]["reason"] and failure.text == RESULTS[1]["reason"]
    assert cases[1].find("failure") is None
    assert cases[0].find("system-out").text == "devices: GPU-a, GPU-b"
    assert cases[0].get("time") == "3.2" or cases[0].get("time") == "3.3"


def test_json_report_counts_and_keeps_every_result():
    document = json.loads(report.as_json(RESULTS, "abc12345"))

    assert (document["run"], document["passed"], document["failed"]) == ("abc12345", 2, 1)
    assert document["results"] == RESULTS


def test_failure_message_names_host_node_check_and_resource():
    renamed = [dict(RESULTS[1], node="n1.example.com")]

    assert report.failure_message(RESULTS) == [f"h1 (node n1) smoke nvidia.com/gpu: {RESULTS[1]['reason']}"]
    assert report.failure_message(renamed)[0].startswith("h1 (node n1.example.com) smoke")


def test_a_failure_message_for_a_host_named_like_its_node():
    same = [dict(RESULTS[1], node="h1")]

    assert report.failure_message(same)[0].startswith("h1 smoke nvidia.com/gpu: ")
