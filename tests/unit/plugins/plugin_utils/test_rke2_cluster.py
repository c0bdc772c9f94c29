# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RKE2 cluster checked across hosts: each bad input names host, variable, problem and what is valid."""

import hashlib

import pytest
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_cluster import (
    check_cluster,
    config_document,
    containerd_cdi_problem,
    has_nvidia_runtime,
    installed_version,
    parse_sha256sums,
    read_airgap_folder,
    rke2_arch,
)

GROUPS = {"rke2_servers": ["cp-1", "cp-2"], "rke2_agents": ["gpu-1"], "gpu_nodes": ["gpu-1"]}


def view(host, **changes):
    base = {
        "host": host,
        "role": "server" if host.startswith("cp") else "agent",
        "version": "v1.33.5+rke2r1",
        "state": "present",
        "installed_version": "",
        "needs_install": True,
        "machine": "x86_64",
        "arch": "amd64",
        "cluster_init": host == "cp-1",
        "token_set": False,
        "api_endpoint": "",
        "address": {"cp-1": "192.0.2.10", "cp-2": "192.0.2.11"}.get(host, "192.0.2.21"),
        "release_url": "https://github.com/rancher/rke2/releases/download",
        "airgap_dir": "",
        "node_name": host,
        "node_ip": "",
        "tls_san": [],
        "cni": "canal",
        "node_labels": [],
        "node_taints": [],
        "kubelet_args": [],
        "default_runtime": "",
        "config_extra": {},
        "registries_keys": [],
        "wait_timeout": 600,
        "gpu_node": host.startswith("gpu"),
        "require_nvidia_runtime": host.startswith("gpu"),
        "nvidia_runtime": host.startswith("gpu"),
    }
    return {**base, **changes}


def check(*views, groups=None, play=None, **kwargs):
    play_hosts = play if play is not None else [v["host"] for v in views]
    return check_cluster(list(views), GROUPS if groups is None else groups, play_hosts, **kwargs)


def test_a_valid_cluster_joins_the_first_servers_address():
    result = check(view("cp-1"), view("cp-2"), view("gpu-1"))
    assert result == {
        "problems": [],
        "first_server": "cp-1",
        "api_endpoint": "192.0.2.10",
        "join_url": "https://192.0.2.10:9345",
        "api_url": "https://192.0.2.10:6443",
    }


def test_the_api_endpoint_replaces_the_first_servers_address():
    views = [view(h, api_endpoint="k8s.example.com") for h in ("cp-1", "cp-2", "gpu-1")]
    assert check(*views)["join_url"] == "https://k8s.example.com:9345"


def test_an_ipv6_endpoint_is_bracketed():
    views = [view(h, api_endpoint="2001:db8::10") for h in ("cp-1", "gpu-1")]
    assert check(*views)["api_url"] == "https://[2001:db8::10]:6443"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param(
            {"version": "v1.33.5"},
            "gpu-1: rke2_version: 'v1.33.5' is not an RKE2 release version; valid: vX.Y.Z+rke2rN as RKE2 tags its "
            "releases, e.g. v1.36.3+rke2r1",
            id="version-without-rke2-suffix",
        ),
        pytest.param(
            {"version": "1.33.5+rke2r1"},
            "gpu-1: rke2_version: '1.33.5+rke2r1' is not an RKE2 release version",
            id="version-without-v",
        ),
        pytest.param({"state": "installed"}, "gpu-1: rke2_state: 'installed' is not a state; valid: present or absent"),
        pytest.param(
            {"arch": "", "machine": "ppc64le"},
            "gpu-1: ansible_facts['architecture']: 'ppc64le': RKE2 publishes no release for it",
        ),
        pytest.param(
            {"release_url": "ftp://mirror"},
            "gpu-1: rke2_release_url: 'ftp://mirror' is not an http(s) URL",
        ),
        pytest.param(
            {"airgap_dir": "artifacts"},
            "gpu-1: rke2_airgap_dir: 'artifacts' is not an absolute path on the controller",
        ),
        pytest.param(
            {"node_name": "GPU_1"},
            "gpu-1: rke2_node_name: 'GPU_1' is not a Kubernetes node name",
        ),
        pytest.param({"node_ip": "10.0.0"}, "gpu-1: rke2_node_ip: '10.0.0' is not an IP address"),
        pytest.param(
            {"node_labels": ["gpu"]},
            "gpu-1: rke2_node_labels: 'gpu': not a key=value string; valid: a list of key=value node labels",
        ),
        pytest.param(
            {"node_taints": ["nvidia.com/gpu=true:NoRun"]},
            "gpu-1: rke2_node_taints: 'nvidia.com/gpu=true:NoRun': effect 'NoRun' is not one of NoSchedule, "
            "PreferNoSchedule, NoExecute",
        ),
        pytest.param(
            {"kubelet_args": ["--max-pods=250"]},
            "gpu-1: rke2_kubelet_args: '--max-pods=250': not a name=value string",
        ),
        pytest.param({"tls_san": "k8s.example.com"}, "gpu-1: rke2_tls_san: 'k8s.example.com' is not a list"),
        pytest.param({"registries_keys": ["mirror"]}, "gpu-1: rke2_registries: unknown keys ['mirror']"),
        pytest.param({"wait_timeout": 0}, "gpu-1: rke2_wait_timeout: 0 is not a number of seconds"),
        pytest.param(
            {"nvidia_runtime": False},
            "gpu-1: rke2_require_nvidia_runtime: nvidia-container-runtime is missing on this GPU node and RKE2 is not "
            "installed yet",
            id="gpu-node-without-toolkit",
        ),
        pytest.param(
            {"api_endpoint": "https://k8s.example.com:6443"},
            "gpu-1: rke2_api_endpoint: 'https://k8s.example.com:6443': give a host name or an IP address only",
        ),
    ],
)
def test_bad_host_variables_name_host_variable_and_what_is_valid(changes, expected):
    views = [view("cp-1", **{k: v for k, v in changes.items() if k == "api_endpoint"}), view("gpu-1", **changes)]
    problems = check(*views)["problems"]
    assert any(problem.startswith(expected) for problem in problems), problems


