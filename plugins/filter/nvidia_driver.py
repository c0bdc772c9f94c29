# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the nvidia_driver role: what its read of a host decides (kernel module flavour, Fabric Manager, the
version, whether the driver can load and a reboot is needed), its apt sources."""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.gpuops.cluster.plugins.filter.apt_madison import apt_madison_common_versions, upstream_version
from ansible_collections.gpuops.cluster.plugins.filter.reboot import reboot_blocker, runs_the_play

# PCI device ids of NVIDIA GPUs: Turing and newer start at 0x1e00 (open modules supported),
# Blackwell at 0x2900 (open modules required).
OPEN_CAPABLE_MIN_DEVICE_ID = 0x1E00
OPEN_ONLY_MIN_DEVICE_ID = 0x2900
# The open modules exist from this branch on; NVIDIA's installer defaults to them from 560 on.
OPEN_MIN_BRANCH = 515
OPEN_DEFAULT_MIN_BRANCH = 560
FLAVOURS = ("open", "proprietary")


def _device_ids(gpus):
    try:
        return [int(str(gpu["device_id"]), 16) for gpu in gpus]
    except (KeyError, TypeError, ValueError) as error:
        raise AnsibleFilterError(f"expected GPUs as [{{device_id: '0x20b5'}}, ...], got {gpus!r}: {error}") from error


def _branch(branch):
    try:
        return int(branch)
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError(f"expected a driver branch such as '535', got {branch!r}") from error


def nvidia_driver_flavour(requested, branch, gpus):
    """Kernel module flavour: the one requested, or for auto the one NVIDIA recommends for these GPUs and branch."""
    if requested != "auto":
        return requested
    ids = _device_ids(gpus)
    if _branch(branch) < OPEN_MIN_BRANCH:
        return "proprietary"
    if ids:
        return "open" if min(ids) >= OPEN_CAPABLE_MIN_DEVICE_ID else "proprietary"
    return "open" if _branch(branch) >= OPEN_DEFAULT_MIN_BRANCH else "proprietary"


def nvidia_driver_flavour_fits(flavour, branch, gpus):
    """Whether the flavour can drive every GPU found with this branch."""
    if flavour not in FLAVOURS:
        raise AnsibleFilterError(f"expected a kernel module flavour {FLAVOURS}, got {flavour!r}")
    ids = _device_ids(gpus)
    if flavour == "open":
        return _branch(branch) >= OPEN_MIN_BRANCH and all(item >= OPEN_CAPABLE_MIN_DEVICE_ID for item in ids)
    return all(item < OPEN_ONLY_MIN_DEVICE_ID for item in ids)


def nvidia_driver_load_blocker(host_state, in_container, virtualization_type="", simulated=False):
    """Why the driver cannot be loaded on this host now; empty when it can."""
    if boolean(in_container):
        return f"running in a container ({virtualization_type}): the kernel is the container host's"
    if not host_state.get("gpus"):
        return "no NVIDIA GPU on the PCI bus"
    if boolean(simulated):
        return "check mode: the driver is not installed yet"
    return ""


def nvidia_driver_flavour_packages(source, flavour, signed):
    """The kernel module package of FLAVOUR (signed precompiled where SIGNED; empty where the source has none) and the
    packages installed at the driver's version: a source whose open modules come with other package names lists
    those as open_packages."""
    modules = source["signed_module_packages"] if boolean(signed) else source["module_packages"]
    packages = source.get("open_packages", source["packages"]) if flavour == "open" else source["packages"]
    return {"module_package": modules.get(flavour, ""), "flavour_packages": list(packages)}


def nvidia_driver_chosen_version(packages, madison_lines, wanted):
    """apt: the driver version, from a read of the installed PACKAGES and what `apt-cache madison` lists.

    Without an exact version asked for, a driver of the branch already installed stays: the role does not move it
    (decided from a kernel-independent package, so a kernel update does not count as "not installed"). Otherwise
    the newest upstream version every queried package offers, inside the branch (or exactly the version asked for);
    empty where none does. WANTED: branch, version, signed, module_package, flavour_packages,
    fabric_manager_needed and the source's fabric_manager_package.
    """
    signed, first = boolean(wanted["signed"]), wanted["flavour_packages"][0]
    # Signed precompiled modules are versioned after the kernel, so they do not count; Fabric Manager, when needed,
    # must exist at exactly the driver's version.
    queried = ([] if signed else [wanted["module_package"]]) + [first]
    if boolean(wanted["fabric_manager_needed"]):
        queried.append(wanted["fabric_manager_package"])
    installed = upstream_version((packages.get(first) or {}).get("version") or "")
    keep = first if signed else wanted["module_package"]
    if (
        not wanted["version"]
        and installed.startswith(f"{wanted['branch']}.")
        and (packages.get(keep) or {}).get("installed")
    ):
        return installed
    offered = apt_madison_common_versions(madison_lines, queried, wanted["branch"], wanted["version"])
    return offered[0] if offered else ""


def nvidia_driver_load(host, in_container, installed_version, simulated, wanted):
    """Whether the driver can be loaded here (cannot_load: why not, empty where it can), whether a reboot is needed to
    load INSTALLED_VERSION (the module loaded is another one) and why it must not happen (reboot_blocker). HOST: the
    host reader's answer; WANTED: virtualization_type and reboot (allowed, already_rebooted, address, connection,
    controller_machine_id)."""
    reboot = wanted["reboot"]
    needed = (
        bool(host.get("gpus"))
        and not boolean(in_container)
        and not boolean(simulated)
        and host.get("loaded_module_version") != installed_version
    )
    controller = runs_the_play(
        reboot["address"], reboot["connection"], host.get("machine_id", ""), reboot["controller_machine_id"]
    )
    return {
        "cannot_load": nvidia_driver_load_blocker(host, in_container, wanted["virtualization_type"], simulated),
        "reboot_needed": needed,
        "reboot_blocker": reboot_blocker(
            reboot["allowed"],
            "nvidia_driver_reboot",
            controller,
            reboot["already_rebooted"],
            f"load driver {installed_version}",
        ),
    }


def nvidia_driver_first_read(state, wanted):
    """What the role's read of a host decides, as the facts preflight.yml records: the host reader's answer (host),
    whether the host is a container, the kernel module flavour, whether Fabric Manager is needed, the flavour's
    packages and, on apt, the driver version and whether it can load and needs a reboot (the dnf flow decides those
    after its packages). STATE: the registered read; WANTED: vars/main.yml's __nvidia_driver_first_read_inputs."""
    try:
        host = json.loads(state["commands"]["host"]["stdout"])
    except (KeyError, TypeError, ValueError) as error:
        raise AnsibleFilterError(
            f"nvidia_driver_first_read: expects the role's host_state read, got {state!r}: {error}"
        ) from error
    in_container = (
        wanted["virtualization_role"] == "guest" and wanted["virtualization_type"] in wanted["container_types"]
    )
    flavour = nvidia_driver_flavour(wanted["kernel_modules"], wanted["branch"], host["gpus"])
    fabric_manager = wanted["fabric_manager"] == "always" or (
        wanted["fabric_manager"] == "auto" and host["nvswitch_count"] > 0
    )
    decided = {"host": host, "in_container": in_container, "flavour": flavour, "fabric_manager_needed": fabric_manager}
    decided.update(nvidia_driver_flavour_packages(wanted["source"], flavour, wanted["signed"]))
    if wanted["package_manager"] != "apt":
        return decided
    decided["target"] = nvidia_driver_chosen_version(
        state["packages"],
        state["commands"]["madison"]["stdout_lines"],
        {
            **decided,
            "branch": wanted["branch"],
            "version": wanted["version"],
            "signed": wanted["signed"],
            "fabric_manager_package": wanted["source"]["fabric_manager_package"],
        },
    )
    decided.update(nvidia_driver_load(host, in_container, decided["target"], False, wanted))
    return decided


