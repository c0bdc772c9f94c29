# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Proof of the real-kubelet nodes (run by hand through `smoke-kubelet-node`, not by `make unit`).

Starts the harness with the nodes of smoke-nodes.yml (an L4 with time-slicing, an A100 with MIG,
each a real kubelet and containerd in a podman container), lets the GPU node stand-in's operator,
mig-manager and gRPC device plugin configure them, runs validation Jobs in the validation image
(localhost/gpuops-validation:test) as the gpu_validation role's contract says, and checks:
- each `nvidia-smi -L` pod lists exactly the device it was allocated (GPU or MIG UUID, profile), given as a CDI
  device that the node's containerd injected (the ClusterPolicy's default cdi.enabled);
- two time-sliced pods see the same GPU UUID; vectorAdd passes; without a GPU it fails;
- an unhealthy GPU leaves the allocatable (ListAndWatch), a restarted kubelet gets the plugin again;
then stops everything and checks that no container, network link or folder is left.
Exit 0 when every check passed; prints the timings.
"""

import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml
from kubernetes import client, config, utils

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
CHART = Path(os.environ.get("GPUOPS_OPERATOR_CHART", REPO_ROOT.parent / "shared/charts/gpu-operator-v26.7.0.tgz"))
IMAGE = "localhost/gpuops-validation:test"
NAMESPACE = "gpu-validation"
OPERATOR_NAMESPACE = "gpu-operator"
# Ports of their own, so that a harness of another test on this machine is not disturbed.
os.environ.setdefault("GPUOPS_HARNESS_ETCD_PORT", "22379")
os.environ.setdefault("GPUOPS_HARNESS_API_PORT", "26443")
os.environ.setdefault("GPUOPS_HARNESS_KUBELET_PORT", "22250")
os.environ.setdefault("CONTAINERS_CONF", str(REPO_ROOT / "tests/testbed/containers.conf"))

PLUGIN_CONFIG = {
    # seed 003's time-slicing config: nvidia.com/gpu replicated 4 times.
    "l4": {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    },
    "a100": {"version": "v1", "flags": {"migStrategy": "mixed"}},
}
MIG_CONFIG = {
    "version": "v1",
    "mig-configs": {
        "all-disabled": [{"devices": "all", "mig-enabled": False}],
        "smoke-mixed": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "1g.10gb": 4}}],
    },
}
timings: dict = {}
failures: list = []


def check(condition: bool, what: str) -> None:
    print(("ok     " if condition else "FAILED ") + what, flush=True)
    if not condition:
        failures.append(what)


def until(what: str, probe, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.5)


def cluster(*arguments: str) -> None:
    subprocess.run([str(HERE / "cluster"), *arguments], check=True)


def links() -> set:
    return {
        line.split()[0].split("@")[0]
        for line in subprocess.run(
            ["ip", "-br", "link"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    }


def pod_cgroups() -> set:
    return {str(path) for path in Path("/sys/fs/cgroup").glob("*/k8s.io/*") if path.is_dir()}


def containers() -> set:
    listed = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=True
    )
    return set(listed.stdout.split())


def install_cluster_policy(api_client, core) -> None:
    """The ClusterPolicy CRD from the operator chart, and a ClusterPolicy with the plugin and
    mig-manager configs as ConfigMaps, as roles/gpu_operator and roles/gpu_sharing set them."""
    with tarfile.open(CHART) as chart:
        crd = yaml.safe_load(chart.extractfile("gpu-operator/crds/nvidia.com_clusterpolicies.yaml"))
    utils.create_from_dict(api_client, crd)
    extensions = client.ApiextensionsV1Api(api_client)
    until(
        "the ClusterPolicy CRD",
        lambda: any(
            c.type == "Established" and c.status == "True"
            for c in extensions.read_custom_resource_definition(crd["metadata"]["name"]).status.conditions or []
        ),
    )
    for namespace in (OPERATOR_NAMESPACE, NAMESPACE):
        core.create_namespace({"metadata": {"name": namespace}})
    core.create_namespaced_config_map(
        OPERATOR_NAMESPACE,
        {
            "metadata": {"name": "plugin-config"},
            "data": {key: yaml.safe_dump(value) for key, value in PLUGIN_CONFIG.items()},
        },
    )
    core.create_namespaced_config_map(
        OPERATOR_NAMESPACE,
        {"metadata": {"name": "mig-parted-config"}, "data": {"config.yaml": yaml.safe_dump(MIG_CONFIG)}},
    )
    spec = {
        key: {}
        for key in ("operator", "daemonsets", "driver", "toolkit", "dcgm", "dcgmExporter", "gfd", "nodeStatusExporter")
    }
    spec |= {
        "devicePlugin": {"enabled": True, "config": {"name": "plugin-config", "default": "l4"}},
        "migManager": {"enabled": True, "config": {"name": "mig-parted-config", "default": "all-disabled"}},
        "mig": {"strategy": "mixed"},
    }
    client.CustomObjectsApi(api_client).create_cluster_custom_object(
        "nvidia.com",
        "v1",
        "clusterpolicies",
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"}, "spec": spec},
    )
    core.patch_node(
        "smoke-a100",
        {"metadata": {"labels": {"nvidia.com/device-plugin.config": "a100", "nvidia.com/mig.config": "smoke-mixed"}}},
    )


def allocatable(core, node: str) -> dict:
    return core.read_node(node).status.allocatable or {}


def job(name: str, node: str, resource: str | None, command: str) -> dict:
    """A validation Job as the gpu_validation role's contract has it."""
    limits = {resource: "1"} if resource else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"kubernetes.io/hostname": node},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "automountServiceAccountToken": False,
                    "containers": [
                        {
                            "name": "check",
                            "image": IMAGE,
                            "imagePullPolicy": "Never",
                            "command": ["sh", "-c", f"{command} >/dev/termination-log 2>&1"],
                            "resources": {"limits": limits},
                        }
                    ],
                }
            },
        },
    }


