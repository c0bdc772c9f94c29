# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for NVIDIA's nvidia-ctk in molecule scenarios, where the real one cannot be installed.

It implements only `nvidia-ctk runtime configure [--dry-run] --runtime=containerd|docker [--config=PATH]`:
for containerd it appends the nvidia runtime table that nvidia-ctk writes into a version 2 config (as
recorded in ../shared/seeds/002_76a4f94e83636ced.txt, containerd with nvidia-container-runtime);
for docker it adds the runtime to daemon.json. With --dry-run it prints the result and writes nothing,
as nvidia-ctk does. Every call is appended to CALL_LOG so that a scenario
can count how often the role ran it. It is a test double: not a TOML merger, not shipped in a role.
"""

import json
import sys
from pathlib import Path

CALL_LOG = Path("/var/log/nvidia-ctk-stand-in.log")
RUNTIME_BINARY = "/usr/bin/nvidia-container-runtime"
CONTAINERD_TABLE = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]'
CONTAINERD_RUNTIME = f"""
{CONTAINERD_TABLE}
  privileged_without_host_devices = false
  runtime_engine = ""
  runtime_root = ""
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
    BinaryName = "{RUNTIME_BINARY}"
"""
DEFAULT_CONFIGS = {"containerd": "/etc/containerd/config.toml", "docker": "/etc/docker/daemon.json"}


def parse_options(arguments: list[str]) -> dict[str, str]:
    options = {}
    for argument in arguments:
        name, value = argument.removeprefix("--").partition("=")[::2]
        options[name] = value
    return options


def configured_containerd(config: Path) -> str:
    text = config.read_text() if config.exists() else ""
    if CONTAINERD_TABLE in text:
        return text
    if not text.lstrip().startswith("version"):
        text = "version = 2\n" + text
    return text.rstrip("\n") + "\n" + CONTAINERD_RUNTIME


def configured_docker(config: Path) -> str:
    settings = json.loads(config.read_text()) if config.exists() else {}
    settings.setdefault("runtimes", {})["nvidia"] = {"args": [], "path": "nvidia-container-runtime"}
    return json.dumps(settings, indent=4) + "\n"


def main(arguments: list[str]) -> int:
    with CALL_LOG.open("a") as log:
        log.write(" ".join(["nvidia-ctk", *arguments]) + "\n")
    if arguments[:2] != ["runtime", "configure"]:
        print(f"nvidia-ctk stand-in: {' '.join(arguments)} is not implemented", file=sys.stderr)
        return 2
    options = parse_options(arguments[2:])
    runtime = options.get("runtime", "docker")
    if runtime not in DEFAULT_CONFIGS:
        print(f"unrecognized runtime '{runtime}'", file=sys.stderr)
        return 1
    config = Path(options.get("config") or DEFAULT_CONFIGS[runtime])
    text = configured_containerd(config) if runtime == "containerd" else configured_docker(config)
    if "dry-run" in options:
        print(text, end="")
        return 0
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    print(f"Wrote updated config to {config}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
