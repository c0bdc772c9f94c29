# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA device plugin config (v1): build it from gpuops_time_slicing or gpuops_mps and lint it strictly.

The rules below follow NVIDIA/k8s-device-plugin v0.20 (the version the GPU Operator ships):
api/config/v1/ (config.go, flags.go, consts.go, resources.go, replicas.go, sharing.go, imex.go)
and cmd/nvidia-device-plugin/main.go (validateFlags); the MPS limits follow cmd/mps-control-daemon/mps/device.go
and the README's "With CUDA MPS". The plugin parses its config non-strictly: a
misplaced or misspelt key is dropped without a word, so the linters here reject every key that
plugin version does not know.
"""

from __future__ import annotations

import difflib
import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DNS_SUBDOMAIN,
    FULL_GPU_RESOURCE,
    RESOURCE_PREFIX,
    SHARED_SUFFIX,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import (
    MAX_GPUS_PER_NODE,
    MAX_MIG_DEVICES_PER_GPU,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import INT64_MAX
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import DevicePluginConfigError

VARIABLE = "gpuops_time_slicing"
MPS_VARIABLE = "gpuops_mps"
CONFIG_VERSION = "v1"
# consts.go MaxResourceNameLength; resources.go NewResourceName applies it to the full name.
MAX_RESOURCE_NAME_LENGTH = 63
# replicas.go ReplicatedResource.UnmarshalJSON: "number of replicas must be >= 2".
MIN_REPLICAS = 2
# replicas.go reads replicas as a Go int and sets no maximum; internal/rm/device_map.go
# updateDeviceMapWithReplicas lists each replica as a device, which the kubelet advertises as an int64
# (bounds.INT64_MAX). A node has at most 32 GPUs of at most 8 MIG devices each (_gpu/limits.py), so with this
# many replicas no node's advertised quantity leaves the int64.
MAX_REPLICAS = INT64_MAX // (MAX_GPUS_PER_NODE * MAX_MIG_DEVICES_PER_GPU)
_TIME_SLICING_LIMIT = (MAX_REPLICAS, "so that no node advertises more devices than the int64 the kubelet counts")
# cmd/mps-control-daemon/mps/device.go assertReplicas/maxClients: the plugin's MPS daemon refuses more
# replicas than 48 per device at compute capability >= 7.5 (isAtLeastVolta compares with "v7.5"), else 16.
MAX_MPS_REPLICAS = 48
MAX_MPS_REPLICAS_BEFORE_7_5 = 16
MPS_48_CLIENTS_FROM = (7, 5)
# README "With CUDA MPS": the only resource MPS shares is nvidia.com/gpu, and only on full GPUs.
MPS_RESOURCE = FULL_GPU_RESOURCE
_MPS_SERVER_CLIENTS = "the most clients an MPS server serves per device"

MIG_STRATEGIES = ("none", "single", "mixed")  # consts.go MigStrategy*
DEVICE_LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")  # consts.go, strategy.go
DEVICE_ID_STRATEGIES = ("uuid", "index")  # consts.go DeviceIDStrategy*, main.go validateFlags
# consts.go AllocationPolicy* and main.go validateFlags of v0.20 (NVIDIA/k8s-device-plugin#1621).
SHARED_DEVICES_ALLOCATION_POLICIES = ("distributed", "packed")

TIME_SLICING_KEYS = ("replicas", "resources", "rename_by_default", "fail_requests_greater_than_one")
# failRequestsGreaterThanOne is not offered: api/config/v1/config.go forces it to true for MPS.
MPS_KEYS = ("replicas", "resources", "rename_by_default")
# Device-plugin spellings a user may write under gpuops_time_slicing, and what to write instead.
NATIVE_KEY_ADVICE = {
    "renameByDefault": "use 'rename_by_default'",
    "failRequestsGreaterThanOne": "use 'fail_requests_greater_than_one'",
    "sharing": "write 'replicas' and 'resources' directly under gpuops_time_slicing; the collection writes sharing",
    "timeSlicing": "write 'replicas' and 'resources' directly under gpuops_time_slicing; "
    "the collection writes sharing.timeSlicing",
    "mps": "gpuops_time_slicing configures time-slicing only; set gpuops_mps for MPS (not both on one node)",
    "flags": "the MIG strategy comes from gpuops_mig_strategy; other plugin flags are not set here",
    "migStrategy": "set gpuops_mig_strategy (none | single | mixed) instead",
    "version": "leave it out; the collection writes version: v1",
    "name": "per-resource replicas go in 'resources', a mapping such as {\"nvidia.com/gpu\": 4}",
    "rename": "the plugin ignores per-resource renames; use 'rename_by_default'",
    "devices": "the plugin ignores device selection and always shares every device of a resource",
}

# Every key the v1 config of plugin v0.20 knows, by the path of the mapping that holds it
# (config.go Config, flags.go CommandLineFlags and its Plugin/GFD parts, sharing.go, replicas.go, imex.go).
_FLAG_KEYS = (
    "migStrategy",
    "failOnInitError",
    "mpsRoot",
    "nvidiaDriverRoot",
    "nvidiaDevRoot",
    "gdrcopyEnabled",
    "gdsEnabled",
    "mofedEnabled",
    "useNodeFeatureAPI",
    "deviceDiscoveryStrategy",
    "plugin",
    "gfd",
)
_PLUGIN_FLAG_KEYS = (
    "passDeviceSpecs",
    "deviceListStrategy",
    "deviceIDStrategy",
    "cdiAnnotationPrefix",
    "nvidiaCTKPath",
    "containerDriverRoot",
    "kubeletSocket",
    "cdiFeatureFlags",
    "sharedDevicesAllocationPolicy",
)
_GFD_FLAG_KEYS = ("oneshot", "noTimestamp", "sleepInterval", "outputFile", "machineTypeFile")
_SHARING_KEYS = ("timeSlicing", "mps")
_REPLICATED_KEYS = ("renameByDefault", "failRequestsGreaterThanOne", "resources")
_REPLICATED_RESOURCE_KEYS = ("name", "replicas", "rename", "devices")
KNOWN_KEYS = {
    "": ("version", "flags", "resources", "sharing", "imex"),
    "flags": _FLAG_KEYS,
    "flags.plugin": _PLUGIN_FLAG_KEYS,
    "flags.gfd": _GFD_FLAG_KEYS,
    "sharing": _SHARING_KEYS,
    "sharing.timeSlicing": _REPLICATED_KEYS,
    "sharing.mps": _REPLICATED_KEYS,
    "sharing.timeSlicing.resources[]": _REPLICATED_RESOURCE_KEYS,
    "imex": ("channelIDs", "required"),
}
_BOOL_FLAGS = {
    "flags": (
        "failOnInitError",
        "gdrcopyEnabled",
        "gdsEnabled",
        "mofedEnabled",
        "useNodeFeatureAPI",
    ),
    "flags.plugin": ("passDeviceSpecs",),
    "flags.gfd": ("oneshot", "noTimestamp"),
}
_STRING_FLAGS = {
    "flags": ("mpsRoot", "nvidiaDriverRoot", "nvidiaDevRoot", "deviceDiscoveryStrategy"),
    "flags.plugin": ("cdiAnnotationPrefix", "nvidiaCTKPath", "containerDriverRoot", "kubeletSocket", "cdiFeatureFlags"),
    "flags.gfd": ("outputFile", "machineTypeFile"),
}

# The patterns below are used with fullmatch, as the Go code anchors them: re.match with "$" would let a
# trailing newline through.
# resources.go applies k8s.io/apimachinery IsDNS1123Subdomain (kube_names.DNS_SUBDOMAIN, at most 253
# characters) to the part after the prefix.
_DNS_SUBDOMAIN_MAX = 253
# What the plugin advertises: the full GPU, or a MIG device named after its profile
# ("mig-1g.10gb", "mig-1c.3g.20gb"); further dot-separated parts are let through.
_ADVERTISABLE = re.compile(r"nvidia\.com/(gpu|mig-([0-9]+c\.)?[0-9]+g\.[0-9]+gb(\.[a-z0-9]+)*)")
# Go time.ParseDuration, which GFD's sleepInterval (duration.go) goes through.
_GO_DURATION = re.compile(r"([0-9]+(\.[0-9]+)?(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _suggest(key, valid) -> str:
    close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{hint}valid keys: {', '.join(valid)}"


def plugin_resource_name(name):
    """NAME as the plugin reads it in its own config: resources.go NewResourceName (v0.20) puts
    'nvidia.com/' before a name that lacks it, so 'gpu' is 'nvidia.com/gpu'."""
    if isinstance(name, str) and not name.startswith(RESOURCE_PREFIX):
        return RESOURCE_PREFIX + name
    return name


def resource_name_problem(name) -> str | None:
    """Why the plugin would refuse NAME as a resource name (resources.go NewResourceName), or None."""
    if not isinstance(name, str):
        return f"resource name must be a string, got {type(name).__name__}"
    if not name.startswith(RESOURCE_PREFIX):
        return f"resource name must start with '{RESOURCE_PREFIX}', e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb"
    if len(name) > MAX_RESOURCE_NAME_LENGTH:
        return f"fully-qualified resource name must be {MAX_RESOURCE_NAME_LENGTH} characters or less ({len(name)})"
    short = name.split("/", 1)[1]
    if len(short) > _DNS_SUBDOMAIN_MAX or not DNS_SUBDOMAIN.fullmatch(short):
        return (
            f"'{short}' is not a DNS subdomain: lower-case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit"
        )
    if short.endswith(SHARED_SUFFIX):
        detected = name[: -len(SHARED_SUFFIX)]
        return f"name the resource as the plugin detects it ('{detected}'); '.shared' comes from renaming"
    return None


def _replicas_problem(value, limit=_TIME_SLICING_LIMIT, text_allowed=False) -> str | None:
    """LIMIT: (most replicas, why), None: checked by the caller. TEXT_ALLOWED: gpuops_time_slicing also takes "4";
    the plugin's own YAML needs an integer."""
    number = whole_number(value) if text_allowed else value if _is_int(value) else None
    if number is None and text_allowed:
        return f'must be a whole number such as 4 or "4", not {excerpt(value)}'
    if number is None:
        return f"must be a whole number (a YAML integer such as 4, not {excerpt(value)})"
    if number < MIN_REPLICAS:
        return f"number of replicas must be >= {MIN_REPLICAS}, got {excerpt(number)}"
    if limit is not None and number > limit[0]:
        return f"must be <= {limit[0]} ({limit[1]}), got {excerpt(number)}"
    return None


