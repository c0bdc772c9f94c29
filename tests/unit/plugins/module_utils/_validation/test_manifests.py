# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The validation Jobs: names, images through a mirror, and the command wrapping that keeps the exit code."""

import re
import subprocess

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import checks, manifests
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans

SETTINGS = plans.SETTINGS


@pytest.mark.parametrize(
    ("image", "mirrored"),
    [
        (
            "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
            "mirror.example.com:5000/m/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
        ),
        ("localhost/gpuops-validation:test", "mirror.example.com:5000/m/gpuops-validation:test"),
        ("nvidia/cuda:12.5.0-base-ubuntu22.04", "mirror.example.com:5000/m/nvidia/cuda:12.5.0-base-ubuntu22.04"),
        ("busybox:1.36", "mirror.example.com:5000/m/library/busybox:1.36"),
    ],
)
def test_a_mirror_replaces_the_registry_host(image, mirrored):
    assert manifests.mirrored_image(image, "mirror.example.com:5000/m") == mirrored
    assert manifests.mirrored_image(image, None) == image


@pytest.mark.parametrize("registry", ["https://mirror.example.com", "mirror.example.com/", "mirror example"])
def test_a_bad_registry_is_refused(registry):
    assert "registry: must be a registry host" in manifests.registry_problem(registry)


@pytest.mark.parametrize(("exit_code", "hold"), [(0, 0), (3, 0), (5, 1)])
def test_the_wrapped_command_writes_the_message_and_keeps_the_exit_code(tmp_path, exit_code, hold):
    argv = manifests.wrapped_command(f"echo found; exit {exit_code}", hold)
    log = tmp_path / "termination-log"
    argv[2] = argv[2].replace(manifests.TERMINATION_LOG, str(log))

    completed = subprocess.run(argv, check=False)

    assert completed.returncode == exit_code
    assert log.read_text() == "found\n"


def test_job_names_are_dns_labels_and_unique():
    target_list = checks.targets(
        {"nodes": {"a-very-long-inventory-host-name-of-a-gpu-node.example.com": plans.time_sliced()}}
    )
    (group,) = checks.sharing_groups(target_list, 32)

    names = [manifests.job_name("0123abcd", probe) for probe in group.probes]

    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name) for name in names)


def test_the_job_pins_its_pod_and_asks_one_unit():
    (probe,) = checks.smoke_probes(checks.targets({"nodes": {"gpu-1": plans.whole_gpus()}}, {"gpu-1": "node-1"}))

    job = manifests.job_manifest("0123abcd", probe, "gpu-validation", SETTINGS)

    pod = job["spec"]["template"]["spec"]
    assert (job["spec"]["backoffLimit"], job["spec"]["activeDeadlineSeconds"]) == (0, 330)
    assert pod["nodeSelector"] == {"kubernetes.io/hostname": "node-1"} and "nodeName" not in pod
    assert pod["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert pod["containers"][0]["command"] == ["sh", "-c", "( nvidia-smi -L ) >/dev/termination-log 2>&1"]
    assert "runtimeClassName" not in pod and "imagePullSecrets" not in pod
    assert job["metadata"]["labels"] == job["spec"]["template"]["metadata"]["labels"]
