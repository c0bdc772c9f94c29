# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One resource NVIDIA's device plugin shares: the name and replicas its config takes, what a node advertises.

The rules follow NVIDIA/k8s-device-plugin v0.20: api/config/v1/resources.go (names), replicas.go (replicas) and
internal/rm/device_map.go (the devices a replicated resource lists). The config's linter (device_plugin.py) and the
gpuops_time_slicing and gpuops_mps linters (time_slicing.py, mps.py) apply them alike.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import (
    DNS_SUBDOMAIN,
    RESOURCE_PREFIX,
    SHARED_SUFFIX,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.numbers import whole_number

# consts.go MaxResourceNameLength; resources.go NewResourceName applies it to the full name.
MAX_RESOURCE_NAME_LENGTH = 63
# replicas.go ReplicatedResource.UnmarshalJSON: "number of replicas must be >= 2".
MIN_REPLICAS = 2
# resources.go applies k8s.io/apimachinery IsDNS1123Subdomain (kube_names.DNS_SUBDOMAIN, at most 253
# characters) to the part after the prefix. Matched with fullmatch, as the Go code anchors it: re.match with "$"
# would let a trailing newline through.
_DNS_SUBDOMAIN_MAX = 253


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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


def replicas_problem(value, limit, text_allowed=False) -> str | None:
    """Why the plugin would refuse VALUE as a resource's replicas, or None.

    LIMIT: (most replicas, why), None: checked by the caller. TEXT_ALLOWED: the inventory's variables also take
    "4"; the plugin's own YAML needs an integer.
    """
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


def with_whole_replicas(value):
    """A valid mapping of 'replicas' and per-resource 'resources' with every replicas as an int (inventories and
    -e may give "4"); any other value as it is."""
    if not isinstance(value, dict):
        return value
    normalized = dict(value)
    if "replicas" in normalized:
        normalized["replicas"] = whole_number(normalized["replicas"])
    if isinstance(normalized.get("resources"), dict):
        normalized["resources"] = {name: whole_number(count) for name, count in normalized["resources"].items()}
    return normalized


def replicas_for(resource: str, settings: dict | None) -> int:
    """How many schedulable replicas the plugin makes of each device of RESOURCE (1: not shared).

    SETTINGS: a normalized gpuops_time_slicing or gpuops_mps (None: no sharing).
    """
    if not settings:
        return 1
    overrides = settings.get("resources") or {}
    if resource in overrides:
        return overrides[resource]
    return settings.get("replicas", 1)


def advertised_resource(resource: str, settings: dict | None) -> str:
    """The name the node advertises RESOURCE under: '<name>.shared' when shared and renamed."""
    if settings and settings.get("rename_by_default") and replicas_for(resource, settings) > 1:
        return resource + SHARED_SUFFIX
    return resource