def _key_problems(value, variable, known, advice_by_key, misplaced) -> list[str]:
    """A problem for each key of VALUE outside KNOWN: the advice for a key the plugin's own config has, else
    the nearest known key."""
    problems = []
    for key in value:
        if key in known:
            continue
        advice = advice_by_key.get(key)
        if advice:
            problems.append(f"{variable}.{excerpt(key, bare=True)}: {misplaced}; {advice}")
        else:
            problems.append(f"{variable}.{excerpt(key, bare=True)}: unknown key; {_suggest(key, known)}")
    return problems


def lint_time_slicing(value) -> list[str]:
    """Every problem in a gpuops_time_slicing value, each naming its key path and what is valid.

    None means no time-slicing. At least one of 'replicas' (every resource the node advertises)
    and 'resources' (per-resource replicas, overriding 'replicas') must be given.
    """
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{VARIABLE}: must be a mapping such as {{replicas: 4}}, got {type(value).__name__}; "
            f"omit {VARIABLE} for no time-slicing"
        ]
    problems = _key_problems(
        value, VARIABLE, TIME_SLICING_KEYS, NATIVE_KEY_ADVICE, "device plugin key in the wrong place"
    )
    if "replicas" not in value and "resources" not in value:
        problems.append(f"{VARIABLE}: give 'replicas' (for every resource) and/or 'resources' (per resource)")
    if "replicas" in value:
        problem = _replicas_problem(value["replicas"], text_allowed=True)
        if problem and whole_number(value["replicas"]) == 1:
            problem += f"; 1 replica means no time-slicing: omit {VARIABLE}"
        if problem:
            problems.append(f"{VARIABLE}.replicas: {problem}")
    for key in ("rename_by_default", "fail_requests_greater_than_one"):
        if key in value and not isinstance(value[key], bool):
            problems.append(f"{VARIABLE}.{key}: must be true or false, got {excerpt(value[key])}")
    if "resources" in value:
        problems.extend(_lint_resource_overrides(value["resources"]))
    return problems