def terminated(core, name: str):
    pods = core.list_namespaced_pod(NAMESPACE, label_selector=f"job-name={name}").items
    for pod in pods:
        for status in pod.status.container_statuses or []:
            if status.state.terminated:
                return status.state.terminated
    return None


def run_jobs(api_client, core, jobs: dict) -> dict:
    began = time.monotonic()
    batch = client.BatchV1Api(api_client)
    for name, (node, resource, command) in jobs.items():
        batch.create_namespaced_job(NAMESPACE, job(name, node, resource, command))
    results = {name: until(f"Job {name} to end", lambda name=name: terminated(core, name), 120) for name in jobs}
    timings[f"{len(jobs)} Jobs created to all terminated"] = time.monotonic() - began
    for name, result in results.items():
        print(f"  {name}: exit {result.exit_code}: {result.message.strip()!r}")
    return results


def allocated(log: Path, resource: str) -> list[list[str]]:
    """The UUIDs the device plugin gave out for RESOURCE, per Allocate call (gpu-node.log)."""
    # kubelet_plugin.py logs "allocate RESOURCE [device ids] -> UUID,UUID" (NVIDIA_VISIBLE_DEVICES).
    pattern = re.compile(rf"allocate {re.escape(resource)} \[.*\] -> (\S+)$")
    return [m.group(1).split(",") for line in log.read_text().splitlines() if (m := pattern.search(line))]


