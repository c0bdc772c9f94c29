# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The package names the nvidia_driver role's apt sources resolve to, templated as Ansible templates them.

NVIDIA's apt packages name the branch up to 580 (nvidia-dkms-580-open) and drop it from 590 on (nvidia-dkms-open);
NVIDIA's Debian repository never names it. Ubuntu's archive always does (-server packages).
"""

import pathlib

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.gpuops.cluster.plugins.filter.nvidia_driver import nvidia_driver_flavour_packages

VARS = pathlib.Path(__file__).resolve().parents[4] / "roles" / "nvidia_driver" / "vars"
FACTS = {"kernel": "6.8.0-45-generic", "architecture": "x86_64"}


def trusted(value):
    """Role vars are templates Ansible trusts; what a test reads from YAML must be marked so."""
    if isinstance(value, dict):
        return {key: trusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [trusted(item) for item in value]
    return trust_as_template(value) if isinstance(value, str) else value


def source(vars_file, name, branch):
    """The source preflight.yml keeps as a fact: before the read decides the flavour, so templated without it."""
    loader = DataLoader()
    variables = {
        **trusted(yaml.safe_load((VARS / "main.yml").read_text(encoding="utf-8"))),
        **trusted(yaml.safe_load((VARS / vars_file).read_text(encoding="utf-8"))),
        "ansible_facts": FACTS,
        "nvidia_driver_branch": branch,
        "nvidia_driver_source": name,
        "nvidia_driver_nvidia_repo_base_url": "https://developer.download.nvidia.com/compute/cuda/repos",
        "nvidia_driver_debian_mirror": "http://deb.debian.org/debian",
        "nvidia_driver_debian_security_mirror": "http://deb.debian.org/debian-security",
    }
    # preflight.yml keeps this as the fact __nvidia_driver_source.
    chosen = trust_as_template("{{ __nvidia_driver_sources[__nvidia_driver_source_choice] }}")
    return Templar(loader=loader, variables=variables).template(chosen)


@pytest.mark.parametrize(
    ("branch", "flavour", "module", "packages", "fabric_manager"),
    [
        (
            "580",
            "open",
            "nvidia-dkms-580-open",
            ["nvidia-headless-no-dkms-580-open", "nvidia-utils-580"],
            "nvidia-fabricmanager-580",
        ),
        (
            "580",
            "proprietary",
            "nvidia-dkms-580",
            ["nvidia-headless-no-dkms-580", "nvidia-utils-580"],
            "nvidia-fabricmanager-580",
        ),
        ("595", "open", "nvidia-dkms-open", ["nvidia-headless-no-dkms-open", "nvidia-utils"], "nvidia-fabricmanager"),
    ],
)
@pytest.mark.parametrize("vars_file", ["Ubuntu_22.yml", "Ubuntu_24.yml", "Ubuntu_26.yml"])
def test_nvidia_repository_on_ubuntu_names_the_branch_up_to_580_only(
    vars_file, branch, flavour, module, packages, fabric_manager
):
    resolved = source(vars_file, "nvidia", branch)
    assert resolved["module_packages"][flavour] == module
    assert nvidia_driver_flavour_packages(resolved, flavour, False) == {
        "module_package": module,
        "flavour_packages": packages,
    }
    assert resolved["fabric_manager_package"] == fabric_manager
    release = vars_file.removesuffix(".yml").split("_")[1]
    [repository] = resolved["repositories"]
    assert repository["uris"] == [f"https://developer.download.nvidia.com/compute/cuda/repos/ubuntu{release}04/x86_64"]
    assert resolved["legacy_sources"] == [f"cuda-ubuntu{release}04-x86_64.list"]


@pytest.mark.parametrize("branch", ["580", "595"])
@pytest.mark.parametrize("vars_file", ["Debian_12.yml", "Debian_13.yml"])
def test_nvidia_repository_on_debian_uses_debian_names_for_every_branch(vars_file, branch):
    resolved = source(vars_file, "nvidia", branch)
    assert resolved["module_packages"] == {"open": "nvidia-kernel-open-dkms", "proprietary": "nvidia-kernel-dkms"}
    assert resolved["packages"] == ["nvidia-driver-cuda", "nvidia-persistenced"]
    release = vars_file.removesuffix(".yml").split("_")[1]
    assert resolved["repositories"][0]["uris"] == [
        f"https://developer.download.nvidia.com/compute/cuda/repos/debian{release}/x86_64"
    ]


@pytest.mark.parametrize(("vars_file", "suite"), [("Debian_12.yml", "bookworm"), ("Debian_13.yml", "trixie")])
def test_debian_archive_source_names_the_release_suites(vars_file, suite):
    resolved = source(vars_file, "distribution", "550")
    assert [repository["suites"] for repository in resolved["repositories"]] == [
        [suite, f"{suite}-updates"],
        [f"{suite}-security"],
    ]
    assert (
        resolved["branches"]
        == yaml.safe_load((VARS / vars_file).read_text(encoding="utf-8"))["__nvidia_driver_debian_branches"]
    )


def test_ubuntu_archive_source_keeps_the_server_names_of_every_branch():
    resolved = source("Ubuntu_26.yml", "distribution", "595")
    assert resolved["branches"] == ["580", "595"]
    assert resolved["module_packages"]["open"] == "nvidia-dkms-595-server-open"
    assert resolved["signed_module_meta_packages"]["open"] == "linux-modules-nvidia-595-server-open-generic"
