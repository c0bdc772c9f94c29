# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real-kubelet GPU nodes of the harness: for each node of the hardware description with
`kubelet: true`, a privileged podman systemd container `gpuops-harness-<node>` (image built by
build-node-image) runs the test bed's containerd 2.x and the kubelet of its kube-multi (both built by
tests/testbed/build-kubernetes and mounted read-only), joined to the harness' API server with a
`system:node:<node>` client certificate.

Usage: kubelet_nodes.py start DIR HARDWARE | stop DIR

Layout of DIR/nodes/<node>/ (the GPU node stand-in serves its device plugin from there):
  config/          -> /etc/gpuops-node (ro): kubelet.env, kubelet.yaml, kubeconfig (0600), cni/
  kubelet/         -> /var/lib/kubelet: the kubelet makes its root folder a shared bind mount, which
                      would hide a mount below it; device-plugins/ there holds kubelet.sock and
                      the stand-in's plugin sockets
  gpu/             -> /var/lib/gpuops-gpu-node (ro): the GPUs' state for the nvidia-smi double
  containerd/      -> /var/lib/containerd (overlay on podman's overlay fails)
  cdi/             -> /var/run/cdi (ro): the CDI specification the stand-in's device plugin writes
The nodes share the host network: node i listens on kubelet ports BASE+2i / BASE+2i+1 (healthz),
and its pods on the CNI bridge `ghbr<API port>-<i>`, subnet 10.<200+API port % 50>.<i>.0/24, which
`stop` deletes with the containers and the folder.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import control_plane  # noqa: E402  (the harness' control plane: ports, kube-multi, certificates)
from control_plane import binaries, pki  # noqa: E402

PREFIX = os.environ.get("GPUOPS_HARNESS_NODE_PREFIX", "gpuops-harness-")
KUBELET_PORT = int(os.environ.get("GPUOPS_HARNESS_KUBELET_PORT", "21250"))
READY_TIMEOUT = float(os.environ.get("GPUOPS_HARNESS_NODE_TIMEOUT", "120"))
NODE_IMAGE = "localhost/gpuops-harness-node:latest"
VALIDATION_BUILD = REPO_ROOT / "tests/doubles/validation_image/build"


def log(message: str) -> None:
    print(f"kubelet nodes: {message}", file=sys.stderr, flush=True)


def real_nodes(hardware: Path) -> list[str]:
    described = yaml.safe_load(Path(hardware).read_text()) or {}
    return [name for name, entry in described.items() if (entry or {}).get("kubelet")]


def podman_environment() -> dict:
    return {"CONTAINERS_CONF": str(REPO_ROOT / "tests/testbed/containers.conf"), **os.environ}


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, env=podman_environment(), check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def bridge(index: int) -> tuple[str, str]:
    """(bridge name, subnet) of node `index`: distinct per node and per harness API port."""
    return f"ghbr{control_plane.API_PORT}-{index}", f"10.{200 + control_plane.API_PORT % 50}.{index}.0/24"


def write_config(directory: Path, name: str, index: int) -> None:
    config = directory / "config"
    (config / "cni").mkdir(parents=True, exist_ok=True)
    files = control_plane.ensure_pki(directory.parents[1])
    crt, key = directory / "kubelet.crt", directory / "kubelet.key"
    if not crt.exists():
        # The kubelet's own identity, as kubeadm's join gives it (Node authorizer: system:nodes).
        pki.issue((files["ca.crt"], files["ca.key"]), crt, key, f"/O=system:nodes/CN=system:node:{name}", client=True)
    kubeconfig = config / "kubeconfig"
    kubeconfig.write_text(pki.kubeconfig(f"https://127.0.0.1:{control_plane.API_PORT}", files["ca.crt"], crt, key))
    kubeconfig.chmod(0o600)
    (config / "kubelet.env").write_text(f"NODE_NAME={name}\nKUBECONFIG=/etc/gpuops-node/kubeconfig\n")
    # What a kubelet in a container on this kernel needs (see the test bed notes): cgroupfs, no
    # QoS cgroups, cgroup v1 allowed, no eviction or image GC; ports of its own on the host network.
    kubelet = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "failSwapOn": False,
        "failCgroupV1": False,
        "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": False}},
        "authorization": {"mode": "AlwaysAllow"},
        "enforceNodeAllocatable": [],
        "cgroupsPerQOS": False,
        "evictionHard": {},
        "imageGCHighThresholdPercent": 100,
        "port": KUBELET_PORT + 2 * index,
        "healthzPort": KUBELET_PORT + 2 * index + 1,
        "readOnlyPort": 0,
        "serializeImagePulls": False,
    }
    (config / "kubelet.yaml").write_text(yaml.safe_dump(kubelet))
    bridge_name, subnet = bridge(index)
    network = {
        "cniVersion": "0.4.0",
        "name": "gpuops-harness",
        "plugins": [
            {
                "type": "bridge",
                "bridge": bridge_name,
                "isGateway": True,
                "ipMasq": False,
                "ipam": {"type": "host-local", "ranges": [[{"subnet": subnet}]]},
            }
        ],
    }
    (config / "cni/10-bridge.conflist").write_text(json.dumps(network, indent=2) + "\n")


