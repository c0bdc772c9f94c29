# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every RKE2 node runs: containerd (with the images of agent/images imported) and the kubelet."""

import gzip
import json
import shutil
import socket
import subprocess
import tempfile
import zlib
from pathlib import Path

from stand_in import component_args, config, containerd, paths
from stand_in.kubeapi import Client
from stand_in.processes import Children, log, wait_until

KUBELET_DEFAULTS = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroupfs, no QoS cgroups, cgroup v1 allowed: the test bed's containers see a hybrid v1/v2 host.
cgroupDriver: cgroupfs
cgroupsPerQOS: false
failCgroupV1: false
failSwapOn: false
enforceNodeAllocatable: []
evictionHard: {{}}
imageGCHighThresholdPercent: 100
clusterDomain: cluster.local
clusterDNS: [{dns}]
# The apiserver reaches the kubelet (logs, exec) with a client certificate of the cluster CA.
authentication: {{anonymous: {{enabled: false}}, webhook: {{enabled: false}}, x509: {{clientCAFile: {ca}}}}}
authorization: {{mode: AlwaysAllow}}
"""


def node_name(settings: dict) -> str:
    return settings.get("node-name") or socket.gethostname()


def node_ip(settings: dict) -> str:
    """node-ip, else the address of the default route, as RKE2 picks it."""
    if settings.get("node-ip"):
        return config.as_list(settings, "node-ip")[0].split(",")[0]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent; the kernel picks the source address
            return probe.getsockname()[0]
        except OSError:
            return socket.gethostbyname(socket.gethostname())


def write_cni_config(name: str) -> None:
    """A bridge network per node; RKE2 gets this from its CNI (canal) instead."""
    subnet = f"{paths.CLUSTER_CIDR_PREFIX}.{zlib.crc32(name.encode()) % 250 + 1}.0/24"
    network = {
        "cniVersion": "0.4.0",
        "name": "rke2-stand-in",
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "ipMasq": False,
                "ipam": {"type": "host-local", "ranges": [[{"subnet": subnet}]]},
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }
    paths.CNI_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    paths.CNI_CONFIG.write_text(json.dumps(network, indent=2) + "\n")


def link_runtime_bin() -> None:
    """/var/lib/rancher/rke2/bin points at this release's binaries, as RKE2 points it at data/<release>/bin."""
    if paths.RKE2_BIN.is_symlink() and paths.RKE2_BIN.resolve() == paths.STAND_IN_BIN.resolve():
        return
    paths.RKE2_BIN.parent.mkdir(parents=True, exist_ok=True)
    if paths.RKE2_BIN.is_symlink() or paths.RKE2_BIN.is_file():
        paths.RKE2_BIN.unlink()
    elif paths.RKE2_BIN.is_dir():
        shutil.rmtree(paths.RKE2_BIN)
    paths.RKE2_BIN.symlink_to(paths.STAND_IN_BIN)


def start_containerd(children: Children, settings: dict) -> None:
    runtimes = containerd.find_nvidia_runtimes()
    for name, binary in runtimes.items():
        log(f"Found {name} container runtime at {binary}")
    paths.CONTAINERD_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    paths.CONTAINERD_CONFIG.write_text(containerd.render(settings.get("default-runtime", ""), runtimes))
    paths.CONTAINERD_ROOT.mkdir(parents=True, exist_ok=True)
    link_runtime_bin()
    argv = [str(paths.RKE2_BIN / "containerd"), "-c", str(paths.CONTAINERD_CONFIG), "-a", str(paths.CONTAINERD_SOCKET),
            "--state", str(paths.CONTAINERD_STATE), "--root", str(paths.CONTAINERD_ROOT)]  # fmt: skip
    children.start("containerd", argv, paths.CONTAINERD_ROOT / "containerd.log", path_first=paths.RKE2_BIN)
    wait_until(lambda: (children.check(), _ctr("version").returncode == 0)[1], "containerd", timeout=60)


def _ctr(*arguments: str) -> subprocess.CompletedProcess:
    argv = [str(paths.RKE2_BIN / "ctr"), "-a", str(paths.CONTAINERD_SOCKET), "-n", "k8s.io", *arguments]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _decompressed(archive: Path, scratch: Path) -> Path | None:
    """The archive as a plain tar that ctr can import, or None when this stand-in cannot read it."""
    if archive.name.endswith(".tar"):
        return archive
    plain = scratch / archive.name.rsplit(".", 1)[0]
    if archive.name.endswith(".tar.gz"):
        with gzip.open(archive) as source, plain.open("wb") as target:
            shutil.copyfileobj(source, target)
        return plain
    if archive.name.endswith(".tar.zst") and shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "-d", "-f", str(archive), "-o", str(plain)], check=True)
        return plain
    return None


def import_images() -> None:
    """Imports every archive of agent/images, as RKE2 does at start."""
    if not paths.AGENT_IMAGES.is_dir():
        return
    for archive in sorted(paths.AGENT_IMAGES.iterdir()):
        with tempfile.TemporaryDirectory(dir=paths.AGENT_DIR) as scratch:
            plain = _decompressed(archive, Path(scratch))
            if plain is None:
                log(f"skipping {archive}: not an image archive this stand-in can read")
                continue
            result = _ctr("images", "import", str(plain))
        if result.returncode != 0:
            raise RuntimeError(f"importing {archive} failed: {result.stderr}")
        log(f"imported images from {archive}")


def start_kubelet(children: Children, settings: dict, name: str, address: str) -> None:
    defaults = KUBELET_DEFAULTS.format(dns=paths.CLUSTER_DNS, ca=paths.AGENT_DIR / "server-ca.crt")
    paths.KUBELET_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    paths.KUBELET_CONFIG.write_text(defaults)
    kubelet = {
        "config": paths.KUBELET_CONFIG,
        "kubeconfig": paths.KUBELET_KUBECONFIG,
        "hostname-override": name,
        "node-ip": address,
        "root-dir": "/var/lib/kubelet",
        "container-runtime-endpoint": f"unix://{paths.CONTAINERD_SOCKET}",
    }
    if labels := config.as_list(settings, "node-label"):
        kubelet["node-labels"] = ",".join(labels)
    if taints := config.as_list(settings, "node-taint"):
        kubelet["register-with-taints"] = ",".join(taints)
    # kubelet-arg applied to these as RKE2 applies it (k3s GetArgs): it replaces, appends (`+`) or prepends (`-`).
    extra = config.as_list(settings, "kubelet-arg")
    argv = [str(paths.KUBE_MULTI), "kubelet", *component_args.get_args(kubelet, extra)]
    children.start("kubelet", argv, paths.AGENT_LOGS / "kubelet.log")


def run(children: Children, settings: dict, client: Client) -> str:
    """Starts containerd and the kubelet; returns once the Node is registered with the API."""
    name, address = node_name(settings), node_ip(settings)
    write_cni_config(name)
    start_containerd(children, settings)
    import_images()
    start_kubelet(children, settings, name, address)
    wait_until(lambda: (children.check(), client.exists(f"/api/v1/nodes/{name}"))[1], f"node {name}", timeout=180)
    log(f"node {name} registered")
    return name