def _lint_resource_overrides(resources) -> list[str]:
    path = f"{VARIABLE}.resources"
    if not isinstance(resources, dict) or not resources:
        return [
            f"{path}: must be a non-empty mapping of resource name to replicas, "
            'e.g. {"nvidia.com/mig-1g.10gb": 3}; the collection writes the plugin\'s list form itself'
        ]
    problems = []
    for name, replicas in resources.items():
        where = f'{path}["{excerpt(name, bare=True)}"]'
        problem = resource_name_problem(name)
        if problem is None and not _ADVERTISABLE.fullmatch(name):
            problem = "not a resource the device plugin advertises: nvidia.com/gpu or nvidia.com/mig-<profile>"
        if problem:
            problems.append(f"{where}: {problem}")
        problem = _replicas_problem(replicas, text_allowed=True)
        if problem:
            problems.append(f"{where}: {problem}; to leave a resource unshared, list only the shared ones")
    return problems


def normalize_time_slicing(value):
    """A valid gpuops_time_slicing with its replicas as ints (inventories and -e may give "4")."""
    if not isinstance(value, dict):
        return value
    normalized = dict(value)
    if "replicas" in normalized:
        normalized["replicas"] = whole_number(normalized["replicas"])
    if isinstance(normalized.get("resources"), dict):
        normalized["resources"] = {name: whole_number(count) for name, count in normalized["resources"].items()}
    return normalized