def build_images() -> list[Path]:
    pause = run(str(HERE / "build-node-image")).stdout.strip().splitlines()[-1]
    validation = run(str(VALIDATION_BUILD)).stdout.strip().splitlines()[-1]
    return [Path(pause), Path(validation)]


def start_node(directory: Path, name: str, index: int, images: list[Path], tools: dict[str, Path]) -> None:
    for folder in ("kubelet/device-plugins", "gpu", "containerd", "cdi"):
        (directory / folder).mkdir(parents=True, exist_ok=True)
    write_config(directory, name, index)
    mounts = [
        f"{tools['KUBE_MULTI']}:/usr/local/bin/kube-multi:ro",
        *(f"{tools['CONTAINERD_BIN'] / tool}:/usr/local/bin/{tool}:ro" for tool in binaries.CONTAINERD_TOOLS),
        f"{directory / 'config'}:/etc/gpuops-node:ro",
        f"{directory / 'kubelet'}:/var/lib/kubelet",
        f"{directory / 'gpu'}:/var/lib/gpuops-gpu-node:ro",
        f"{directory / 'containerd'}:/var/lib/containerd",
        # containerd 2.x reads CDI specifications there by default; the stand-in's device plugin writes its own.
        f"{directory / 'cdi'}:/var/run/cdi:ro",
        # cgroupns=host with the host's cgroups: nested runc cannot mount cgroups otherwise (hybrid v1/v2).
        "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        *(f"{image}:/var/lib/gpuops-node-images/{number}.tar:ro" for number, image in enumerate(images)),
    ]
    run("podman", "rm", "-f", "-t", "0", PREFIX + name, check=False)
    run(
        "podman",
        "run",
        "-d",
        "--name",
        PREFIX + name,
        "--label",
        f"gpuops.harness.dir={directory.parents[1]}",
        "--privileged",
        "--systemd=always",
        "--cgroupns=host",
        "--network",
        "host",
        "--hostname",
        name,
        *(argument for mount in mounts for argument in ("-v", mount)),
        NODE_IMAGE,
        "/sbin/init",
    )


