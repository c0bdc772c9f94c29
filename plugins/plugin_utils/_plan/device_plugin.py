# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NVIDIA device plugin config (v1): the ways its `sharing` shares a GPU, the config built for a node, and its
strict linter.

The rules below follow NVIDIA/k8s-device-plugin v0.20 (the version the GPU Operator ships):
api/config/v1/ (config.go, flags.go, consts.go, resources.go, replicas.go, sharing.go, imex.go)
and cmd/nvidia-device-plugin/main.go (validateFlags). The plugin parses its config non-strictly: a
misplaced or misspelt key is dropped without a word, so the linter here rejects every key that
plugin version does not know. What each way of sharing takes is its own module's (time_slicing.py, mps.py);
the rules of one shared resource are shared_resources.py's.
"""

from __future__ import annotations

import re

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import SHARED_SUFFIX
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin_sharing import (
    PluginNode,
    valid_keys_hint,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import DevicePluginConfigError
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.mps import MPS, MPS_RESOURCE
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.shared_resources import (
    plugin_resource_name,
    replicas_problem,
    resource_name_problem,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import TIME_SLICING

CONFIG_VERSION = "v1"
# The ways `sharing` shares a GPU (api/config/v1/sharing.go), in the order messages list them.
SHARINGS = (TIME_SLICING, MPS)

MIG_STRATEGIES = ("none", "single", "mixed")  # consts.go MigStrategy*
DEVICE_LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")  # consts.go, strategy.go
DEVICE_ID_STRATEGIES = ("uuid", "index")  # consts.go DeviceIDStrategy*, main.go validateFlags
# consts.go AllocationPolicy* and main.go validateFlags of v0.20 (NVIDIA/k8s-device-plugin#1621).
SHARED_DEVICES_ALLOCATION_POLICIES = ("distributed", "packed")

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

# Go time.ParseDuration, which GFD's sleepInterval (duration.go) goes through. Matched with fullmatch, as the Go
# code anchors its patterns: re.match with "$" would let a trailing newline through.
_GO_DURATION = re.compile(r"([0-9]+(\.[0-9]+)?(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+")


def sharing_in_use(settings):
    """The way the plugin shares a node with SETTINGS ({variable: value} of each way; None: not set): MPS whenever
    gpuops_mps is set (api/config/v1/sharing.go SharingStrategy), else time-slicing, which without a value shares
    nothing."""
    return MPS if settings.get(MPS.variable) is not None else TIME_SLICING


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
    settings = {TIME_SLICING.variable: time_slicing, MPS.variable: mps}
    sharing = sharing_in_use(settings)
    problems = sharing.lint(settings[sharing.variable], None)
    if sharing is MPS:
        node = PluginNode(mig_strategy, (), tuple(resources), settings)
        problems += MPS.lint_for_node(mps, node)
    else:
        # Time-slicing shares the resources the node finds; the MPS section names its one resource itself.
        for name in resources:
            problem = resource_name_problem(name)
            if problem:
                problems.append(f"resources: {excerpt(name)}: {problem}")
    if problems:
        raise DevicePluginConfigError("; ".join(problems))
    config = {"version": CONFIG_VERSION, "flags": {"migStrategy": mig_strategy}}
    section = sharing.config_section(sharing.normalize(settings[sharing.variable]), resources)
    if section is not None:
        config["sharing"] = {sharing.config_key: section}
    return config


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
            problems.append(f"{where}: unknown key (the plugin ignores it); {valid_keys_hint(key, known)}")
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
    """LIMIT: (most replicas, why), as shared_resources.replicas_problem takes it."""
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
        problem = "missing" if "replicas" not in entry else replicas_problem(entry["replicas"], limit)
        if problem:
            problems.append(f"{where}.replicas: {problem}")
        # config.go DisableResourceNamingInConfig overwrites both with only a warning in the log.
        if "rename" in entry and plugin_resource_name(entry["rename"]) != f"{name}{SHARED_SUFFIX}":
            problems.append(f"{where}.rename: the plugin ignores custom names; use renameByDefault: true instead")
        if "devices" in entry and entry["devices"] != "all":
            problems.append(f"{where}.devices: the plugin ignores device selection and shares every device; drop it")


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
        _lint_replicated(time_slicing, "sharing.timeSlicing", TIME_SLICING.replicas_limit(compute_capability), problems)
    if mps is not None:
        _lint_replicated(mps, "sharing.mps", MPS.replicas_limit(compute_capability), problems)
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