def lint_time_slicing_for_node(time_slicing, resources) -> list[str]:
    """Per-resource overrides that match nothing the node advertises (RESOURCES: plugin names)."""
    if not isinstance(time_slicing, dict) or not isinstance(time_slicing.get("resources"), dict):
        return []
    advertised = sorted(set(resources))
    return [
        f'{VARIABLE}.resources["{excerpt(name, bare=True)}"]: this node does not advertise it; it advertises: '
        f"{', '.join(advertised) or 'nothing'}"
        for name in time_slicing["resources"]
        if name not in advertised
    ]


def replicas_for(resource: str, time_slicing: dict | None) -> int:
    """How many schedulable replicas the plugin makes of each device of RESOURCE (1: not shared)."""
    if not time_slicing:
        return 1
    overrides = time_slicing.get("resources") or {}
    if resource in overrides:
        return overrides[resource]
    return time_slicing.get("replicas", 1)


def advertised_resource(resource: str, time_slicing: dict | None) -> str:
    """The name the node advertises RESOURCE under: '<name>.shared' when shared and renamed."""
    if time_slicing and time_slicing.get("rename_by_default") and replicas_for(resource, time_slicing) > 1:
        return resource + SHARED_SUFFIX
    return resource


def build_device_plugin_config(
    mig_strategy: str, time_slicing: dict | None, resources: list[str], mps: dict | None = None
) -> dict:
    """The device plugin config v1 for a node advertising RESOURCES (names before any sharing).

    MPS (a gpuops_mps value) writes sharing.mps instead of sharing.timeSlicing; the two exclude each other.
    """
    if mig_strategy not in MIG_STRATEGIES:
        raise DevicePluginConfigError(
            f"mig_strategy must be one of {', '.join(MIG_STRATEGIES)}, got {excerpt(mig_strategy)}"
        )
    if mps is not None:
        return _build_mps_config(mig_strategy, mps, time_slicing)
    problems = lint_time_slicing(time_slicing)
    for name in resources:
        problem = resource_name_problem(name)
        if problem:
            problems.append(f"resources: {excerpt(name)}: {problem}")
    if problems:
        raise DevicePluginConfigError("; ".join(problems))
    time_slicing = normalize_time_slicing(time_slicing)
    config = {"version": CONFIG_VERSION, "flags": {"migStrategy": mig_strategy}}
    shared = [
        {"name": name, "replicas": replicas_for(name, time_slicing)}
        for name in sorted(set(resources))
        if replicas_for(name, time_slicing) > 1
    ]
    # replicas.go refuses an empty resources list, so a node with nothing to share gets no sharing.
    if shared:
        time_slicing_config = {}
        for ours, theirs in (
            ("rename_by_default", "renameByDefault"),
            ("fail_requests_greater_than_one", "failRequestsGreaterThanOne"),
        ):
            if ours in time_slicing:
                time_slicing_config[theirs] = time_slicing[ours]
        time_slicing_config["resources"] = shared
        config["sharing"] = {"timeSlicing": time_slicing_config}
    return config


