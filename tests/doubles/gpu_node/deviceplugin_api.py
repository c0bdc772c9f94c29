# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kubelet's device-plugin API v1beta1 (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto):
its messages built at import from a FileDescriptorProto written out below (no protoc, no generated
code), and the names of its services and methods. Field names and numbers follow api.proto."""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "v1beta1"
VERSION = "v1beta1"  # RegisterRequest.version the kubelet accepts
KUBELET_SOCKET = "kubelet.sock"
REGISTER = "/v1beta1.Registration/Register"
DEVICE_PLUGIN_SERVICE = "v1beta1.DevicePlugin"

_STRING, _BOOL, _INT32, _INT64, _MESSAGE = "string", "bool", "int32", "int64", "message"
_REPEATED = "repeated"
# message -> [(field, number, type, repeated?, message type or map (key, value))]
MESSAGES = {
    "DevicePluginOptions": [("pre_start_required", 1, _BOOL), ("get_preferred_allocation_available", 2, _BOOL)],
    "RegisterRequest": [
        ("version", 1, _STRING),
        ("endpoint", 2, _STRING),
        ("resource_name", 3, _STRING),
        ("options", 4, _MESSAGE, "DevicePluginOptions"),
    ],
    "Empty": [],
    "NUMANode": [("ID", 1, _INT64)],
    "TopologyInfo": [("nodes", 1, _MESSAGE, "NUMANode", _REPEATED)],
    "Device": [("ID", 1, _STRING), ("health", 2, _STRING), ("topology", 3, _MESSAGE, "TopologyInfo")],
    "ListAndWatchResponse": [("devices", 1, _MESSAGE, "Device", _REPEATED)],
    "PreStartContainerRequest": [("devices_ids", 1, _STRING, None, _REPEATED)],
    "PreStartContainerResponse": [],
    "ContainerPreferredAllocationRequest": [
        ("available_deviceIDs", 1, _STRING, None, _REPEATED),
        ("must_include_deviceIDs", 2, _STRING, None, _REPEATED),
        ("allocation_size", 3, _INT32),
    ],
    "PreferredAllocationRequest": [
        ("container_requests", 1, _MESSAGE, "ContainerPreferredAllocationRequest", _REPEATED)
    ],
    "ContainerPreferredAllocationResponse": [("deviceIDs", 1, _STRING, None, _REPEATED)],
    "PreferredAllocationResponse": [
        ("container_responses", 1, _MESSAGE, "ContainerPreferredAllocationResponse", _REPEATED)
    ],
    "ContainerAllocateRequest": [("devices_ids", 1, _STRING, None, _REPEATED)],
    "AllocateRequest": [("container_requests", 1, _MESSAGE, "ContainerAllocateRequest", _REPEATED)],
    "Mount": [("container_path", 1, _STRING), ("host_path", 2, _STRING), ("read_only", 3, _BOOL)],
    "DeviceSpec": [("container_path", 1, _STRING), ("host_path", 2, _STRING), ("permissions", 3, _STRING)],
    "CDIDevice": [("name", 1, _STRING)],
    "ContainerAllocateResponse": [
        ("envs", 1, "map"),
        ("mounts", 2, _MESSAGE, "Mount", _REPEATED),
        ("devices", 3, _MESSAGE, "DeviceSpec", _REPEATED),
        ("annotations", 4, "map"),
        ("cdi_devices", 5, _MESSAGE, "CDIDevice", _REPEATED),
    ],
    "AllocateResponse": [("container_responses", 1, _MESSAGE, "ContainerAllocateResponse", _REPEATED)],
}
_TYPES = {
    _STRING: descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    _BOOL: descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    _INT32: descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    _INT64: descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    _MESSAGE: descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
}


def _entry_name(field: str) -> str:
    """protoc's name of a map field's entry message: envs -> EnvsEntry."""
    return "".join(part.capitalize() for part in field.split("_")) + "Entry"


def _add_field(message, name: str, number: int, kind: str, type_name=None, label=None) -> None:
    field = message.field.add(name=name, number=number, json_name=name)
    field.label = (
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
        if label == _REPEATED
        else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    )
    field.type = _TYPES[kind]
    if type_name:
        field.type_name = type_name


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="deviceplugin/v1beta1/api.proto", package=PACKAGE, syntax="proto3")
    for name, fields in MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field in fields:
            field_name, number, kind = field[:3]
            if kind == "map":  # map<string, string>: a nested entry message with map_entry set
                entry = message.nested_type.add(name=_entry_name(field_name))
                entry.options.map_entry = True
                _add_field(entry, "key", 1, _STRING)
                _add_field(entry, "value", 2, _STRING)
                _add_field(message, field_name, number, _MESSAGE, f".{PACKAGE}.{name}.{entry.name}", _REPEATED)
                continue
            type_name = field[3] if len(field) > 3 and field[3] else None
            label = field[4] if len(field) > 4 else None
            _add_field(message, field_name, number, kind, f".{PACKAGE}.{type_name}" if type_name else None, label)
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(file_descriptor())
messages = {
    name: message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}")) for name in MESSAGES
}
