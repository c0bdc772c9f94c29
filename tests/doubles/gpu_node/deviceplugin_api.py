# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kubelet's device-plugin API v1beta1 (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto):
its messages built at import from a FileDescriptorProto written out below (no protoc, no generated
code), and the names of its services and methods. Field names and numbers follow api.proto."""

from .proto import BOOL, INT32, INT64, MAP, MESSAGE, REPEATED, STRING, message_classes

PACKAGE = "v1beta1"
VERSION = "v1beta1"  # RegisterRequest.version the kubelet accepts
KUBELET_SOCKET = "kubelet.sock"
REGISTER = "/v1beta1.Registration/Register"
DEVICE_PLUGIN_SERVICE = "v1beta1.DevicePlugin"

# message -> [(field, number, type, repeated?, message type or map (key, value))]
MESSAGES = {
    "DevicePluginOptions": [("pre_start_required", 1, BOOL), ("get_preferred_allocation_available", 2, BOOL)],
    "RegisterRequest": [
        ("version", 1, STRING),
        ("endpoint", 2, STRING),
        ("resource_name", 3, STRING),
        ("options", 4, MESSAGE, "DevicePluginOptions"),
    ],
    "Empty": [],
    "NUMANode": [("ID", 1, INT64)],
    "TopologyInfo": [("nodes", 1, MESSAGE, "NUMANode", REPEATED)],
    "Device": [("ID", 1, STRING), ("health", 2, STRING), ("topology", 3, MESSAGE, "TopologyInfo")],
    "ListAndWatchResponse": [("devices", 1, MESSAGE, "Device", REPEATED)],
    "PreStartContainerRequest": [("devices_ids", 1, STRING, None, REPEATED)],
    "PreStartContainerResponse": [],
    "ContainerPreferredAllocationRequest": [
        ("available_deviceIDs", 1, STRING, None, REPEATED),
        ("must_include_deviceIDs", 2, STRING, None, REPEATED),
        ("allocation_size", 3, INT32),
    ],
    "PreferredAllocationRequest": [("container_requests", 1, MESSAGE, "ContainerPreferredAllocationRequest", REPEATED)],
    "ContainerPreferredAllocationResponse": [("deviceIDs", 1, STRING, None, REPEATED)],
    "PreferredAllocationResponse": [
        ("container_responses", 1, MESSAGE, "ContainerPreferredAllocationResponse", REPEATED)
    ],
    "ContainerAllocateRequest": [("devices_ids", 1, STRING, None, REPEATED)],
    "AllocateRequest": [("container_requests", 1, MESSAGE, "ContainerAllocateRequest", REPEATED)],
    "Mount": [("container_path", 1, STRING), ("host_path", 2, STRING), ("read_only", 3, BOOL)],
    "DeviceSpec": [("container_path", 1, STRING), ("host_path", 2, STRING), ("permissions", 3, STRING)],
    "CDIDevice": [("name", 1, STRING)],
    "ContainerAllocateResponse": [
        ("envs", 1, MAP),
        ("mounts", 2, MESSAGE, "Mount", REPEATED),
        ("devices", 3, MESSAGE, "DeviceSpec", REPEATED),
        ("annotations", 4, MAP),
        ("cdi_devices", 5, MESSAGE, "CDIDevice", REPEATED),
    ],
    "AllocateResponse": [("container_responses", 1, MESSAGE, "ContainerAllocateResponse", REPEATED)],
}
messages = message_classes("deviceplugin/v1beta1/api.proto", PACKAGE, MESSAGES)
