# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for NVIDIA's nvidia-ctk in molecule scenarios, where the real one cannot be installed.

It implements two commands:
- `nvidia-ctk runtime configure [--dry-run] --runtime=containerd|docker [--config=PATH]`: for containerd it
  appends the nvidia runtime table that nvidia-ctk writes into a version 2 config (as recorded in
  ../shared/seeds/002_76a4f94e83636ced.txt, containerd with nvidia-container-runtime); for docker it adds the
  runtime to daemon.json. With --dry-run it prints the result and writes nothing, as nvidia-ctk does.
- `nvidia-ctk cdi generate [--output=PATH]`: the CDI specification (kind nvidia.com/gpu) of the GPUs and MIG
  devices `nvidia-smi -L` lists (the nvidia-smi double on a test host), each named by index (`0`, MIG `0:1`) and
  by UUID, plus `all`, as NVIDIA's `nvidia-ctk cdi generate` names them (device-name strategies index and
  uuid); written to --output, else to $NVIDIA_CTK_CDI_OUTPUT_FILE_PATH (what nvidia-cdi-refresh.service sets),
  else printed. Without an answering nvidia-smi it fails, as nvidia-ctk does without NVML. The container
  edits name the device nodes only: no driver library is mounted in a test host.
Every call is appended to CALL_LOG so that a scenario can count how often the role ran it. It is a test
double: not a TOML merger, not shipped in a role.
"""

import json
import os
import re
import subprocess
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


# `nvidia-smi -L` lines: "GPU 0: NAME (UUID: GPU-...)" and, below a GPU, "  MIG 1g.10gb Device  0: (UUID: MIG-...)".
GPU_LINE = re.compile(r"GPU (\d+): .* \(UUID: (GPU-[0-9a-f-]+)\)")
MIG_LINE = re.compile(r"\s+MIG .*Device\s+(\d+): \(UUID: (MIG-[0-9a-f-]+)\)")
CDI_VERSION = "0.5.0"
CDI_KIND = "nvidia.com/gpu"
CONTROL_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")


def cdi_devices(listing: str) -> list[dict]:
    """CDI devices of the GPUs and MIG devices of an `nvidia-smi -L` LISTING."""
    devices, gpu = [], None
    for line in listing.splitlines():
        if match := GPU_LINE.match(line):
            gpu = match.group(1)
            edits = {"deviceNodes": [{"path": f"/dev/nvidia{gpu}"}]}
            devices += [{"name": name, "containerEdits": edits} for name in (gpu, match.group(2))]
        elif (match := MIG_LINE.match(line)) and gpu is not None:
            edits = {"deviceNodes": [{"path": f"/dev/nvidia{gpu}"}]}
            devices += [{"name": name, "containerEdits": edits} for name in (f"{gpu}:{match.group(1)}", match.group(2))]
    every_node = sorted({node["path"] for device in devices for node in device["containerEdits"]["deviceNodes"]})
    return [*devices, {"name": "all", "containerEdits": {"deviceNodes": [{"path": path} for path in every_node]}}]


def cdi_generate(options: dict[str, str]) -> int:
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"failed to initialize NVML: the nvidia-smi double does not answer ({error})", file=sys.stderr)
        return 1
    spec = {
        "cdiVersion": CDI_VERSION,
        "kind": CDI_KIND,
        "devices": cdi_devices(listing),
        "containerEdits": {"deviceNodes": [{"path": path} for path in CONTROL_DEVICES]},
    }
    # JSON is YAML: the spec reads the same as the YAML nvidia-ctk writes.
    text = json.dumps(spec, indent=2) + "\n"
    output = options.get("output") or os.environ.get("NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", "")
    if not output:
        print(text, end="")
        return 0
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".tmp").write_text(text)
    path.with_suffix(".tmp").replace(path)
    print(f"Generated CDI spec with version {CDI_VERSION}", file=sys.stderr)
    return 0


def main(arguments: list[str]) -> int:
    with CALL_LOG.open("a") as log:
        log.write(" ".join(["nvidia-ctk", *arguments]) + "\n")
    if arguments[:2] == ["cdi", "generate"]:
        return cdi_generate(parse_options(arguments[2:]))
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
