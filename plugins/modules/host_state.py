#!/usr/bin/python
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""host_state: what a role needs to know of a host, read in one module call."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: host_state
short_description: Read packages, systemd units, paths and read-only commands of a host in one call
version_added: 0.1.0
description:
  - Reads what a role decides from, in one module call instead of one task per fact; the collection's roles
    call it once each, so that a run on a converged host costs a few module calls per role.
  - Packages through one C(dpkg-query) (or C(rpm --query)), each with whether it is installed, its version and, on
    dpkg, whether it is on hold.
  - systemd units through one C(systemctl show), each with its load, active and sub state and its unit file state.
    On a host that systemd does not run (no C(/run/systemd/system), the test of C(sd_booted(3))) every unit reads as
    not loaded and not running.
  - Paths through C(stat), each with whether it exists, its kind, whether it is executable, its mode and owner, how
    many seconds ago it last changed and, with O(checksum), the SHA-1 of a file's content (the checksum
    M(ansible.builtin.template) and M(ansible.builtin.copy) compare), so that a role skips writing a file that is
    already as it wants (the P(gpuops.cluster.path_differs#filter) filter).
  - Commands that only read (C(rke2 --version), C(apt-cache madison) and such), each with its exit status and output.
    A command whose program is missing gives rc 127 rather than a failure, so that the role decides.
  - URLs fetched from the host with GET (the same request code as M(ansible.builtin.uri), proxies and CA certificates
    of the host included), each with its HTTP status, or -1 and the reason where none answered; so whether the host
    reaches a package repository is asked in the same call as the rest.
author:
  - gpuops.cluster maintainers (@gpuops)
options:
  packages:
    description: Package names to look up. Each one is in RV(packages), installed or not.
    type: list
    elements: str
    default: []
  units:
    description: systemd unit names (with their suffix, e.g. C(rke2-server.service)). Each one is in RV(units).
    type: list
    elements: str
    default: []
  paths:
    description: Absolute paths to look at. Each one is in RV(paths).
    type: list
    elements: path
    default: []
  checksum:
    description:
      - Also give the SHA-1 of the content of each regular file among O(paths) (RV(paths) C(checksum)).
      - C(true) for every path, or a list of paths among O(paths) for those only (a binary read for its
        existence need not be hashed at every run).
    type: raw
    default: false
  commands:
    description:
      - Commands to run, by a name of the caller's choice, each an argv list. Only read-only commands belong here;
        the module runs them in check mode too.
    type: dict
    default: {}
  urls:
    description: URLs to GET from the host, by a name of the caller's choice. Each one is in RV(urls).
    type: dict
    default: {}
  url_timeout:
    description: Seconds to wait for each of O(urls) (M(ansible.builtin.uri)'s C(timeout)).
    type: int
    default: 10
attributes:
  check_mode:
    support: full
    description: The module only reads; it reads the same in check mode.
  diff_mode:
    support: none
    description: The module changes nothing, so there is no diff to show.
  idempotent:
    support: full
    description: The module only reads; C(changed) is always false.
  platform:
    support: full
    platforms: posix
    description: Linux hosts; packages need dpkg or rpm.
notes:
  - C(changed) is always false.
"""

EXAMPLES = r"""
- name: Read what the role decides from
  gpuops.cluster.host_state:
    packages: [nvidia-driver, nvidia-kernel-dkms]
    units: [rke2-server.service]
    paths: [/usr/bin/nvidia-container-runtime]
    commands:
      version: [/usr/local/bin/rke2, --version]
  register: state

- name: Start RKE2 only when it does not run
  ansible.builtin.systemd_service:
    name: rke2-server.service
    state: started
  when: not state.units['rke2-server.service'].running
"""

RETURN = r"""
packages:
  description: Each package asked for, by name.
  returned: always
  type: dict
  sample: {nvidia-driver: {installed: true, version: "535.261.03-1~deb12u1", held: true}}
units:
  description: Each unit asked for, by name; C(running) is C(active_state) active with C(sub_state) running.
  returned: always
  type: dict
  sample:
    rke2-server.service:
      load_state: loaded
      active_state: active
      sub_state: running
      unit_file_state: enabled
      running: true
paths:
  description:
    - Each path asked for; C(kind) is file, directory, other, or link for a dangling link; C(mode) is the permission
      bits in octal (C(0700)), C(uid) and C(gid) the owner's ids; C(age_s) is the seconds
      since its last modification, C(mtime) that modification's time (both null when it does not exist);
      C(checksum) is the SHA-1 of a regular file's content with O(checksum), else null.
  returned: always
  type: dict
  sample:
    /usr/bin/nvidia-container-runtime:
      exists: true
      kind: file
      link: false
      executable: true
      mode: "0755"
      uid: 0
      gid: 0
      mtime: 1764288000.0
      age_s: 86400
      checksum: null
commands:
  description: Each command asked for, by its name.
  returned: always
  type: dict
  sample:
    version:
      cmd: [/usr/local/bin/rke2, --version]
      rc: 0
      stdout: "rke2 version v1.33.1+rke2r1"
      stdout_lines: ["rke2 version v1.33.1+rke2r1"]
      stderr: ""
urls:
  description: Each URL asked for, by its name; C(status) is the HTTP status, -1 where nothing answered.
  returned: always
  type: dict
  sample:
    repository:
      url: https://nvidia.github.io/libnvidia-container/stable/deb/amd64/InRelease
      status: 200
      msg: OK (4313 bytes)
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.validation import check_type_path
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.gpuops.cluster.plugins.module_utils._host import system_state


def read_packages(module, names):
    if not names:
        return {}
    manager = "dpkg" if shutil.which("dpkg-query") else "rpm" if shutil.which("rpm") else None
    if manager is None:
        module.fail_json(msg="host_state: packages were asked for, but this host has neither dpkg-query nor rpm")
    # Both exit 1 when some name is not installed, and still list the others.
    rc, stdout, stderr = module.run_command(system_state.package_query(manager, names))
    if rc not in (0, 1):
        module.fail_json(msg=f"host_state: the {manager} query failed (rc {rc}): {stderr.strip()}")
    return system_state.parse_packages(manager, names, stdout)


def read_units(module, names):
    if not names:
        return {}
    # systemd's own test that it runs the host (sd_booted(3): /run/systemd/system exists). Without it (a container
    # or a chroot, say) no unit is loaded or running, and systemctl would only fail.
    if not shutil.which("systemctl") or not os.path.isdir("/run/systemd/system"):
        return {name: system_state.unit_state({}) for name in names}
    argv = system_state.unit_query(names)
    rc, stdout, stderr = module.run_command(argv)
    if rc != 0:
        module.fail_json(msg=f"host_state: {' '.join(argv)} failed (rc {rc}): {stderr.strip()}")
    try:
        return system_state.parse_units(names, stdout)
    except ValueError as exc:
        module.fail_json(msg=f"host_state: {exc}", stdout=stdout)


def run_commands(module, commands):
    results = {}
    for name, argv in commands.items():
        if not isinstance(argv, list) or not argv or not all(isinstance(arg, str) for arg in argv):
            module.fail_json(
                msg=f"host_state: commands.{name} must be a non-empty list of strings (an argv), got {argv!r}"
            )
        # A missing program answers as a shell would (127), for the role to decide.
        found = shutil.which(argv[0]) is not None
        rc, stdout, stderr = module.run_command(argv) if found else (127, "", f"{argv[0]}: not found")
        # Trailing line ends cut, as the command module does; leading blanks kept (apt-cache madison aligns with them).
        stdout = stdout.rstrip("\r\n")
        results[name] = {
            "cmd": argv,
            "rc": rc,
            "stdout": stdout,
            "stdout_lines": stdout.splitlines(),
            "stderr": stderr.rstrip("\r\n"),
        }
    return results


def fetch_urls(module, urls, timeout):
    """Each URL's status and message; the body is not read."""
    if not urls:
        return {}
    # Imported only where a URL is asked for: the HTTP and TLS modules it loads cost every other read about 35 ms on
    # the host.
    from ansible.module_utils.urls import fetch_url  # pylint: disable=import-outside-toplevel

    results = {}
    for name, url in urls.items():
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            module.fail_json(msg=f"host_state: urls.{name} must be an http:// or https:// URL, got {url!r}")
        response, info = fetch_url(module, url, method="GET", timeout=timeout)
        if response is not None:
            response.close()
        results[name] = {"url": url, "status": info.get("status", -1), "msg": info.get("msg", "")}
    return results


def checksum_paths(module, checksum, paths):
    """The paths to hash: every path for a true CHECKSUM, none for a false one, else the listed ones, which must be
    among PATHS."""
    if isinstance(checksum, list):
        # Made as O(paths) are (type path).
        listed = [check_type_path(str(path)) for path in checksum]
        unknown = sorted(set(listed) - set(paths))
        if unknown:
            module.fail_json(msg=f"host_state: checksum names paths that are not in paths: {', '.join(unknown)}")
        return set(listed)
    try:
        return set(paths) if boolean(checksum) else set()
    except TypeError:
        module.fail_json(msg=f"host_state: checksum must be true, false or a list of paths, not {checksum!r}")


def main():
    module = AnsibleModule(
        argument_spec={
            "packages": {"type": "list", "elements": "str", "default": []},
            "units": {"type": "list", "elements": "str", "default": []},
            "paths": {"type": "list", "elements": "path", "default": []},
            "checksum": {"type": "raw", "default": False},
            "commands": {"type": "dict", "default": {}},
            "urls": {"type": "dict", "default": {}},
            "url_timeout": {"type": "int", "default": 10},
        },
        supports_check_mode=True,
    )
    params = module.params
    if params["url_timeout"] < 1:
        module.fail_json(msg=f"host_state: url_timeout must be at least 1 (seconds), got {params['url_timeout']}")
    hashed = checksum_paths(module, params["checksum"], params["paths"])
    # The C locale, so that no output depends on the host's language.
    module.run_command_environ_update = {"LANG": "C", "LC_ALL": "C"}
    module.exit_json(
        changed=False,
        packages=read_packages(module, params["packages"]),
        units=read_units(module, params["units"]),
        paths={path: system_state.path_state(path, checksum=path in hashed) for path in params["paths"]},
        commands=run_commands(module, params["commands"]),
        urls=fetch_urls(module, params["urls"], params["url_timeout"]),
    )


if __name__ == "__main__":
    main()
