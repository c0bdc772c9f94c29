# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the nvidia_container_toolkit role: what the first read of a host decides, what to do about a container
engine's nvidia runtime and about the CDI specification of the host's GPUs."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.gpuops.cluster.plugins.filter.host_files import path_differs

# The apt files the role writes, in the order repository_apt_write.yml writes them; each one's wanted state is
# vars/main.yml's (__nvidia_container_toolkit_apt_files).
APT_FILES = ("folder", "key", "source", "pin")
ENABLED_STATES = ("enabled", "enabled-runtime")


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


def nvidia_container_toolkit_cdi_state(host, cdi):
    """cdi_refresh_state of a host_state read, with the refresh units cdi.yml enables (and starts, the path unit) as
    C(to_enable): where they are installed, each one whose unit file is not enabled, and the path unit where it is not
    active (an active one waits, sub-state "waiting"). CDI: vars/main.yml's __nvidia_container_toolkit_cdi_inputs."""
    units = host["units"]
    state = cdi_refresh_state(
        [units[name] for name in cdi["units"]],
        [host["paths"][path] for path in cdi["files"]],
        host["commands"]["module_listed"]["rc"] == 0,
        cdi["modules_dep"],
        cdi["spec"],
    )
    to_enable = []
    if state["installed"]:
        to_enable = [name for name in cdi["units"] if units[name].get("unit_file_state") not in ENABLED_STATES]
        to_enable += [
            name
            for name in cdi["units"]
            if name.endswith(".path") and units[name].get("active_state") != "active" and name not in to_enable
        ]
    return {**state, "to_enable": to_enable}


def _apt_todo(paths, files):
    """Which apt files are not yet as repository_apt_write.yml writes them, from the read's checksums."""
    todo = {
        name: path_differs(paths[wanted["path"]], wanted["kind"], wanted.get("content"), wanted["mode"], 0, 0)
        for name, wanted in ((name, files[name]) for name in APT_FILES)
    }
    todo["legacy"] = [path for path in files["legacy"] if path_differs(paths[path], "absent")]
    return todo


def _host_problem(host, wanted, reachable, repo_error):
    """What the first read found that stops the role (checks.yml): a missing engine, then a required repository."""
    engine = (host.get("commands") or {}).get("engine") or {"rc": 0}
    if engine["rc"] != 0:
        command = (engine.get("cmd") or ["the engine"])[0]
        return (
            f"nvidia_container_toolkit_runtime is {wanted['runtime']} but {command} is not installed "
            f"({engine.get('stderr', '')}). Install it first, or set nvidia_container_toolkit_runtime to containerd, "
            "docker, rke2 or none."
        )
    if boolean(wanted["repo_required"]) and not reachable:
        return (
            f"NVIDIA repository unreachable ({repo_error}) and nvidia_container_toolkit_repo_required is true. Point "
            "nvidia_container_toolkit_repo_url at a reachable mirror or open the way to it."
        )
    return ""


def nvidia_container_toolkit_installed(host, version, packages):
    """The toolkit's version installed and whether every package of it is at VERSION (the package manager would change
    nothing), from a host_state read of PACKAGES (nvidia-container-toolkit first)."""
    found = [(host["packages"].get(name) or {}).get("version", "") for name in packages]
    return {"installed_version": found[0], "at_version": sorted(set(found)) == [version]}


def nvidia_container_toolkit_status(
    repository_url, version, installed_version, reachable, repo_error, runtime, runtime_state, cdi_state
):
    """The public fact nvidia_container_toolkit_status (README): what the role did and did not do on the host."""
    return {
        "repository_url": repository_url,
        "repository_reachable": boolean(reachable),
        "repository_error": repo_error,
        "version_wanted": version,
        "version_installed": installed_version,
        "installed": installed_version == version,
        "runtime": runtime,
        "runtime_state": runtime_state,
        "cdi_state": (cdi_state or {}).get("message", "not managed (nvidia_container_toolkit_cdi_enabled is false)"),
    }


def nvidia_container_toolkit_first_read(host, wanted):
    """What the role's first read of a host decides, as the facts read.yml records (README, docs/roles): the
    toolkit installed, whether the repository answers, the repository files not as wanted, the CDI refresh and the
    runtime's state, a problem that stops the role, whether the host is as wanted (main.yml ends the role there) and
    the public nvidia_container_toolkit_status. HOST is the read; WANTED, vars/main.yml's
    __nvidia_container_toolkit_first_read_inputs."""
    if not isinstance(host, dict) or "paths" not in host:
        raise AnsibleFilterError(
            f"nvidia_container_toolkit_first_read: expects a read of gpuops.cluster.host_state, got {host!r}"
        )
    decided = nvidia_container_toolkit_installed(host, wanted["version"], wanted["packages"])
    paths, reachable = host["paths"], boolean(wanted["reachable"])
    repo_error = "" if reachable else f"{wanted['probe_url']}: {host['urls']['repository'].get('msg') or 'no answer'}"
    cdi_enabled = boolean(wanted["cdi"]["enabled"])
    cdi_state = nvidia_container_toolkit_cdi_state(host, wanted["cdi"]) if cdi_enabled else {}
    repo_todo = _apt_todo(paths, wanted["apt_files"]) if wanted["package_manager"] == "apt" else {}
    host_problem = _host_problem(host, wanted, reachable, repo_error)
    runtime = wanted["runtime"]
    runtime_present = paths[wanted["runtime_binary"]]["exists"]
    as_wanted = (
        wanted["package_manager"] == "apt"
        and not any(repo_todo.values())
        and (decided["at_version"] or not reachable)
        and not host_problem
        and (runtime == "none" or (runtime == "rke2" and runtime_present))
        and (
            not cdi_enabled
            or (
                not cdi_state["refresh"]
                and not paths[wanted["cdi"]["old_spec"]]["exists"]
                and not cdi_state["to_enable"]
            )
        )
    )
    decided.update(
        host_before=host,
        repo_reachable=reachable,
        repo_error=repo_error,
        install_changed=False,
        repo_todo=repo_todo,
        cdi_state=cdi_state,
        runtime_state=wanted["runtime_state"],
        host_problem=host_problem,
        as_wanted=as_wanted,
    )
    decided["status"] = nvidia_container_toolkit_status(
        wanted["repo_base"],
        wanted["version"],
        decided["installed_version"],
        reachable,
        repo_error,
        runtime,
        wanted["runtime_state"],
        cdi_state,
    )
    return decided


class FilterModule:
    """Decisions of the nvidia_container_toolkit role."""

    def filters(self):
        return {
            "nvidia_container_toolkit_first_read": nvidia_container_toolkit_first_read,
            "nvidia_container_toolkit_installed": nvidia_container_toolkit_installed,
            "nvidia_container_toolkit_status": nvidia_container_toolkit_status,
            "nvidia_runtime_state": nvidia_runtime_state,
            "nvidia_container_toolkit_cdi_state": nvidia_container_toolkit_cdi_state,
        }
