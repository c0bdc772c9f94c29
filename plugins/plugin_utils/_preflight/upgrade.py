# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What an upgrade run changes on a node, decided before the node is drained.

A node is drained only when one of the upgrades changes it, so a second upgrade run drains nothing.
Each rule follows the role that does the upgrade:
- nvidia_driver keeps an installed driver of the wanted branch unless an exact version is asked for;
- nvidia_container_toolkit pins every package to nvidia_container_toolkit_version (VERSION-RELEASE);
- rke2 upgrades when the installed release differs from rke2_version (its own check says so).
"""

from __future__ import annotations

TOOLKIT_PACKAGE = "nvidia-container-toolkit"


def installed_package_version(packages, name=TOOLKIT_PACKAGE):
    """VERSION-RELEASE of an installed package from ansible_facts.packages ("" when absent): apt gives the
    Debian version whole ("1.17.8-1"), dnf gives version and release apart."""
    entries = (packages or {}).get(name) or []
    if not entries:
        return ""
    entry = entries[0]
    version = str(entry.get("version") or "")
    release = entry.get("release")
    return f"{version}-{release}" if release else version


def driver_change(loaded_version, branch, version=""):
    """The driver upgrade of a node as "FROM -> TO", or "" when the driver role keeps what runs."""
    loaded, branch, version = str(loaded_version or ""), str(branch), str(version or "")
    if not loaded:
        return f"driver: none loaded -> {version or 'branch ' + branch}"
    if version:
        return "" if loaded == version else f"driver: {loaded} -> {version}"
    return "" if loaded.split(".", maxsplit=1)[0] == branch else f"driver: {loaded} -> branch {branch}"


def toolkit_change(installed, wanted):
    installed, wanted = str(installed or ""), str(wanted)
    if installed == wanted:
        return ""
    return f"container toolkit: {installed or 'not installed'} -> {wanted}"


def rke2_change(upgrade, installed, wanted):
    return f"RKE2: {installed} -> {wanted}" if upgrade else ""


def upgrade_changes(components):
    """The changes of a node, one line each, from COMPONENTS: {"driver": {loaded, branch, version},
    "toolkit": {installed, wanted}, "rke2": {upgrade, installed, wanted}}; a component left out is not upgraded.
    """
    changes = []
    if "driver" in components:
        driver = components["driver"]
        changes.append(driver_change(driver.get("loaded"), driver["branch"], driver.get("version")))
    if "toolkit" in components:
        toolkit = components["toolkit"]
        changes.append(toolkit_change(toolkit.get("installed"), toolkit["wanted"]))
    if "rke2" in components:
        rke2 = components["rke2"]
        changes.append(rke2_change(rke2.get("upgrade"), rke2.get("installed"), rke2.get("wanted")))
    return [change for change in changes if change]