def _build_mps_config(mig_strategy, mps, time_slicing):
    problems = lint_mps(mps) + lint_mps_for_node(mps, mig_strategy, (), time_slicing)
    if problems:
        raise DevicePluginConfigError("; ".join(problems))
    mps = normalize_mps(mps)
    section = {}
    if "rename_by_default" in mps:
        section["renameByDefault"] = mps["rename_by_default"]
    section["resources"] = [{"name": MPS_RESOURCE, "replicas": mps["replicas"]}]
    return {"version": CONFIG_VERSION, "flags": {"migStrategy": mig_strategy}, "sharing": {"mps": section}}


def _key_home(key) -> str | None:
    homes = [path or "the top level" for path, keys in KNOWN_KEYS.items() if key in keys]
    return " or ".join(homes) if homes else None


def _check_keys(mapping, path, known) -> list[str]:
    problems = []
    for key in mapping:
        if key in known:
            continue
        home = _key_home(key)
        where = f"{path}.{excerpt(key, bare=True)}" if path else excerpt(key, bare=True)
        if home:
            problems.append(f"{where}: misplaced key (the plugin ignores it here); it belongs under {home}")
        else:
            problems.append(f"{where}: unknown key (the plugin ignores it); {_suggest(key, known)}")
    return problems


def _mapping(doc, path, problems) -> dict | None:
    value = doc.get(path.rsplit(".", 1)[-1])
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.append(f"{path}: must be a mapping, got {type(value).__name__}")
        return None
    problems.extend(_check_keys(value, path, KNOWN_KEYS[path]))
    return value


def _lint_flags(doc, problems) -> str:
    flags = _mapping(doc, "flags", problems) or {}
    mig_strategy = flags.get("migStrategy", "none")
    if mig_strategy not in MIG_STRATEGIES:
        problems.append(f"flags.migStrategy: must be one of {', '.join(MIG_STRATEGIES)}, got {excerpt(mig_strategy)}")
    sections = {"flags": flags}
    sections["flags.plugin"] = _mapping(flags, "flags.plugin", problems) or {}
    sections["flags.gfd"] = _mapping(flags, "flags.gfd", problems) or {}
    for path, section in sections.items():
        for key in _BOOL_FLAGS.get(path, ()):
            if key in section and not isinstance(section[key], bool):
                problems.append(f"{path}.{key}: must be true or false, got {excerpt(section[key])}")
        for key in _STRING_FLAGS.get(path, ()):
            if key in section and not isinstance(section[key], str):
                problems.append(f"{path}.{key}: must be a string, got {excerpt(section[key])}")
    plugin = sections["flags.plugin"]
    if "deviceListStrategy" in plugin:
        # flags.go deviceListStrategyFlag: one string or a list of strings.
        strategies = plugin["deviceListStrategy"]
        strategies = [strategies] if isinstance(strategies, str) else strategies
        if (
            not isinstance(strategies, list)
            or not strategies
            or any(s not in DEVICE_LIST_STRATEGIES for s in strategies)
        ):
            problems.append(
                f"flags.plugin.deviceListStrategy: must be one or a list of {', '.join(DEVICE_LIST_STRATEGIES)}, "
                f"got {excerpt(plugin['deviceListStrategy'])}"
            )
    policy = plugin.get("sharedDevicesAllocationPolicy")
    if "sharedDevicesAllocationPolicy" in plugin and policy not in SHARED_DEVICES_ALLOCATION_POLICIES:
        # main.go validateFlags: "invalid --shared-devices-allocation-policy option", the plugin does not start.
        problems.append(
            "flags.plugin.sharedDevicesAllocationPolicy: must be one of "
            f"{', '.join(SHARED_DEVICES_ALLOCATION_POLICIES)}, got {excerpt(policy)}"
        )
    if "deviceIDStrategy" in plugin and plugin["deviceIDStrategy"] not in DEVICE_ID_STRATEGIES:
        problems.append(
            f"flags.plugin.deviceIDStrategy: must be one of {', '.join(DEVICE_ID_STRATEGIES)}, "
            f"got {excerpt(plugin['deviceIDStrategy'])}"
        )
    interval = sections["flags.gfd"].get("sleepInterval")
    if interval is not None and not (isinstance(interval, str) and _GO_DURATION.fullmatch(interval)):
        problems.append(f"flags.gfd.sleepInterval: must be a duration such as 60s or 1m30s, got {excerpt(interval)}")
    return mig_strategy