def test_a_gpu_node_without_toolkit_is_accepted_when_allowed_or_already_running():
    assert check(view("cp-1"), view("gpu-1", nvidia_runtime=False, require_nvidia_runtime=False))["problems"] == []
    running = view("gpu-1", nvidia_runtime=False, installed_version="v1.33.5+rke2r1", needs_install=False)
    assert check(view("cp-1"), running)["problems"] == []


def test_nvidia_default_runtime_outside_gpu_nodes_is_refused():
    problems = check(view("cp-1", default_runtime="nvidia"), view("gpu-1", default_runtime="nvidia"))["problems"]
    assert len(problems) == 1
    assert problems[0].startswith("cp-1: rke2_default_runtime: 'nvidia' on a host outside gpu_nodes")


def test_two_first_servers_are_both_named():
    problems = check(view("cp-1"), view("cp-2", cluster_init=True), view("gpu-1"))["problems"]
    assert problems == [
        f"{host}: rke2_cluster_init: true on 2 servers (cp-1, cp-2): each would start a cluster of its own; valid: "
        "true on exactly one server (default: the first host of rke2_servers), false on the others"
        for host in ("cp-1", "cp-2")
    ]


def test_no_first_server():
    problems = check(view("cp-1", cluster_init=False), view("cp-2"), view("gpu-1"))["problems"]
    assert problems == [
        "cp-1: rke2_cluster_init: false on every server of rke2_servers, so none initialises the cluster; valid: "
        "true on exactly one server (default: the first)"
    ]


def test_a_server_outside_the_run_counts_with_its_inventory_flag():
    result = check(view("cp-2", cluster_init=True), view("gpu-1", token_set=True), play=["cp-2", "gpu-1"])
    assert result["problems"][0].startswith("cp-1: rke2_cluster_init: true on 2 servers")
    declared = {"cp-1": {"cluster_init": False, "address": "192.0.2.10"}}
    result = check(view("cp-2", cluster_init=True), view("gpu-1"), play=["cp-2", "gpu-1"], declared=declared)
    assert result["problems"] == [] and result["first_server"] == "cp-2"


def test_a_host_in_both_groups():
    groups = {**GROUPS, "rke2_agents": ["gpu-1", "cp-2"]}
    problems = check(view("cp-1"), view("cp-2"), view("gpu-1"), groups=groups)["problems"]
    assert problems == [
        "cp-2: groups: in both rke2_servers and rke2_agents; valid: one of them (a server runs workloads as an "
        "agent does; taint it to keep them off)"
    ]


def test_a_host_in_neither_group():
    problems = check(view("cp-1"), view("gpu-1"), view("cpu-9"))["problems"]
    assert "cpu-9: groups: in neither rke2_servers nor rke2_agents" in problems[0]


def test_an_agent_without_any_server():
    problems = check(view("gpu-1"), groups={"rke2_agents": ["gpu-1"]})["problems"]
    assert problems == [
        "gpu-1: rke2_agents: no host in rke2_servers to join; valid: at least one server in the inventory's "
        "rke2_servers group"
    ]


