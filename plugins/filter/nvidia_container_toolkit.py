# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the nvidia_container_toolkit role: what to do about a container engine's nvidia runtime and about
the CDI specification of the host's GPUs."""

from __future__ import annotations

from ansible.module_utils.parsing.convert_bool import boolean


def nvidia_runtime_state(configured, ctk_path, ctk_present, check_mode=False, install_changed=False):
    """State of an engine's nvidia runtime: configured, NOT configured (and why), or to configure."""
    if boolean(configured):
        return "configured"
    if not boolean(ctk_present):
        if boolean(check_mode) and boolean(install_changed):
            return f"NOT configured in check mode: {ctk_path} would be installed first"
        return f"NOT configured: {ctk_path} is missing"
    return "to configure"


def cdi_refresh_state(units, files, module_listed, modules_dep, spec):
    """What the toolkit's nvidia-cdi-refresh needs: {installed, refresh, message}.

    UNITS: the host_state module's states of nvidia-cdi-refresh.path and .service. FILES: its path states of
    MODULES_DEP, nvidia-ctk, SPEC, /usr/bin/nvidia-smi and /usr/sbin/nvidia-smi. MODULE_LISTED: whether
    MODULES_DEP lists an NVIDIA kernel module. The service generates SPEC only where its conditions hold (an
    nvidia-smi, nvidia-ctk, the module listed). A SPEC older than MODULES_DEP or nvidia-ctk is stale: the path unit
    watches both, but starting the service runs nothing while it is still active from an earlier run
    (RemainAfterExit=yes), so it must be restarted.
    """
    units = list(units or [])
    if len(units) != 2 or any(unit.get("load_state") != "loaded" for unit in units):
        return {
            "installed": False,
            "refresh": False,
            "message": "NOT generated: the toolkit's nvidia-cdi-refresh units are not installed "
            "(the toolkit is not installed, or is older than 1.18)",
        }
    dep, ctk, current, *smis = (item or {} for item in files)
    if not any(smi.get("exists") for smi in smis) or not boolean(module_listed):
        message = (
            f"NOT generated: no NVIDIA driver (no nvidia-smi, or no NVIDIA kernel module in {modules_dep}); "
            "nvidia-cdi-refresh.path generates it when the driver is installed"
        )
        return {"installed": True, "refresh": False, "message": message}
    if not ctk.get("exists"):
        return {"installed": True, "refresh": False, "message": "NOT generated: nvidia-ctk is missing"}
    if not current.get("exists"):
        return {"installed": True, "refresh": True, "message": f"to generate: {spec} is missing"}
    newest = max(dep.get("mtime") or 0, ctk.get("mtime") or 0)
    if (current.get("mtime") or 0) < newest:
        return {
            "installed": True,
            "refresh": True,
            "message": f"to generate: {spec} is older than the driver or nvidia-ctk",
        }
    return {"installed": True, "refresh": False, "message": f"up to date: {spec}"}


class FilterModule:
    """Decisions of the nvidia_container_toolkit role."""

    def filters(self):
        return {"nvidia_runtime_state": nvidia_runtime_state, "cdi_refresh_state": cdi_refresh_state}
