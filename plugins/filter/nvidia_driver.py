# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the nvidia_driver role: kernel module flavour, why the driver cannot be loaded, its apt sources."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

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
            "nvidia_driver_flavour": nvidia_driver_flavour,
            "nvidia_driver_flavour_fits": nvidia_driver_flavour_fits,
            "nvidia_driver_load_blocker": nvidia_driver_load_blocker,
            "deb822_sources": deb822_sources,
        }