def test_no_token_for_a_joining_node_when_the_first_server_is_not_in_the_run():
    problems = check(view("gpu-1"), play=["gpu-1"])["problems"]
    assert problems == [
        "gpu-1: rke2_token: not set, and the first server cp-1 is not in this run, so its node-token cannot be read; "
        "valid: rke2_token from the inventory (ansible-vault), or a run that includes cp-1"
    ]
    assert check(view("gpu-1", token_set=True), play=["gpu-1"])["problems"] == []
    joined = view("gpu-1", installed_version="v1.33.5+rke2r1", needs_install=False)
    assert check(joined, play=["gpu-1"])["problems"] == []


def test_joining_nodes_of_a_removed_first_server():
    problems = check(view("cp-1", state="absent"), view("gpu-1"))["problems"]
    assert problems == [
        "gpu-1: rke2_state: present, but the first server cp-1 is to be removed (rke2_state: absent), leaving nothing "
        "to join; valid: remove the joining nodes too, or keep the first server"
    ]


def test_endpoints_that_differ_between_hosts():
    problems = check(view("cp-1", api_endpoint="vip-a"), view("gpu-1", api_endpoint="vip-b"))["problems"]
    assert problems == [
        "cp-1: rke2_api_endpoint: 'vip-a', while other hosts have 'vip-b'; valid: one value for the whole cluster "
        "(group_vars/all)",
        "gpu-1: rke2_api_endpoint: 'vip-b', while other hosts have 'vip-a'; valid: one value for the whole cluster "
        "(group_vars/all)",
    ]


def _airgap(tmp_path, tarball=b"release", sums_for=None, images=()):
    (tmp_path / "rke2.linux-amd64.tar.gz").write_bytes(tarball)
    lines = [f"{hashlib.sha256(sums_for or tarball).hexdigest()}  rke2.linux-amd64.tar.gz"]
    for name, content, listed in images:
        (tmp_path / name).write_bytes(content)
        if listed:
            lines.append(f"{hashlib.sha256(content).hexdigest()}  {name}")
    (tmp_path / "sha256sum-amd64.txt").write_text("\n".join(lines) + "\n")
    return {str(tmp_path): read_airgap_folder(str(tmp_path))}


def test_airgap_folder_of_one_release_passes(tmp_path):
    artifacts = _airgap(tmp_path, images=[("rke2-images-core.linux-amd64.tar.zst", b"core", True)])
    assert check(view("cp-1", airgap_dir=str(tmp_path)), artifacts=artifacts)["problems"] == []


def test_airgap_tarball_whose_checksum_differs(tmp_path):
    artifacts = _airgap(tmp_path, tarball=b"tampered", sums_for=b"release")
    problems = check(view("cp-1", airgap_dir=str(tmp_path)), artifacts=artifacts)["problems"]
    found, published = hashlib.sha256(b"tampered").hexdigest(), hashlib.sha256(b"release").hexdigest()
    assert problems == [
        f"cp-1: rke2_airgap_dir: {tmp_path}/rke2.linux-amd64.tar.gz has sha256 {found}, "
        f"but sha256sum-amd64.txt says {published}: a corrupt or foreign file; valid: "
        "the file as published with that release"
    ]


def test_airgap_image_archive_missing_from_the_sums(tmp_path):
    artifacts = _airgap(tmp_path, images=[("rke2-images-canal.linux-amd64.tar.gz", b"canal", False)])
    problems = check(view("cp-1", airgap_dir=str(tmp_path)), artifacts=artifacts)["problems"]
    assert problems == [
        f"cp-1: rke2_airgap_dir: {tmp_path}/rke2-images-canal.linux-amd64.tar.gz is not listed in sha256sum-amd64.txt, "
        "so its checksum cannot be verified; valid: files of one release with that release's sums file"
    ]


def test_airgap_folder_without_sums_or_tarball(tmp_path):
    artifacts = {str(tmp_path): read_airgap_folder(str(tmp_path))}
    problems = check(view("cp-1", airgap_dir=str(tmp_path)), artifacts=artifacts)["problems"]
    assert problems[0].startswith(f"cp-1: rke2_airgap_dir: {tmp_path} has no sha256sum-amd64.txt")
    (tmp_path / "sha256sum-amd64.txt").write_text("")
    artifacts = {str(tmp_path): read_airgap_folder(str(tmp_path))}
    problems = check(view("cp-1", airgap_dir=str(tmp_path)), artifacts=artifacts)["problems"]
    assert problems[0].startswith(f"cp-1: rke2_airgap_dir: {tmp_path} has no rke2.linux-amd64.tar.gz")


