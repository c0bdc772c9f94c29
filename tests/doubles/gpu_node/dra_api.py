# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kubelet's APIs towards a DRA driver's kubelet plugin, as of k8s.io/kubelet v0.36.3: plugin registration
(pkg/apis/pluginregistration/v1/api.proto, package "pluginregistration") and the DRA service
(pkg/apis/dra/v1/api.proto, package "k8s.io.kubelet.pkg.apis.dra.v1"). Field names and numbers follow the .proto
files; Device.share_id, proto3 `optional` there, is a plain field here (the same bytes on the wire)."""

from .proto import BOOL, MAP, MESSAGE, REPEATED, STRING, message_classes

REGISTRATION_PACKAGE = "pluginregistration"
REGISTRATION_SERVICE = "pluginregistration.Registration"
DRA_PACKAGE = "k8s.io.kubelet.pkg.apis.dra.v1"
DRA_SERVICE = DRA_PACKAGE + ".DRAPlugin"
# PluginInfo.type of a DRA driver (pluginregistration/v1 types.go DRAPlugin) and the service version the kubelet
# picks from supported_versions (dra/v1 types.go DRAPluginService).
PLUGIN_TYPE = "DRAPlugin"
SUPPORTED_VERSION = "v1.DRAPlugin"

REGISTRATION_MESSAGES = {
    "PluginInfo": [
        ("type", 1, STRING),
        ("name", 2, STRING),
        ("endpoint", 3, STRING),
        ("supported_versions", 4, STRING, None, REPEATED),
    ],
    "RegistrationStatus": [("plugin_registered", 1, BOOL), ("error", 2, STRING)],
    "RegistrationStatusResponse": [],
    "InfoRequest": [],
}
DRA_MESSAGES = {
    "Claim": [("namespace", 1, STRING), ("uid", 2, STRING), ("name", 3, STRING)],
    "NodePrepareResourcesRequest": [("claims", 1, MESSAGE, "Claim", REPEATED)],
    "Device": [
        ("request_names", 1, STRING, None, REPEATED),
        ("pool_name", 2, STRING),
        ("device_name", 3, STRING),
        ("cdi_device_ids", 4, STRING, None, REPEATED),
        ("share_id", 5, STRING),
    ],
    "NodePrepareResourceResponse": [("devices", 1, MESSAGE, "Device", REPEATED), ("error", 2, STRING)],
    "NodePrepareResourcesResponse": [("claims", 1, MAP, "NodePrepareResourceResponse")],
    "NodeUnprepareResourcesRequest": [("claims", 1, MESSAGE, "Claim", REPEATED)],
    "NodeUnprepareResourceResponse": [("error", 1, STRING)],
    "NodeUnprepareResourcesResponse": [("claims", 1, MAP, "NodeUnprepareResourceResponse")],
}
registration = message_classes("pluginregistration/v1/api.proto", REGISTRATION_PACKAGE, REGISTRATION_MESSAGES)
dra = message_classes("dra/v1/api.proto", DRA_PACKAGE, DRA_MESSAGES)
