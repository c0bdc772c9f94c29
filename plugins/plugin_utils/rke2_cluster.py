# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RKE2 cluster of an inventory, checked across hosts on the controller before any host changes.

Each host of the run first records what it wants and what it has (its "view": the rke2_* variables
that matter here, its architecture, the RKE2 version installed, whether nvidia-container-runtime is
there). `check_cluster` looks at every view at once, with the inventory's groups, and returns every
problem (naming host, variable, what is wrong and what would be valid) plus the facts every host
needs to join: which server initialises the cluster and the address the others join.
No secret enters here: a view says whether rke2_token is set, never what it is.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import tomllib

from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import label_value_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentError
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_feature_gates import (
    VARIABLE as FEATURE_GATES_VARIABLE,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils.rke2_feature_gates import (
    problems as feature_gate_problems,
)

VERSION_PATTERN = re.compile(r"^v\d+\.\d+\.\d+\+rke2r\d+$")
VERSION_EXAMPLE = "v1.36.3+rke2r1"
# `rke2 --version` prints "rke2 version v1.36.3+rke2r1 (8ee2d8a1...)" on its first line.
_VERSION_OUTPUT = re.compile(r"^rke2 version (v\d+\.\d+\.\d+\+rke2r\d+)\b", re.MULTILINE)
STATES = ("present", "absent")
# Machine names Ansible reports (ansible_facts['architecture']) -> RKE2's artifact suffix.
ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
REGISTRIES_KEYS = ("mirrors", "configs")
SERVER_GROUP, AGENT_GROUP, GPU_GROUP = "rke2_servers", "rke2_agents", "gpu_nodes"
SUPERVISOR_PORT, API_PORT = 9345, 6443
# Kubernetes node names: DNS-1123 subdomains.
_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$")
# Label keys: an optional DNS prefix and "/", then a name.
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# Files of a release folder worth hashing: tarballs and image archives of any architecture.
_RELEASE_FILE = re.compile(r"(rke2|rke2-images[-.A-Za-z0-9]*)\.linux-[a-z0-9]+\.tar(\.gz|\.zst)?")
_FLAG_ARG = re.compile(r"^[a-z0-9][-a-z0-9]*=.*$")


def rke2_arch(machine):
    """RKE2's name for the machine architecture (amd64, arm64), or "" when RKE2 publishes no artifact for it."""
    return ARCHES.get(str(machine or ""), "")


def installed_version(output):
    """The version `rke2 --version` printed, or "" when it printed none (RKE2 not installed)."""
    found = _VERSION_OUTPUT.search(output or "")
    return found.group(1) if found else ""


def parse_sha256sums(text):
    """{file name: sha256} from a sha256sum file (`HASH  NAME` or `HASH *NAME` per line)."""
    sums = {}
    for line in (text or "").splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and re.fullmatch(r"[0-9a-fA-F]{64}", parts[0]):
            sums[parts[1].lstrip("*").strip()] = parts[0].lower()
    return sums


def artifact_names(arch):
    """The release files RKE2's install script uses for ARCH: tarball and sums file (the version is in the
    URL path or the folder, not in the names)."""
    return {"tarball": f"rke2.linux-{arch}.tar.gz", "sums": f"sha256sum-{arch}.txt"}


def is_image_archive(name, arch):
    """Whether NAME is an RKE2 image archive of ARCH (rke2-images*.linux-ARCH.tar, .tar.gz or .tar.zst)."""
    return (
        re.fullmatch(rf"rke2-images[-.A-Za-z0-9]*\.linux-{re.escape(arch)}\.tar(\.gz|\.zst)?", name or "") is not None
    )


# The runtime RKE2 adds to the containerd config it generates when it finds nvidia-container-runtime:
# [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia'.options] (containerd 2, config
# version 3) or [plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia".options] (version 2),
# followed by BinaryName = ".../nvidia-container-runtime".
_NVIDIA_RUNTIME = re.compile(
    r"""runtimes\.['"]?nvidia['"]?\.options\][^\[]*BinaryName\s*=\s*['"][^'"]*nvidia-container-runtime['"]"""
)


def has_nvidia_runtime(containerd_config):
    """Whether a containerd config.toml defines a runtime named nvidia that runs nvidia-container-runtime."""
    return _NVIDIA_RUNTIME.search(containerd_config or "") is not None


# Where containerd's CRI plugin finds CDI specifications, and whether it injects CDI devices, when config.toml
# says nothing: containerd 2.x internal/cri/config/config_unix.go DefaultRuntimeConfig (EnableCDI true,
# CDISpecDirs /etc/cdi and /var/run/cdi) for config version 3; containerd 1.7 (version 2) has enable_cdi false.
# k3s' config-v3.toml.tmpl sets neither, so RKE2 v1.33+ injects CDI devices unless a template turns it off.
_CRI_RUNTIME_SECTIONS = {3: "io.containerd.cri.v1.runtime", 2: "io.containerd.grpc.v1.cri"}
_CDI_DEFAULT_DIRS = ["/etc/cdi", "/var/run/cdi"]
# The device plugin writes its specification there (k8s-device-plugin internal/cdi/cdi.go cdiRoot), and the
# toolkit's nvidia-cdi-refresh.service writes /var/run/cdi/nvidia.yaml.
CDI_SPEC_DIR = "/var/run/cdi"


def containerd_cdi_problem(containerd_config):
    """Why containerd with config.toml CONTAINERD_CONFIG would not inject the device plugin's CDI devices, or ""."""
    try:
        config = tomllib.loads(containerd_config or "")
    except tomllib.TOMLDecodeError as error:
        return f"it is not valid TOML ({error})"
    version = config.get("version", 2)
    section_name = _CRI_RUNTIME_SECTIONS.get(version)
    if section_name is None:
        return f"config version {version!r} is not one containerd 1.7 or 2.x reads (2 or 3)"
    section = config.get("plugins", {}).get(section_name, {})
    where = f"[plugins.'{section_name}']"
    if not section.get("enable_cdi", version >= 3):
        setting = (
            "enable_cdi = false" if "enable_cdi" in section else "no enable_cdi (containerd 1.7 defaults to false)"
        )
        return f"{where} has {setting}, so containerd does not inject CDI devices"
    spec_dirs = section.get("cdi_spec_dirs", _CDI_DEFAULT_DIRS)
    if not any(os.path.normpath(folder) in (CDI_SPEC_DIR, "/run/cdi") for folder in spec_dirs):
        return f"{where} cdi_spec_dirs {spec_dirs} leaves out {CDI_SPEC_DIR}, where the device plugin writes them"
    return ""


def endpoint_problem(value):
    """Why VALUE is not a host name or IP address an RKE2 node can join, or ""."""
    text = str(value)
    if "://" in text or "/" in text:
        return "give a host name or an IP address only, without scheme or path (RKE2's ports 9345 and 6443 are added)"
    try:
        ipaddress.ip_address(text.strip("[]"))
        return ""
    except ValueError:
        pass
    if not _HOSTNAME.match(text):
        return "not a host name or an IP address"
    return ""


def url_host(address):
    """ADDRESS as the host part of a URL (IPv6 addresses in brackets)."""
    try:
        if ipaddress.ip_address(str(address).strip("[]")).version == 6:
            return f"[{str(address).strip('[]')}]"
    except ValueError:
        pass
    return str(address)


def _list_problems(host, variable, value, item_check, valid):
    if not isinstance(value, list):
        return [IntentError(host, variable, f"{value!r} is not a list; valid: {valid}")]
    return [
        IntentError(host, variable, f"{item!r}: {why}; valid: {valid}")
        for item in value
        for why in [item_check(item)]
        if why
    ]


def _label_problem(item):
    if not isinstance(item, str) or "=" not in item:
        return "not a key=value string"
    key, value = item.split("=", 1)
    if not _LABEL_KEY.match(key) or len(key.rsplit("/", 1)[-1]) > 63:
        return f"{key!r} is not a label key"
    why = label_value_problem(value)
    return f"{value!r} is not a label value: it {why}" if why else ""


def _taint_problem(item):
    if not isinstance(item, str) or ":" not in item:
        return "not a key[=value]:Effect string"
    head, effect = item.rsplit(":", 1)
    if effect not in TAINT_EFFECTS:
        return f"effect {effect!r} is not one of {', '.join(TAINT_EFFECTS)}"
    return _label_problem(head if "=" in head else head + "=")


def _string_problem(item):
    return "" if isinstance(item, str) and item else "not a non-empty string"


def _flag_problem(item):
    return "" if isinstance(item, str) and _FLAG_ARG.match(item) else "not a name=value string"


def version_problem(version):
    """Why VERSION is not an RKE2 release tag, or "" (the plan checks rke2_version with it too)."""
    version = str(version)
    if VERSION_PATTERN.match(version):
        return ""
    return (
        f"{version!r} is not an RKE2 release version; valid: vX.Y.Z+rke2rN as RKE2 tags its releases, "
        f"e.g. {VERSION_EXAMPLE}"
    )


def _version_problems(host, view):
    problem = version_problem(view.get("version", ""))
    return [IntentError(host, "rke2_version", problem)] if problem else []


def _state_problems(host, view):
    if view.get("state") in STATES:
        return []
    return [IntentError(host, "rke2_state", f"{view.get('state')!r} is not a state; valid: present or absent")]


def _arch_problems(host, view):
    if view.get("arch"):
        return []
    return [
        IntentError(
            host,
            "ansible_facts['architecture']",
            f"{view.get('machine')!r}: RKE2 publishes no release for it; valid: {', '.join(sorted(ARCHES))}",
        )
    ]


def _release_source_problems(host, view):
    """Where the release comes from: an air-gap folder on the controller, else a download URL."""
    found = []
    airgap_dir = str(view.get("airgap_dir") or "")
    if airgap_dir and not airgap_dir.startswith("/"):
        found.append(
            IntentError(
                host,
                "rke2_airgap_dir",
                f"{airgap_dir!r} is not an absolute path on the controller; "
                'valid: an absolute path, or "" to download from rke2_release_url',
            )
        )
    release_url = str(view.get("release_url") or "")
    if not airgap_dir and not re.match(r"^https?://[^\s]+$", release_url):
        found.append(
            IntentError(
                host,
                "rke2_release_url",
                f"{release_url!r} is not an http(s) URL; valid: RKE2's release "
                "download URL (https://github.com/rancher/rke2/releases/download) or a mirror of it",
            )
        )
    return found


def _api_endpoint_problems(host, view):
    endpoint = view.get("api_endpoint") or ""
    if not endpoint or not endpoint_problem(endpoint):
        return []
    return [
        IntentError(
            host,
            "rke2_api_endpoint",
            f"{endpoint!r}: {endpoint_problem(endpoint)}; valid: the "
            'host name or address of the VIP or load balancer in front of the servers, or ""',
        )
    ]


def _node_name_problems(host, view):
    node_name = str(view.get("node_name") or "")
    if len(node_name) <= 253 and _NODE_NAME.match(node_name):
        return []
    return [
        IntentError(
            host,
            "rke2_node_name",
            f"{node_name!r} is not a Kubernetes node name; valid: lower-case "
            "letters, digits, '-' and '.' (a DNS subdomain); set rke2_node_name when the inventory "
            "name is not one",
        )
    ]


def _node_ip_problems(host, view):
    node_ip = view.get("node_ip") or ""
    if not node_ip:
        return []
    try:
        ipaddress.ip_address(str(node_ip))
    except ValueError:
        return [
            IntentError(
                host,
                "rke2_node_ip",
                f'{node_ip!r} is not an IP address; valid: an address of this host, or "" to let RKE2 choose',
            )
        ]
    return []


# The list variables of a host: (variable, key of the view, check of one item, what is valid).
_LIST_VARIABLES = (
    ("rke2_node_labels", "node_labels", _label_problem, "a list of key=value node labels"),
    (
        "rke2_node_taints",
        "node_taints",
        _taint_problem,
        f"a list of key=value:Effect taints, Effect one of {', '.join(TAINT_EFFECTS)}",
    ),
    (
        "rke2_kubelet_args",
        "kubelet_args",
        _flag_problem,
        "a list of kubelet flags without dashes, name=value (max-pods=250)",
    ),
    ("rke2_tls_san", "tls_san", _string_problem, "a list of host names or addresses"),
)


def _list_variable_problems(host, view):
    found = []
    for variable, key, item_check, valid in _LIST_VARIABLES:
        found += _list_problems(host, variable, view.get(key), item_check, valid)
    return found


def _config_extra_problems(host, view):
    if isinstance(view.get("config_extra"), dict):
        return []
    return [IntentError(host, "rke2_config_extra", "is not a mapping; valid: RKE2 config.yaml keys and values")]


def _feature_gates_problems(host, view):
    lines = feature_gate_problems(view.get("feature_gates"))
    return [IntentError(host, FEATURE_GATES_VARIABLE, line) for line in lines]


def _registries_problems(host, view):
    # Only the keys of registries.yaml reach the view: its values may hold credentials.
    registries_keys = view.get("registries_keys")
    extra = sorted(set(registries_keys) - set(REGISTRIES_KEYS)) if isinstance(registries_keys, list) else []
    if isinstance(registries_keys, list) and not extra:
        return []
    return [
        IntentError(
            host,
            "rke2_registries",
            f"{'unknown keys ' + repr(extra) if extra else 'not a mapping'}; "
            "valid: the whole registries.yaml of RKE2, a mapping with mirrors and configs",
        )
    ]


def _wait_timeout_problems(host, view):
    timeout = view.get("wait_timeout")
    if isinstance(timeout, str) and timeout.isdigit():
        timeout = int(timeout)
    if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
        return []
    return [
        IntentError(
            host,
            "rke2_wait_timeout",
            f"{timeout!r} is not a number of seconds; valid: a whole number greater than 0",
        )
    ]


def _default_runtime_problems(host, view):
    runtime = str(view.get("default_runtime") or "")
    if not runtime.startswith("nvidia") or view.get("gpu_node"):
        return []
    return [
        IntentError(
            host,
            "rke2_default_runtime",
            f"{runtime!r} on a host outside gpu_nodes, whose "
            'containerd has no nvidia runtime, so no pod would start there; valid: "" on '
            "hosts without GPUs (set it in group_vars/gpu_nodes)",
        )
    ]


def _nvidia_runtime_problems(host, view):
    """A GPU node that needs the nvidia runtime before RKE2's first start, and lacks it."""
    missing = (
        view.get("gpu_node")
        and view.get("require_nvidia_runtime")
        and not view.get("installed_version")
        and not view.get("nvidia_runtime")
    )
    if not missing:
        return []
    return [
        IntentError(
            host,
            "rke2_require_nvidia_runtime",
            "nvidia-container-runtime is missing on this GPU node and RKE2 is not installed yet: "
            "RKE2 adds the nvidia runtime to containerd only when it finds the toolkit at start. "
            "Run playbooks/gpu_hosts.yml first (it installs the NVIDIA Container Toolkit), or set "
            "rke2_require_nvidia_runtime: false to start RKE2 without GPU support",
        )
    ]


# The checks of a host RKE2 is to be on (rke2_state present), in the order their problems are reported.
_PRESENT_HOST_CHECKS = (
    _arch_problems,
    _release_source_problems,
    _api_endpoint_problems,
    _node_name_problems,
    _node_ip_problems,
    _list_variable_problems,
    _config_extra_problems,
    _feature_gates_problems,
    _registries_problems,
    _wait_timeout_problems,
    _default_runtime_problems,
    _nvidia_runtime_problems,
)


def host_problems(view):
    """Problems of one host's own variables (VIEW: what preflight recorded on that host)."""
    host = view["host"]
    found = _version_problems(host, view) + _state_problems(host, view)
    if view.get("state") != "present":
        return found
    for check in _PRESENT_HOST_CHECKS:
        found += check(host, view)
    return found


def _first_servers(views, servers, declared):
    """The servers that initialise the cluster: rke2_cluster_init of the hosts of the run, else the inventory's."""
    first = []
    for server in servers:
        if server in views:
            flag = views[server].get("cluster_init")
        else:
            flag = (declared.get(server) or {}).get("cluster_init")
            if flag is None:
                flag = server == servers[0]
        if _true(flag):
            first.append(server)
    return first


def _true(value):
    return value is True or str(value).lower() in ("true", "yes", "1", "on")


def check_cluster(views, groups, play_hosts, declared=None, artifacts=None):
    """Every problem of the run's hosts, taken together, and what joining needs.

    VIEWS: [{host, version, state, cluster_init, token_set, ...}] of the hosts of this run (preflight).
    GROUPS: the inventory's groups. PLAY_HOSTS: the hosts of this run. DECLARED: {server: {cluster_init,
    address}} from the inventory, for servers outside the run. ARTIFACTS: {folder: read_airgap_folder(folder)}
    for the air-gap folders on the controller that installing hosts copy from.
    Returns {"problems": [str], "first_server", "api_endpoint", "join_url", "api_url"}.
    """
    by_host = {view["host"]: view for view in views}
    declared = declared or {}
    servers, agents = list(groups.get(SERVER_GROUP) or []), list(groups.get(AGENT_GROUP) or [])
    problems = []
    for host in sorted(set(servers) & set(agents)):
        problems.append(
            IntentError(
                host,
                "groups",
                f"in both {SERVER_GROUP} and {AGENT_GROUP}; valid: one of them (a "
                "server runs workloads as an agent does; taint it to keep them off)",
            )
        )
    for host in play_hosts:
        if host not in servers and host not in agents:
            problems.append(
                IntentError(
                    host,
                    "groups",
                    f"in neither {SERVER_GROUP} nor {AGENT_GROUP}, so RKE2 does not "
                    "know what to run there; valid: a member of one of them",
                )
            )
    for view in views:
        problems += host_problems(view)

    first = _first_servers(by_host, servers, declared)
    first_server = first[0] if len(first) == 1 else ""
    if len(first) > 1:
        for host in first:
            problems.append(
                IntentError(
                    host,
                    "rke2_cluster_init",
                    f"true on {len(first)} servers ({', '.join(first)}): "
                    "each would start a cluster of its own; valid: true on exactly one server "
                    f"(default: the first host of {SERVER_GROUP}), false on the others",
                )
            )
    elif servers and not first:
        problems.append(
            IntentError(
                servers[0],
                "rke2_cluster_init",
                f"false on every server of {SERVER_GROUP}, so none "
                "initialises the cluster; valid: true on exactly one server (default: the first)",
            )
        )

    present = [v for v in views if v.get("state") == "present"]
    joining = [v for v in present if v["host"] != first_server]
    if not servers:
        for view in present:
            problems.append(
                IntentError(
                    view["host"],
                    AGENT_GROUP,
                    f"no host in {SERVER_GROUP} to join; valid: at "
                    f"least one server in the inventory's {SERVER_GROUP} group",
                )
            )
    first_view = by_host.get(first_server)
    if first_view and first_view.get("state") == "absent":
        for view in joining:
            problems.append(
                IntentError(
                    view["host"],
                    "rke2_state",
                    f"present, but the first server {first_server} is "
                    "to be removed (rke2_state: absent), leaving nothing to join; valid: remove the "
                    "joining nodes too, or keep the first server",
                )
            )
    if first_server and first_server not in play_hosts:
        for view in joining:
            if not view.get("token_set") and not view.get("installed_version"):
                problems.append(
                    IntentError(
                        view["host"],
                        "rke2_token",
                        f"not set, and the first server {first_server} is "
                        "not in this run, so its node-token cannot be read; valid: rke2_token from "
                        "the inventory (ansible-vault), or a run that includes " + first_server,
                    )
                )

    endpoints = sorted({str(v.get("api_endpoint") or "") for v in present})
    if len(endpoints) > 1:
        for view in present:
            problems.append(
                IntentError(
                    view["host"],
                    "rke2_api_endpoint",
                    f"{view.get('api_endpoint')!r}, while other "
                    f"hosts have {', '.join(repr(e) for e in endpoints if e != view.get('api_endpoint'))}"
                    "; valid: one value for the whole cluster (group_vars/all)",
                )
            )
    problems += artifact_problems(present, artifacts or {})

    endpoint = endpoints[0] if len(endpoints) == 1 and endpoints[0] else ""
    if not endpoint and first_server:
        endpoint = (
            (first_view or {}).get("address") or (declared.get(first_server) or {}).get("address") or first_server
        )
    host = url_host(endpoint) if endpoint else ""
    return {
        "problems": [str(p) for p in _unique(problems)],
        "first_server": first_server,
        "api_endpoint": endpoint,
        "join_url": f"https://{host}:{SUPERVISOR_PORT}" if host else "",
        "api_url": f"https://{host}:{API_PORT}" if host else "",
    }


def artifact_problems(views, artifacts):
    """Problems of the air-gap folders the installing hosts of VIEWS copy from (checked on the controller)."""
    found = []
    for view in views:
        folder = str(view.get("airgap_dir") or "")
        arch = view.get("arch") or ""
        if not folder or not arch or not view.get("needs_install") or folder not in artifacts:
            continue
        info = artifacts[folder]
        names = artifact_names(arch)
        sums_text = (info.get("sums") or {}).get(names["sums"])
        if sums_text is None:
            found.append(
                IntentError(
                    view["host"],
                    "rke2_airgap_dir",
                    f"{folder} has no {names['sums']}; valid: a folder "
                    f"with the release's {names['sums']}, {names['tarball']} and optional image archives",
                )
            )
            continue
        sums, files = parse_sha256sums(sums_text), info.get("files") or {}
        wanted = [names["tarball"], *sorted(n for n in files if is_image_archive(n, arch))]
        for name in wanted:
            if name not in files:
                found.append(
                    IntentError(
                        view["host"],
                        "rke2_airgap_dir",
                        f"{folder} has no {name}; valid: the release's {name} for rke2_version {view.get('version')}",
                    )
                )
            elif name not in sums:
                found.append(
                    IntentError(
                        view["host"],
                        "rke2_airgap_dir",
                        f"{folder}/{name} is not listed in "
                        f"{names['sums']}, so its checksum cannot be verified; valid: files of one "
                        "release with that release's sums file",
                    )
                )
            elif files[name] != sums[name]:
                found.append(
                    IntentError(
                        view["host"],
                        "rke2_airgap_dir",
                        f"{folder}/{name} has sha256 {files[name]}, "
                        f"but {names['sums']} says {sums[name]}: a corrupt or foreign file; valid: the "
                        "file as published with that release",
                    )
                )
    return found


def read_airgap_folder(folder):
    """{"sums": {sums file name: text}, "files": {name: sha256}} of the RKE2 release files in FOLDER, a folder
    on the controller (the tarballs and image archives of every architecture are hashed, nothing else)."""
    info = {"sums": {}, "files": {}}
    if not os.path.isdir(folder):
        return info
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        if re.fullmatch(r"sha256sum-[a-z0-9]+\.txt", name):
            with open(path, encoding="utf-8") as handle:
                info["sums"][name] = handle.read()
        elif _RELEASE_FILE.fullmatch(name):
            info["files"][name] = _sha256(path)
    return info


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unique(problems):
    seen, out = set(), []
    for problem in problems:
        if problem not in seen:
            seen.add(problem)
            out.append(problem)
    return out


def config_document(view, cluster):
    """RKE2's config.yaml for one host, as a mapping (rke2_config_extra merged last; no token in it)."""
    config = {"node-name": view["node_name"]}
    if view.get("node_ip"):
        config["node-ip"] = view["node_ip"]
    if view["host"] != cluster.get("first_server") and cluster.get("join_url"):
        config["server"] = cluster["join_url"]
    if view.get("role") == "server":
        sans = [cluster["api_endpoint"]] if cluster.get("api_endpoint") else []
        sans += [s for s in view.get("tls_san") or [] if s not in sans]
        if sans:
            config["tls-san"] = sans
        config["cni"] = view.get("cni")
        config["write-kubeconfig-mode"] = "0600"
    for key, variable in (
        ("node-label", "node_labels"),
        ("node-taint", "node_taints"),
        ("kubelet-arg", "kubelet_args"),
    ):
        if view.get(variable):
            config[key] = list(view[variable])
    if view.get("default_runtime"):
        config["default-runtime"] = view["default_runtime"]
    config.update(view.get("config_extra") or {})
    return config