def test_installed_hosts_skip_the_airgap_check(tmp_path):
    artifacts = _airgap(tmp_path, tarball=b"tampered", sums_for=b"release")
    installed = view("cp-1", airgap_dir=str(tmp_path), needs_install=False, installed_version="v1.33.5+rke2r1")
    assert check(installed, artifacts=artifacts)["problems"] == []


def test_config_of_the_first_server_and_of_a_joining_agent():
    cluster = check(view("cp-1", api_endpoint="vip"), view("gpu-1", api_endpoint="vip"))
    first = view(
        "cp-1", api_endpoint="vip", tls_san=["vip", "cp.example.com"], config_extra={"disable": ["rke2-ingress-nginx"]}
    )
    assert config_document(first, cluster) == {
        "node-name": "cp-1",
        "tls-san": ["vip", "cp.example.com"],
        "cni": "canal",
        "write-kubeconfig-mode": "0600",
        "disable": ["rke2-ingress-nginx"],
    }
    agent = view(
        "gpu-1",
        node_ip="192.0.2.21",
        node_labels=["gpu=true"],
        node_taints=["nvidia.com/gpu=true:NoSchedule"],
        kubelet_args=["max-pods=250"],
        default_runtime="nvidia",
        config_extra={"node-name": "override"},
    )
    assert config_document(agent, cluster) == {
        "node-name": "override",
        "node-ip": "192.0.2.21",
        "server": "https://vip:9345",
        "node-label": ["gpu=true"],
        "node-taint": ["nvidia.com/gpu=true:NoSchedule"],
        "kubelet-arg": ["max-pods=250"],
        "default-runtime": "nvidia",
    }


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("rke2 version v1.33.5+rke2r1 (8ee2d8a1a2b3)\ngo version go1.24.6 X:boringcrypto\n", "v1.33.5+rke2r1"),
        ("", ""),
        ("bash: /usr/local/bin/rke2: No such file or directory", ""),
    ],
)
def test_installed_version(output, expected):
    assert installed_version(output) == expected


def test_sha256sums_file():
    digest = "a" * 64
    assert parse_sha256sums(f"{digest}  rke2.linux-amd64.tar.gz\n{'B' * 64} *rke2-images.linux-amd64.txt\nnoise\n") == {
        "rke2.linux-amd64.tar.gz": digest,
        "rke2-images.linux-amd64.txt": "b" * 64,
    }


def test_arch():
    assert [rke2_arch(m) for m in ("x86_64", "aarch64", "ppc64le", None)] == ["amd64", "arm64", "", ""]


CONTAINERD_V3 = """version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']
  runtime_type = "io.containerd.runc.v2"

[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia'.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
  SystemdCgroup = true
"""
CONTAINERD_V2 = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia"]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia".options]
  BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""


def test_nvidia_runtime_in_the_containerd_config_rke2_generates():
    assert has_nvidia_runtime(CONTAINERD_V3)
    assert has_nvidia_runtime(CONTAINERD_V2)
    assert not has_nvidia_runtime(CONTAINERD_V3.replace("'nvidia'", "'runc'"))
    assert not has_nvidia_runtime(CONTAINERD_V2.replace("nvidia-container-runtime", "runc"))
    assert not has_nvidia_runtime("")


VERSION_3 = "version = 3\n[plugins.'io.containerd.cri.v1.runtime']\n  enable_selinux = false\n"
VERSION_2 = 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  enable_selinux = false\n'


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (VERSION_3, ""),
        (VERSION_3 + "  enable_cdi = true\n  cdi_spec_dirs = ['/run/cdi']\n", ""),
        (VERSION_3 + "  enable_cdi = false\n", "has enable_cdi = false, so containerd does not inject CDI devices"),
        (VERSION_3 + "  cdi_spec_dirs = ['/etc/cdi']\n", "cdi_spec_dirs ['/etc/cdi'] leaves out /var/run/cdi"),
        (VERSION_2, "no enable_cdi (containerd 1.7 defaults to false)"),
        (VERSION_2 + "  enable_cdi = true\n", ""),
        ("version = 4\n", "config version 4 is not one containerd 1.7 or 2.x reads (2 or 3)"),
        ("version = 3\n[plugins\n", "it is not valid TOML"),
    ],
)
def test_containerd_cdi_problem_reads_the_config_with_containerds_defaults(config, problem):
    found = containerd_cdi_problem(config)
    assert (found == "") if problem == "" else (problem in found)
