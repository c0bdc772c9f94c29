# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/preflight.yml on this machine (local connection): nvidia_gpu_info reads the nvidia-smi test double
on the PATH; every host is compared with its inventory, then one failure lists every host that differs; hosts
join the group of their GPU model and group_vars named after it apply."""

import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]
DOUBLE = REPO / "tests" / "doubles" / "nvidia_smi" / "nvidia-smi"
# The local hosts share one double, whose state file is rewritten in place: one host at a time reads it.
ONE_AT_A_TIME = ("--forks", "1")


def _inventory(tmp_path, hosts, model_vars=None):
    local = {"ansible_connection": "local", "ansible_become": False, "ansible_python_interpreter": sys.executable}
    folder = tmp_path / "inventory"
    (folder / "group_vars").mkdir(parents=True)
    (folder / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"vars": local, "children": {"gpu_nodes": {"hosts": hosts}}}})
    )
    for group, variables in (model_vars or {}).items():
        (folder / "group_vars" / f"{group}.yml").write_text(yaml.safe_dump(variables))
    return folder


@pytest.fixture
def gpus_on_path(tmp_path):
    """Environment whose PATH finds the nvidia-smi double, set up as a host with COUNT GPUs of PRODUCT."""

    def make(product, count):
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "nvidia-smi").symlink_to(DOUBLE)
        env = {"NVSMI_DOUBLE_STATE": str(tmp_path / "nvsmi-state.json"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        subprocess.run([str(DOUBLE), "--double-init", product, str(count)], env={**os.environ, **env}, check=True)
        return env

    return make


def _show_model_var(tmp_path):
    """A playbook: the collection's preflight, then a play that prints a variable of the model's group_vars."""
    playbook = tmp_path / "preflight-then-read.yml"
    playbook.write_text(
        "---\n"
        "- name: Preflight\n  ansible.builtin.import_playbook: gpuops.cluster.preflight\n"
        "- name: Read what the model group gives\n  hosts: gpu_nodes\n  gather_facts: false\n  tasks:\n"
        "    - name: Show the variable of the model group\n      ansible.builtin.debug:\n"
        "        msg: \"{{ inventory_hostname }} model_setting={{ model_setting | default('unset') }} "
        "groups={{ group_names | select('match', 'gpu_model_') | join(',') }}\"\n"
    )
    return str(playbook)


def test_hosts_that_carry_what_the_inventory_says_join_their_model_group(run_playbook, gpus_on_path, tmp_path):
    env = gpus_on_path("NVIDIA A100-SXM4-80GB", 4)
    inventory = _inventory(
        tmp_path,
        {
            # nvidia-smi prints "NVIDIA A100-SXM4-80GB"; the inventory may use another printed form.
            "gpu-a": {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 4},
            "gpu-b": {"gpuops_gpu_product": "A100-SXM4-80GB", "gpuops_gpu_count": "4"},
        },
        {"gpu_model_nvidia_a100_sxm4_80gb": {"model_setting": "from-the-model-group"}},
    )
    plan_dir = f"gpuops_plan_dir={tmp_path / 'plan'}"
    for extra in ((), ("--check",)):
        result = run_playbook(_show_model_var(tmp_path), inventory, "-e", plan_dir, *ONE_AT_A_TIME, *extra, env=env)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        for host in ("gpu-a", "gpu-b"):
            assert f"{host} model_setting=from-the-model-group groups=gpu_model_nvidia_a100_sxm4_80gb" in output


def test_every_host_that_differs_is_named_in_one_failure(run_playbook, gpus_on_path, tmp_path):
    env = gpus_on_path("NVIDIA A100-SXM4-80GB", 4)
    inventory = _inventory(
        tmp_path,
        {
            "gpu-ok": {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 4},
            "gpu-model": {"gpuops_gpu_product": "NVIDIA H100 80GB HBM3", "gpuops_gpu_count": 4},
            "gpu-count": {"gpuops_gpu_product": "NVIDIA A100-SXM4-80GB", "gpuops_gpu_count": 8},
            # Nothing listens on port 1: the connection is refused at once.
            "gpu-down": {
                "gpuops_gpu_product": "NVIDIA L4",
                "gpuops_gpu_count": 1,
                "ansible_connection": "ssh",
                "ansible_host": "127.0.0.1",
                "ansible_port": 1,
            },
        },
    )
    result = run_playbook(
        _show_model_var(tmp_path), inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}", *ONE_AT_A_TIME, env=env
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "The GPU hosts differ from the inventory; no host was changed:" in output
    assert (
        "gpu-model: gpuops_gpu_product: expected NVIDIA H100 80GB HBM3, found NVIDIA A100-SXM4-80GB (nvidia-smi)"
        in output
    )
    assert "gpu-count: gpuops_gpu_count: expected 8, found 4 (nvidia-smi: 4x NVIDIA A100-SXM4-80GB)" in output
    assert re.search(r"gpu-down: unreachable: .*Connection refused", output)
    assert "gpu-ok:" not in output.split("no host was changed:")[1]
    # The play after the preflight never ran.
    assert "model_setting=" not in output


def _nvidia_on_pci_bus():
    for vendor in pathlib.Path("/sys/bus/pci/devices").glob("*/vendor"):
        if vendor.read_text().strip() == "0x10de":
            return True
    return False


@pytest.mark.skipif(_nvidia_on_pci_bus(), reason="this machine has NVIDIA devices on its PCI bus")
def test_a_host_without_driver_and_without_gpu_on_the_pci_bus_fails_saying_so(run_playbook, tmp_path):
    inventory = _inventory(tmp_path, {"gpu-bare": {"gpuops_gpu_product": "NVIDIA L4", "gpuops_gpu_count": 4}})
    path = ":".join(p for p in os.environ["PATH"].split(":") if not (pathlib.Path(p) / "nvidia-smi").exists())
    result = run_playbook(
        "preflight.yml", inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}", "--check", env={"PATH": path}
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert (
        "gpu-bare: no NVIDIA GPU found (nvidia-smi: nvidia-smi was not found in PATH "
        "(is the NVIDIA driver installed?); "
        "the PCI bus has no NVIDIA display or 3D controller (vendor 0x10de, class 0x0300/0x0302)); "
        "the inventory expects 4x NVIDIA L4 (gpuops_gpu_count, gpuops_gpu_product)"
    ) in output