def _lint_replicated(section, path, limit, problems) -> None:
    """LIMIT: (most replicas, why), as _replicas_problem takes it."""
    for key in ("renameByDefault", "failRequestsGreaterThanOne"):
        if key in section and not isinstance(section[key], bool):
            problems.append(f"{path}.{key}: must be true or false, got {excerpt(section[key])}")
    resources = section.get("resources")
    # replicas.go: "no resources specified" when the list is missing or empty.
    if not isinstance(resources, list) or not resources:
        problems.append(f"{path}.resources: must be a non-empty list of {{name, replicas}}")
        return
    seen = set()
    for index, entry in enumerate(resources):
        where = f"{path}.resources[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be a mapping with name and replicas")
            continue
        problems.extend(_check_keys(entry, where, _REPLICATED_RESOURCE_KEYS))
        # The plugin reads a short name ("gpu") as nvidia.com/gpu (resources.go NewResourceName).
        written = entry.get("name")
        name = plugin_resource_name(written)
        problem = "missing" if name is None else resource_name_problem(name)
        if problem:
            problems.append(f"{where}.name: {problem}")
        elif name in seen:
            also = "" if written == name else f" ({name})"
            problems.append(f"{where}.name: {written}{also} is listed twice; give each resource once")
        seen.add(name)
        problem = "missing" if "replicas" not in entry else _replicas_problem(entry["replicas"], limit)
        if problem:
            problems.append(f"{where}.replicas: {problem}")
        # config.go DisableResourceNamingInConfig overwrites both with only a warning in the log.
        if "rename" in entry and plugin_resource_name(entry["rename"]) != f"{name}{SHARED_SUFFIX}":
            problems.append(f"{where}.rename: the plugin ignores custom names; use renameByDefault: true instead")
        if "devices" in entry and entry["devices"] != "all":
            problems.append(f"{where}.devices: the plugin ignores device selection and shares every device; drop it")


def mps_limit(compute_capability) -> int:
    """The most MPS replicas per GPU the plugin's MPS daemon accepts (48, or 16 below compute capability 7.5).

    An unknown compute capability (a product outside the catalog) gets the higher limit: the plan cannot tell.
    """
    if compute_capability is None:
        return MAX_MPS_REPLICAS
    major, _dot, minor = str(compute_capability).partition(".")
    version = (int(major), int(minor or 0))
    return MAX_MPS_REPLICAS if version >= MPS_48_CLIENTS_FROM else MAX_MPS_REPLICAS_BEFORE_7_5


_MPS_ALWAYS_ONE = (
    "MPS always refuses a request for more than one replica "
    "(api/config/v1/config.go sets failRequestsGreaterThanOne to true); drop it"
)
_MPS_WRITTEN_BY_COLLECTION = (
    "write 'replicas' and 'resources' directly under gpuops_mps; the collection writes sharing.mps"
)
_MPS_NATIVE_KEY_ADVICE = {
    "fail_requests_greater_than_one": _MPS_ALWAYS_ONE,
    "failRequestsGreaterThanOne": _MPS_ALWAYS_ONE,
    "renameByDefault": "use 'rename_by_default'",
    "sharing": _MPS_WRITTEN_BY_COLLECTION,
    "mps": _MPS_WRITTEN_BY_COLLECTION,
    "timeSlicing": "time-slicing is gpuops_time_slicing; a node uses one of the two",
    "migStrategy": "set gpuops_mig_strategy (none | single) instead",
}