def wait_ready(directory: Path, names: list[str]) -> None:
    """Until every node is Ready; then lifts the not-ready taint the API server put on the new Node
    (the harness runs without the node lifecycle controller, which would lift it)."""
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(config_file=str(directory / "admin.kubeconfig")))
    waiting, deadline = set(names), time.monotonic() + READY_TIMEOUT
    while waiting:
        for node in api.list_node().items:
            if node.metadata.name not in waiting:
                continue
            ready = [c for c in node.status.conditions or [] if c.type == "Ready" and c.status == "True"]
            if not ready:
                continue
            taints = node.spec.taints or []
            kept = [taint for taint in taints if taint.key != "node.kubernetes.io/not-ready"]
            if len(kept) != len(taints):
                body = {"spec": {"taints": [client.ApiClient().sanitize_for_serialization(t) for t in kept]}}
                api.patch_node(node.metadata.name, body)
            waiting.discard(node.metadata.name)
        if waiting and time.monotonic() > deadline:
            tails = {
                name: run(
                    "podman",
                    "exec",
                    PREFIX + name,
                    "journalctl",
                    "-u",
                    "kubelet",
                    "-u",
                    "gpuops-node-images",
                    "-n",
                    "15",
                    "--no-pager",
                    check=False,
                ).stdout
                for name in waiting
            }
            raise RuntimeError(
                f"nodes {sorted(waiting)} not Ready in {READY_TIMEOUT:.0f} s; their logs:\n"
                + "\n".join(f"--- {name}\n{tail}" for name, tail in tails.items())
            )
        if waiting:
            time.sleep(0.5)


def start(directory: Path, hardware: Path) -> None:
    names = real_nodes(hardware)
    if not names:
        return
    if not shutil.which("podman"):
        raise RuntimeError(f"{hardware} has nodes with kubelet: true ({', '.join(names)}); they need podman")
    began = time.monotonic()
    images = build_images()
    built = time.monotonic()
    try:
        tools = binaries.binaries()
    except binaries.BuildError as error:
        raise RuntimeError(str(error)) from error
    try:
        for index, name in enumerate(names):
            start_node(directory / "nodes" / name, name, index, images, tools)
        wait_ready(directory, names)
    except Exception:
        stop(directory)
        raise
    log(
        f"{len(names)} real-kubelet nodes Ready in {time.monotonic() - began:.1f} s "
        f"(images {built - began:.1f} s): {', '.join(PREFIX + name for name in names)}"
    )


def stop(directory: Path) -> None:
    """Removes the node containers of DIR, their pods' cgroups, their CNI bridges and DIR/nodes."""
    if not shutil.which("podman"):
        return  # no podman, so no node container was started
    listed = run("podman", "ps", "-a", "--filter", f"label=gpuops.harness.dir={directory}", "--format", "{{.Names}}")
    for name in listed.stdout.split():
        # The pods' cgroups live in the host's hierarchies (cgroupns=host): containerd names them
        # k8s.io/<container id>; removing the node kills their processes but leaves the folders.
        ids = run("podman", "exec", name, "ctr", "-n", "k8s.io", "containers", "ls", "-q", check=False).stdout.split()
        run("podman", "rm", "-f", "-t", "0", name)
        for folder in (path for container in ids for path in Path("/sys/fs/cgroup").glob(f"*/k8s.io/{container}")):
            try:
                folder.rmdir()
            except OSError as error:
                log(f"cannot remove cgroup {folder}: {error}")
    nodes = directory / "nodes"
    if nodes.is_dir():
        for path in nodes.glob("*/config/cni/10-bridge.conflist"):
            name = json.loads(path.read_text())["plugins"][0]["bridge"]
            if Path("/sys/class/net", name).exists():
                run("ip", "link", "delete", name)
        # containerd's files belong to root; rm removes them now that no mount holds them.
        subprocess.run(["rm", "-rf", "--one-file-system", str(nodes)], check=True)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in ("start", "stop") or (argv[0] == "start" and len(argv) != 3):
        sys.exit("usage: kubelet_nodes.py start DIR HARDWARE | stop DIR")
    directory = Path(argv[1]).resolve()
    try:
        if argv[0] == "start":
            start(directory, Path(argv[2]))
        else:
            stop(directory)
    except (RuntimeError, control_plane.StartError) as error:
        sys.exit(f"kubelet nodes: {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
