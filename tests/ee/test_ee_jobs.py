# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jobs in the execution environment image, started as AWX starts them (tests/ee/awx_job.py):

- `gpuops.cluster.plan` on inventories/example writes, inside the container, the same plan files as the
  controller of this checkout, and prints the plan;
- `gpuops.cluster.site --check` reaches two fresh test bed hosts over SSH (an RKE2 server, and an RKE2 agent
  with two NVIDIA L4 of the nvidia-smi double), with the key of a Machine credential and their host keys checked,
  and fails nowhere.

`make ee` runs them after building the image; they skip (saying why) without a working container runtime or the
image, or fail instead where GPUOPS_REQUIRE_TESTBED is set.
"""

import filecmp
import os
import pathlib
import secrets
import subprocess

import pytest
from awx_job import run_job, write_private_data_dir
from gpu_host_doubles import give_gpus
from ssh_hosts import SshHosts, make_key

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE_INVENTORY = REPO_ROOT / "inventories" / "example"
PLAN_FILES = ("capacity.json", "plan.txt")


def prefix():
    return f"gpuops-ee-{secrets.token_hex(3)}"


def controller_plan(folder):
    """The plan of inventories/example made by this checkout's controller (.venv), for comparison."""
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO_ROOT / "ansible.cfg")}
    subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "ansible-playbook"), "playbooks/plan.yml", "-i", str(EXAMPLE_INVENTORY),
         "-e", f"gpuops_plan_dir={folder}"],
        cwd=REPO_ROOT, env=env, check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return folder


def test_plan_on_the_example_inventory(ee_runtime, ee_image, ansible_runner_module, tmp_path):
    data = write_private_data_dir(tmp_path / "job", {"plan": "gpuops.cluster.plan"}, EXAMPLE_INVENTORY)
    name = f"{prefix()}-plan"

    job = run_job(ansible_runner_module, data, "plan.yml", image=ee_image, runtime=ee_runtime, name=name)

    assert (job.status, job.rc) == ("successful", 0), job.explain()
    # The plan runs once, on the controller, for the first host of the inventory.
    assert job.hosts() == ["cp-1"], job.explain()
    assert (job.recap("cp-1")["failed"], job.recap("cp-1")["unreachable"]) == (0, 0), job.explain()
    planned = job.task_results("Validate the GPU intent and write the plan")
    assert list(planned) == ["cp-1"], job.explain()
    # Written inside the container, into the inventory's folder of the private data dir.
    assert planned["cp-1"]["dest"] == "/runner/inventory/.gpuops-plan", planned
    plan_dir = data / "inventory" / ".gpuops-plan"
    assert "Plan files: /runner/inventory/.gpuops-plan" in job.stdout, job.explain()
    for host in ("gpu-a100-1", "gpu-h100-1", "gpu-l4-2"):
        assert host in job.stdout, f"{host} is not in the plan the job printed:\n{job.explain()}"
    expected = controller_plan(tmp_path / "controller-plan")
    written = sorted(path.name for path in plan_dir.iterdir())
    assert written == sorted(path.name for path in expected.iterdir())
    assert set(PLAN_FILES) <= set(written), written
    different, missing = filecmp.cmpfiles(plan_dir, expected, written, shallow=False)[1:]
    assert (different, missing) == ([], []), f"the EE's plan differs from the controller's in {different + missing}"


@pytest.fixture
def site_hosts(hosts_runtime, tmp_path):
    private_key, public_key = make_key(tmp_path)
    hosts = SshHosts(hosts_runtime, prefix(), ["site-server-1", "site-gpu-1"])
    try:
        hosts.start(public_key)
        give_gpus(hosts, "site-gpu-1", tmp_path, "NVIDIA L4", 2)
        yield hosts, private_key
    finally:
        hosts.remove()


def site_inventory(hosts):
    """The hosts of molecule/site: an RKE2 server, and an agent with two L4 shared through HAMi."""
    return {
        "all": {
            "vars": {
                # A Machine credential: this user and the key of env/ssh_key; sudo without a password.
                "ansible_user": "gpuops",
                # Host keys are checked, against the keys each host made at its start.
                "ansible_ssh_common_args": "-o UserKnownHostsFile=/runner/known_hosts -o StrictHostKeyChecking=yes",
                "rke2_api_endpoint": hosts.addresses["site-server-1"],
            },
            "children": {
                "rke2_servers": {"hosts": {"site-server-1": {"ansible_host": hosts.addresses["site-server-1"]}}},
                "rke2_agents": {"children": {"gpu_nodes": {}}},
                "gpu_nodes": {
                    "hosts": {"site-gpu-1": {"ansible_host": hosts.addresses["site-gpu-1"]}},
                    "vars": {
                        "gpuops_gpu_product": "NVIDIA L4",
                        "gpuops_gpu_count": 2,
                        "gpuops_memory_sharing": {"backend": "hami", "split": 2},
                        # The branch Debian 12's archive packages.
                        "nvidia_driver_branch": "535",
                    },
                },
            },
        }
    }


def test_site_check_on_fresh_hosts_over_ssh(ee_image, ansible_runner_module, site_hosts, tmp_path):
    hosts, private_key = site_hosts
    data = write_private_data_dir(
        tmp_path / "job",
        {"site": "gpuops.cluster.site"},
        site_inventory(hosts),
        ssh_key=private_key,
        # ansible-runner turns host key checking off unless told otherwise.
        envvars={"ANSIBLE_HOST_KEY_CHECKING": "True"},
        files={"known_hosts": hosts.known_hosts()},
    )
    name = f"{hosts.prefix}-site"

    job = run_job(ansible_runner_module, data, "site.yml", image=ee_image, runtime=hosts.runtime, name=name,
                  network=hosts.network, cmdline="--check --diff")  # fmt: skip

    assert (job.status, job.rc) == ("successful", 0), job.explain()
    assert job.hosts() == ["localhost", "site-gpu-1", "site-server-1"], job.explain()
    for host in job.hosts():
        recap = job.recap(host)
        assert (recap["failed"], recap["unreachable"]) == (0, 0), f"{host}: {recap}\n{job.explain()}"
    # Over SSH, the module ran on the GPU host and read the double's two L4 through nvidia-smi.
    read = job.task_results("Read the GPUs through nvidia-smi")
    assert [gpu["name"] for gpu in read["site-gpu-1"]["gpus"]] == ["NVIDIA L4", "NVIDIA L4"], read
    compared = job.task_results("Compare the host with the inventory")["site-gpu-1"]["ansible_facts"]
    assert compared["__preflight_gpus"]["problems"] == [], compared
    # Check mode all the way to the RKE2 stage, on both hosts, then the Kubernetes stages on the controller.
    would_install = job.task_results("Report the release a run would install")
    assert sorted(would_install) == ["site-gpu-1", "site-server-1"], job.explain()
    assert all("would install RKE2" in result["msg"] for result in would_install.values()), would_install
    assert job.recap("localhost")["ok"] > 0, job.explain()