def lint_mps(value, compute_capability=None) -> list[str]:
    """Every problem in a gpuops_mps value, each naming its key path and what is valid.

    COMPUTE_CAPABILITY ("8.9") of the node's GPUs sets the replica limit (mps_limit). None means no MPS.
    """
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            f"{MPS_VARIABLE}: must be a mapping such as {{replicas: 4}}, got {type(value).__name__}; "
            f"omit {MPS_VARIABLE} for no MPS"
        ]
    limit = mps_limit(compute_capability)
    problems = _key_problems(value, MPS_VARIABLE, MPS_KEYS, _MPS_NATIVE_KEY_ADVICE, "not a setting of gpuops_mps")
    if "replicas" not in value and "resources" not in value:
        problems.append(f"{MPS_VARIABLE}: give 'replicas' (MPS clients per GPU), e.g. {{replicas: 4}}")
    if "replicas" in value:
        problem = _mps_replicas_problem(value["replicas"], limit, compute_capability)
        if problem:
            problems.append(f"{MPS_VARIABLE}.replicas: {problem}")
    if "rename_by_default" in value and not isinstance(value["rename_by_default"], bool):
        problems.append(
            f"{MPS_VARIABLE}.rename_by_default: must be true or false, got {excerpt(value['rename_by_default'])}"
        )
    if "resources" in value:
        resources = value["resources"]
        if not isinstance(resources, dict) or not resources:
            problems.append(
                f'{MPS_VARIABLE}.resources: must be a mapping such as {{"{MPS_RESOURCE}": 4}}; '
                f"MPS shares {MPS_RESOURCE} only"
            )
            return problems
        for name, replicas in resources.items():
            where = f'{MPS_VARIABLE}.resources["{excerpt(name, bare=True)}"]'
            if name != MPS_RESOURCE:
                problems.append(
                    f"{where}: MPS shares only {MPS_RESOURCE} on full GPUs (the device plugin's README, "
                    "With CUDA MPS); MIG devices can be time-sliced with gpuops_time_slicing instead"
                )
                continue
            problem = _mps_replicas_problem(replicas, limit, compute_capability)
            if problem:
                problems.append(f"{where}: {problem}")
    return problems


def _mps_replicas_problem(value, limit, compute_capability):
    problem = _replicas_problem(value, None, text_allowed=True)
    if problem:
        if whole_number(value) == 1:
            problem += f"; 1 replica means no MPS: omit {MPS_VARIABLE}"
        return problem
    if whole_number(value) > limit:
        where = f"compute capability {compute_capability}" if compute_capability else "these GPUs"
        return (
            f"must be <= {limit}, the most MPS clients per GPU the device plugin's MPS daemon accepts on {where} "
            f"(48 from compute capability 7.5, else 16), got {excerpt(whole_number(value))}"
        )
    return None


def normalize_mps(value):
    """A valid gpuops_mps as the sharing settings replicas_for/advertised_resource read: replicas as ints,
    per-resource replicas folded in (MPS has one resource)."""
    if not isinstance(value, dict):
        return value
    normalized = normalize_time_slicing(value)
    overrides = normalized.get("resources") or {}
    replicas = overrides.get(MPS_RESOURCE, normalized.get("replicas"))
    result = {"replicas": replicas}
    if "rename_by_default" in normalized:
        result["rename_by_default"] = normalized["rename_by_default"]
    return result


