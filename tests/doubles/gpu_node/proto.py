# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""protobuf message classes built at import from a FileDescriptorProto written out in Python (no protoc, no
generated code), for the kubelet's gRPC APIs the GPU node stand-in serves.

A message is [(field, number, type, message type or None, REPEATED or None)]; type is STRING, BOOL, INT32, INT64,
MESSAGE, or MAP (a map<string, string>, or map<string, message type> where the fourth item names one).
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

STRING, BOOL, INT32, INT64, MESSAGE, MAP = "string", "bool", "int32", "int64", "message", "map"
REPEATED = "repeated"
_TYPES = {
    STRING: descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    BOOL: descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    INT32: descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    INT64: descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    MESSAGE: descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
}


def _entry_name(field: str) -> str:
    """protoc's name of a map field's entry message: envs -> EnvsEntry."""
    return "".join(part.capitalize() for part in field.split("_")) + "Entry"


def _add_field(message, name: str, number: int, kind: str, type_name=None, label=None) -> None:
    field = message.field.add(name=name, number=number, json_name=name)
    field.label = (
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
        if label == REPEATED
        else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    )
    field.type = _TYPES[kind]
    if type_name:
        field.type_name = type_name


def file_descriptor(file_name: str, package: str, messages: dict) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    for name, fields in messages.items():
        message = proto.message_type.add(name=name)
        for field in fields:
            field_name, number, kind = field[:3]
            type_name = field[3] if len(field) > 3 and field[3] else None
            if kind == MAP:  # a nested entry message with map_entry set
                entry = message.nested_type.add(name=_entry_name(field_name))
                entry.options.map_entry = True
                _add_field(entry, "key", 1, STRING)
                if type_name:
                    _add_field(entry, "value", 2, MESSAGE, f".{package}.{type_name}")
                else:
                    _add_field(entry, "value", 2, STRING)
                _add_field(message, field_name, number, MESSAGE, f".{package}.{name}.{entry.name}", REPEATED)
                continue
            label = field[4] if len(field) > 4 else None
            _add_field(message, field_name, number, kind, f".{package}.{type_name}" if type_name else None, label)
    return proto


def message_classes(file_name: str, package: str, messages: dict) -> dict:
    """{message name: class} of MESSAGES in PACKAGE."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor(file_name, package, messages))
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}")) for name in messages}