def deb822_sources(repositories, keyring_dir, header=""):
    """The deb822 file of each apt source the role writes, by name (the text the sources step writes and compares)."""
    texts = {}
    for repository in repositories:
        try:
            lines = [header] if header else []
            lines += [
                "Types: deb",
                "URIs: " + " ".join(repository["uris"]),
                "Suites: " + " ".join(repository["suites"]),
            ]
            if repository.get("components"):
                lines.append("Components: " + " ".join(repository["components"]))
            lines.append("Signed-By: " + repository.get("signed_by", f"{keyring_dir}/{repository['name']}.asc"))
        except (KeyError, TypeError) as error:
            raise AnsibleFilterError(
                "expected each apt source as {name, uris, suites[, components, signed_by]}, "
                f"got {repository!r}: {error}"
            ) from error
        texts[repository["name"]] = "\n".join(lines) + "\n"
    return texts


class FilterModule:
    """Decisions of the nvidia_driver role."""

    def filters(self):
        return {
            "nvidia_driver_flavour_fits": nvidia_driver_flavour_fits,
            "nvidia_driver_first_read": nvidia_driver_first_read,
            "nvidia_driver_chosen_version": nvidia_driver_chosen_version,
            "nvidia_driver_load": nvidia_driver_load,
            "deb822_sources": deb822_sources,
        }