def lint_mps_for_node(mps, mig_strategy, mig_enabled_gpus, time_slicing) -> list[str]:
    """What the device plugin refuses for a node with gpuops_mps (MIG_ENABLED_GPUS: indexes with MIG on)."""
    if mps is None:
        return []
    problems = []
    if time_slicing is not None:
        # README "Shared Access to GPUs": time-slicing and MPS are mutually exclusive; api/config/v1/sharing.go
        # SharingStrategy picks MPS whenever it is set, so the time-slicing settings would be ignored.
        problems.append(
            f"{MPS_VARIABLE}: gpuops_mps and gpuops_time_slicing are both set; a node shares its GPUs one way "
            "(the device plugin would use MPS and ignore time-slicing); keep one of them"
        )
    if mig_strategy == "mixed":
        # cmd/nvidia-device-plugin/main.go validateFlags: "using --mig-strategy=mixed is not supported with MPS".
        problems.append(
            f"{MPS_VARIABLE}: the device plugin refuses MPS with gpuops_mig_strategy mixed (it does not start); "
            "use gpuops_mig_strategy none or single, or gpuops_time_slicing on this node"
        )
    elif mig_enabled_gpus:
        # README "With CUDA MPS": sharing with MPS is not supported on devices with MIG enabled.
        problems.append(
            f"{MPS_VARIABLE}: MPS is not supported on GPUs with MIG enabled (GPU "
            f"{', '.join(map(str, mig_enabled_gpus))} of this node); use a MIG config that disables MIG "
            "(all-disabled) or gpuops_time_slicing"
        )
    return problems


def lint_device_plugin_config(doc, compute_capability: str | None = None) -> list[str]:
    """Every problem in a device plugin config v1 document, each naming its path.

    COMPUTE_CAPABILITY ("8.0"), when known, tightens the MPS replica limit on pre-Volta GPUs.
    """
    if not isinstance(doc, dict):
        return [f"config: must be a mapping (the device plugin config v1), got {type(doc).__name__}"]
    problems = _check_keys(doc, "", KNOWN_KEYS[""])
    # config.go parseConfigFrom: only "v1" is read.
    if doc.get("version") != CONFIG_VERSION:
        problems.append(f"version: must be {CONFIG_VERSION!r}, got {excerpt(doc.get('version'))}")
    mig_strategy = _lint_flags(doc, problems)
    if doc.get("resources") is not None:
        problems.append("resources: the plugin ignores custom resource patterns (config.go); drop it")
    imex = _mapping(doc, "imex", problems) or {}
    # imex.go AssertChannelIDsValid.
    if "channelIDs" in imex and imex["channelIDs"] not in ([], [0]):
        problems.append(f"imex.channelIDs: must be [] or [0], got {excerpt(imex['channelIDs'])}")
    if "required" in imex and not isinstance(imex["required"], bool):
        problems.append(f"imex.required: must be true or false, got {excerpt(imex['required'])}")
    sharing = _mapping(doc, "sharing", problems) or {}
    time_slicing = _mapping(sharing, "sharing.timeSlicing", problems)
    mps = _mapping(sharing, "sharing.mps", problems)
    if time_slicing is not None:
        _lint_replicated(time_slicing, "sharing.timeSlicing", _TIME_SLICING_LIMIT, problems)
    if mps is not None:
        _lint_replicated(mps, "sharing.mps", (mps_limit(compute_capability), _MPS_SERVER_CLIENTS), problems)
        for index, entry in enumerate(mps.get("resources") or []):
            name = plugin_resource_name(entry.get("name")) if isinstance(entry, dict) else None
            if isinstance(name, str) and name != MPS_RESOURCE:
                problems.append(
                    f"sharing.mps.resources[{index}].name: MPS shares only {MPS_RESOURCE}, "
                    f"got {excerpt(name, bare=True)}"
                )
        if mps.get("failRequestsGreaterThanOne") is False:
            # config.go: set to true for MPS whatever the file says.
            problems.append("sharing.mps.failRequestsGreaterThanOne: the plugin forces it to true for MPS; drop it")
        # main.go validateFlags.
        if mig_strategy == "mixed":
            problems.append("sharing.mps: the plugin refuses MPS with flags.migStrategy mixed; use none or single")
        # sharing.go SharingStrategy: MPS wins whenever it is set.
        if time_slicing is not None:
            problems.append("sharing: both mps and timeSlicing are set; the plugin uses mps only, keep one of them")
    return problems
