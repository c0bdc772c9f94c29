# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The `rke2` command of the stand-in: --version, server, agent."""

import sys

from stand_in import config, join, paths, server


def version_lines() -> list[str]:
    release = dict(line.split("=", 1) for line in paths.RELEASE.read_text().split())
    return [f"rke2 version {release['version']} ({release['commit']})", f"go version {release['go']}"]


def main() -> None:
    arguments = sys.argv[1:]
    if not arguments or arguments[0] in ("-v", "--version", "version"):
        print("\n".join(version_lines()))
        return
    command = arguments[0]
    if command not in ("server", "agent"):
        sys.exit(f"rke2 stand-in: command {command!r} is not implemented (only server, agent, --version)")
    settings = config.load()
    if command == "agent":
        join.run_agent(settings)
    elif settings.get("server"):
        join.run_joining_server(settings)
    else:
        server.run(settings)