def proofs(directory: Path) -> None:
    api_client = config.new_client_from_config(config_file=str(directory / "admin.kubeconfig"))
    core = client.CoreV1Api(api_client)
    install_cluster_policy(api_client, core)
    began = time.monotonic()
    until(
        "the plugins' resources in the kubelets' allocatable",
        lambda: (
            allocatable(core, "smoke-l4").get("nvidia.com/gpu") == "4"
            and allocatable(core, "smoke-a100").get("nvidia.com/mig-3g.40gb") == "1"
            and allocatable(core, "smoke-a100").get("nvidia.com/mig-1g.10gb") == "4"
        ),
    )
    timings["ClusterPolicy to resources allocatable"] = time.monotonic() - began
    check(True, "kubelets report nvidia.com/gpu 4 (L4, 4 replicas), mig-3g.40gb 1 and mig-1g.10gb 4 (A100)")

    results = run_jobs(
        api_client,
        core,
        {
            "smoke-ts-a": ("smoke-l4", "nvidia.com/gpu", "nvidia-smi -L"),
            "smoke-ts-b": ("smoke-l4", "nvidia.com/gpu", "nvidia-smi -L"),
            "smoke-mig-3g": ("smoke-a100", "nvidia.com/mig-3g.40gb", "nvidia-smi -L"),
            "smoke-mig-1g": ("smoke-a100", "nvidia.com/mig-1g.10gb", "nvidia-smi -L"),
            "cuda-vectoradd": ("smoke-l4", "nvidia.com/gpu", "/cuda-samples/vectorAdd"),
            "cuda-no-gpu": ("smoke-l4", None, "/cuda-samples/vectorAdd"),
        },
    )
    l4_state = json.loads((directory / "nodes/smoke-l4/gpu/state.json").read_text())
    l4_uuid = l4_state["gpus"][0]["uuid"]
    for name in ("smoke-ts-a", "smoke-ts-b"):
        check(
            results[name].exit_code == 0 and results[name].message.strip() == f"GPU 0: NVIDIA L4 (UUID: {l4_uuid})",
            f"{name}: nvidia-smi -L lists exactly the L4 behind its replica ({l4_uuid})",
        )
    log = directory / "gpu-node.log"
    for name, profile in (("smoke-mig-3g", "3g.40gb"), ("smoke-mig-1g", "1g.10gb")):
        given = [uuids[0] for uuids in allocated(log, f"nvidia.com/mig-{profile}")]
        lines = results[name].message.strip().splitlines()
        check(
            results[name].exit_code == 0
            and len(lines) == 2
            and lines[0].startswith("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-")
            and re.fullmatch(rf"  MIG {re.escape(profile)} +Device  0: \(UUID: (MIG-[0-9a-f-]+)\)", lines[1])
            and lines[1].split("UUID: ")[1].rstrip(")") in given,
            f"{name}: nvidia-smi -L lists exactly one MIG {profile} device, the one allocated",
        )
    check(
        len(allocated(log, "nvidia.com/gpu")) == 3 and len({u[0] for u in allocated(log, "nvidia.com/gpu")}) == 1,
        "time-sliced pods were given replicas of the same GPU UUID",
    )
    # The ClusterPolicy leaves cdi.enabled at its default (true): Allocate answered with CDI devices only, so the
    # pods above saw their devices because containerd injected the plugin's CDI specification.
    check(
        log.read_text().count("  as CDI devices") == 5,
        "the five GPU pods got their devices as CDI devices, injected by containerd from /var/run/cdi",
    )
    check(
        results["cuda-vectoradd"].exit_code == 0 and "Test PASSED" in results["cuda-vectoradd"].message,
        "vectorAdd passes on an allocated GPU",
    )
    check(
        results["cuda-no-gpu"].exit_code == 1
        and "no CUDA-capable device is detected" in results["cuda-no-gpu"].message,
        "vectorAdd fails without a GPU",
    )

    began = time.monotonic()
    core.patch_node("smoke-l4", {"metadata": {"annotations": {"gpuops.test/unhealthy-gpus": "1"}}})
    until(
        "the unhealthy GPU to leave the allocatable", lambda: allocatable(core, "smoke-l4").get("nvidia.com/gpu") == "0"
    )
    check(
        core.read_node("smoke-l4").status.capacity.get("nvidia.com/gpu") == "4",
        "unhealthy GPU: allocatable 0, capacity still 4 (ListAndWatch sent Unhealthy)",
    )
    core.patch_node("smoke-l4", {"metadata": {"annotations": {"gpuops.test/unhealthy-gpus": None}}})
    until("the GPU to come back", lambda: allocatable(core, "smoke-l4").get("nvidia.com/gpu") == "4")
    timings["unhealthy and back"] = time.monotonic() - began

    began = time.monotonic()
    subprocess.run(
        ["podman", "exec", "gpuops-harness-smoke-l4", "systemctl", "restart", "kubelet"],
        check=True,
        capture_output=True,
    )
    until(
        "the plugin to register again with the restarted kubelet",
        lambda: log.read_text().count("registered nvidia.com/gpu ") >= 2,
        60,
    )
    timings["kubelet restart to re-registered"] = time.monotonic() - began
    after = run_jobs(api_client, core, {"smoke-after-restart": ("smoke-l4", "nvidia.com/gpu", "nvidia-smi -L")})
    check(
        after["smoke-after-restart"].exit_code == 0 and l4_uuid in after["smoke-after-restart"].message,
        "after a kubelet restart the plugin registers again and a pod gets the GPU",
    )


def main() -> int:
    links_before, containers_before, cgroups_before = links(), containers(), pod_cgroups()
    directory = Path(tempfile.mkdtemp(prefix="gpuops-smoke-", dir="/tmp"))
    began = time.monotonic()
    try:
        cluster("start", str(directory), str(HERE / "smoke-nodes.yml"))
        timings["harness start (2 real-kubelet nodes)"] = time.monotonic() - began
        proofs(directory)
    except Exception as error:  # report, then still stop everything
        check(False, f"{type(error).__name__}: {error}")
    finally:
        began = time.monotonic()
        cluster("stop", str(directory))
        timings["harness stop"] = time.monotonic() - began
    check(links() == links_before, f"no network link left (new: {sorted(links() - links_before)})")
    check(containers() == containers_before, f"no container left (new: {sorted(containers() - containers_before)})")
    check(pod_cgroups() <= cgroups_before, f"no pod cgroup left (new: {sorted(pod_cgroups() - cgroups_before)[:3]})")
    mounts = Path("/proc/self/mountinfo").read_text()
    check(str(directory) not in mounts and not (directory / "nodes").exists(), "no mount or node folder left")
    for what, seconds in timings.items():
        print(f"time  {what}: {seconds:.1f} s")
    if not failures:
        subprocess.run(["rm", "-rf", str(directory)], check=True)
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
