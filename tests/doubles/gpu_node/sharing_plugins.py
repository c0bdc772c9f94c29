# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The device plugins that share a GPU by memory, read from their DaemonSets and ConfigMaps in the
cluster (never from the collection's plan):

- HAMi's (Project-HAMi/HAMi v2.10.0, chart hami-2.10.0: DaemonSet `hami-device-plugin`, labelled
  `app.kubernetes.io/component: hami-device-plugin`, nodeSelector `gpu: "on"`). Its settings:
  pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go LoadNvidiaDevicePluginConfig reads the
  `--config-file` (the chart mounts ConfigMap `hami-scheduler-device`, key `device-config.yaml`,
  section `nvidia`), then readFromConfigFile applies every `nodeconfig` entry of `/config/config.json`
  (ConfigMap `hami-device-plugin`) named after the node: a positive devicesplitcount,
  devicememoryscaling or devicecorescaling wins, operatingmode replaces `hami-core`.
  Devices: rm/devices.go GetPluginDevices gives `<GPU UUID>-<n>` for n < deviceSplitCount; the
  scheduler reads register.go's `hami.io/node-nvidia-register` annotation (device.MarshalNodeDevices:
  Go's json of DeviceInfo, zero fields left out).
- gpushare's (AliyunContainerService/gpushare-device-plugin 45fb8b8, DaemonSet
  `gpushare-device-plugin-ds`, pod label `component: gpushare-device-plugin`, nodeSelector
  `gpushare: "true"`). pkg/gpu/nvidia/nvidia.go getDevices: one fake device `<UUID>-_-<n>` per
  memory unit (`--memory-unit`, GiB: the first GPU's MiB / 1024, for every GPU) as
  `aliyun.com/gpu-mem`; server.go NewNvidiaDevicePlugin patches the node's status with
  `aliyun.com/gpu-count` = the number of GPUs (podmanager.go patchGPUCount).
"""

import functools
import json

import yaml

from .hardware import Node

HAMI_COMPONENT = "hami-device-plugin"  # the chart's app.kubernetes.io/component of the DaemonSet
HAMI_REGISTER = "hami.io/node-nvidia-register"  # pkg/device/nvidia: RegisterAnnos
HAMI_RESOURCE = "nvidia.com/gpu"  # the chart's resourceCountName
GPUSHARE_COMPONENT = "gpushare-device-plugin"  # the pod template's `component` label
GPUSHARE_MEMORY = "aliyun.com/gpu-mem"  # pkg/gpu/nvidia/const.go resourceName
GPUSHARE_COUNT = "aliyun.com/gpu-count"  # const.go resourceCount
HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"


class SharingError(Exception):
    pass


def hami_daemonset(daemonsets: list) -> dict | None:
    for daemonset in daemonsets:
        if (daemonset["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == HAMI_COMPONENT:
            return daemonset
    return None


def gpushare_daemonset(daemonsets: list) -> dict | None:
    for daemonset in daemonsets:
        template = (daemonset.get("spec") or {}).get("template") or {}
        if ((template.get("metadata") or {}).get("labels") or {}).get("component") == GPUSHARE_COMPONENT:
            return daemonset
    return None


def runs_on(daemonset: dict, labels: dict) -> bool:
    """The DaemonSet places a pod on the node: its nodeSelector matches the node's labels."""
    selector = daemonset["spec"]["template"]["spec"].get("nodeSelector") or {}
    return all(labels.get(key) == value for key, value in selector.items())


def _container(daemonset: dict, program: str) -> dict:
    for container in daemonset["spec"]["template"]["spec"].get("containers") or []:
        if (container.get("command") or [""])[0].rsplit("/", 1)[-1] == program:
            return container
    name = daemonset["metadata"]["name"]
    raise SharingError(f"DaemonSet {name} has no container that runs {program}")


def _flag(arguments: list, name: str) -> str | None:
    """A Go flag's value: `--name=value`, `-name=value`, `--name value`; the last one wins."""
    found = None
    for position, argument in enumerate(arguments):
        for prefix in (f"--{name}", f"-{name}"):
            if argument.startswith(prefix + "="):
                found = argument[len(prefix) + 1 :]
            elif argument == prefix and position + 1 < len(arguments):
                found = arguments[position + 1]
    return found


def _arguments(container: dict) -> list:
    # A `sh -c "..."` wrapper is not used by either chart: command and args are the program's argv.
    return [str(item) for item in [*(container.get("command") or []), *(container.get("args") or [])]]


def _mounted_configmap(daemonset: dict, container: dict, path: str) -> tuple[str, str] | None:
    """(ConfigMap name, key) of the file `path` in the container, through its volume mounts."""
    volumes = {volume["name"]: volume for volume in daemonset["spec"]["template"]["spec"].get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        target = mount["mountPath"].rstrip("/")
        configmap = (volumes.get(mount["name"]) or {}).get("configMap")
        if not configmap:
            continue
        if mount.get("subPath") and target == path:
            return configmap["name"], mount["subPath"]
        if not mount.get("subPath") and path.startswith(target + "/"):
            return configmap["name"], path[len(target) + 1 :]
    return None


def _read(configmap_data, namespace: str, where: tuple[str, str]) -> str | None:
    data = configmap_data(namespace, where[0])
    return None if data is None else data.get(where[1])


def hami_settings(daemonset: dict, node_name: str, configmap_data) -> dict:
    """{split, memory_scaling, core_scaling, mode} of HAMi's plugin on one node.
    configmap_data(namespace, name) -> data or None."""
    namespace = daemonset["metadata"]["namespace"]
    container = _container(daemonset, "nvidia-device-plugin")
    config_file = _flag(_arguments(container), "config-file")
    if not config_file:
        raise SharingError(f"DaemonSet {namespace}/{daemonset['metadata']['name']} passes no --config-file")
    where = _mounted_configmap(daemonset, container, config_file)
    text = _read(configmap_data, namespace, where) if where else None
    if text is None:
        # server.go: klog.Fatalf on a config file it cannot load: the plugin does not start.
        raise SharingError(f"HAMi device plugin: config file {config_file} not found (no ConfigMap mounted there)")
    nvidia = _hami_device_config(text)
    missing = [key for key in ("deviceSplitCount", "deviceMemoryScaling", "deviceCoreScaling") if key not in nvidia]
    if missing:
        raise SharingError(f"HAMi device plugin: {config_file} in ConfigMap {where[0]} lacks nvidia.{missing[0]}")
    settings = {
        "split": int(nvidia["deviceSplitCount"]),
        "memory_scaling": float(nvidia["deviceMemoryScaling"]),
        "core_scaling": float(nvidia["deviceCoreScaling"]),
        "mode": "hami-core",
    }
    # readFromConfigFile: /config/config.json; a missing or unreadable file is logged and ignored.
    where = _mounted_configmap(daemonset, container, "/config/config.json")
    text = _read(configmap_data, namespace, where) if where else None
    try:
        node_configs = (json.loads(text) if text else {}) or {}
    except json.JSONDecodeError:
        node_configs = {}
    for entry in _lower_keys(node_configs).get("nodeconfig") or []:
        entry = _lower_keys(entry)  # Go's json matches field names without regard to case
        if entry.get("name") != node_name:
            continue
        if (entry.get("devicememoryscaling") or 0) > 0:
            settings["memory_scaling"] = float(entry["devicememoryscaling"])
        if (entry.get("devicecorescaling") or 0) > 0:
            settings["core_scaling"] = float(entry["devicecorescaling"])
        if (entry.get("devicesplitcount") or 0) > 0:
            settings["split"] = int(entry["devicesplitcount"])
        if entry.get("operatingmode"):
            settings["mode"] = entry["operatingmode"]
    return settings


@functools.lru_cache(maxsize=8)
def _hami_device_config(text: str) -> dict:
    """The `nvidia` section of HAMi's device config, parsed once per text: the loop reads it every second, and
    PyYAML's parser took most of the pass. Callers only read it."""
    return (yaml.safe_load(text) or {}).get("nvidia") or {}


def _lower_keys(document) -> dict:
    return {str(key).lower(): value for key, value in document.items()} if isinstance(document, dict) else {}


def hami_devices(whole_gpus: list[tuple[int, str]], settings: dict, unhealthy: set[int]) -> dict:
    """{nvidia.com/gpu: [(device ID, health, GPU UUID)]}: deviceSplitCount ids per whole GPU."""
    listed = [
        (f"{uuid}-{replica}", UNHEALTHY if index in unhealthy else HEALTHY, uuid)
        for index, uuid in whole_gpus
        for replica in range(settings["split"])
    ]
    return {HAMI_RESOURCE: listed} if listed else {}


def hami_register(node: Node, whole_gpus: list[tuple[int, str]], settings: dict, unhealthy: set[int]) -> str:
    """The value of hami.io/node-nvidia-register as register.go getAPIDevices and
    device.MarshalNodeDevices write it (Go's json.Marshal: no spaces, struct field order, zero
    values omitted; no NUMA node is found here, so `numa` is 0 and left out)."""
    model = node.product if node.product.startswith("NVIDIA") else f"NVIDIA-{node.product}"
    memory = node.memory_mib
    if settings["memory_scaling"] != 1:
        memory = int(memory * settings["memory_scaling"])  # int32(float64(registeredmem) * scaling)
    devices = []
    for index, uuid in whole_gpus:
        fields = {
            "id": uuid,
            "index": index,
            "count": settings["split"],
            "devmem": memory,
            "devcore": int(settings["core_scaling"] * 100),
            "type": model,
            "numa": 0,
            "mode": settings["mode"],
            "health": index not in unhealthy,
        }
        devices.append({key: value for key, value in fields.items() if value not in (0, "", False)})
    return json.dumps(devices, separators=(",", ":"))


def gpushare_unit(daemonset: dict) -> str:
    """`--memory-unit` of the plugin (cmd/nvidia/main.go: GiB by default)."""
    container = _container(daemonset, "gpushare-device-plugin-v2")
    unit = _flag(_arguments(container), "memory-unit") or "GiB"
    if unit not in ("GiB", "MiB"):
        raise SharingError(f"gpushare device plugin: --memory-unit {unit!r} is neither GiB nor MiB")
    return unit


def gpushare_devices(node: Node, gpus: list[tuple[int, str]], unit: str, unhealthy: set[int]) -> dict:
    """{aliyun.com/gpu-mem: [(fake ID, health, GPU index)]}: one fake device per memory unit of the
    first GPU, for every GPU (nvidia.go getDevices sets gpuMemory once). Allocate names the GPU
    by its index, as allocate.go does for the pod the scheduler extender assumed."""
    per_gpu = node.memory_mib // 1024 if unit == "GiB" else node.memory_mib
    listed = [
        (f"{uuid}-_-{number}", UNHEALTHY if index in unhealthy else HEALTHY, str(index))
        for index, uuid in gpus
        for number in range(per_gpu)
    ]
    return {GPUSHARE_MEMORY: listed} if listed else {}
