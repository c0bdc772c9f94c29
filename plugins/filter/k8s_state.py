# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters on objects read from the cluster: whether applying a definition would change one."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def _contains(existing, wanted):
    if isinstance(wanted, dict):
        return isinstance(existing, dict) and all(
            key in existing and _contains(existing[key], value) for key, value in wanted.items()
        )
    # Lists and scalars as they are: a list that differs in any way counts as a change.
    return existing == wanted


def k8s_contains(existing, definition):
    """Whether EXISTING (an object as k8s_info returns it, or {} when there is none) already holds every field of
    DEFINITION, so that kubernetes.core.k8s with state present would change nothing."""
    if not isinstance(definition, dict) or not definition.get("kind"):
        raise AnsibleFilterError(f"k8s_contains: expects an object definition with a kind, got {definition!r}")
    if not existing:
        return False
    if not isinstance(existing, dict):
        raise AnsibleFilterError(f"k8s_contains: expects the object read from the cluster, got {existing!r}")
    return _contains(existing, definition)


def k8s_to_apply(definitions, live_objects):
    """The DEFINITIONS an apply would change: those whose live object (LIVE_OBJECTS, in the same order, {} where
    there is none, as gpuops.cluster.k8s_reads reads them) does not hold every field."""
    if not isinstance(definitions, list) or not isinstance(live_objects, list) or len(definitions) != len(live_objects):
        raise AnsibleFilterError(
            f"k8s_to_apply: expects a list of definitions and the list of their live objects, in the same order; got"
            f" {len(definitions) if isinstance(definitions, list) else definitions!r} definitions and"
            f" {len(live_objects) if isinstance(live_objects, list) else live_objects!r} live objects"
        )
    return [
        definition
        for definition, live in zip(definitions, live_objects, strict=True)
        if not k8s_contains(live, definition)
    ]


class FilterModule:
    """Decisions on the objects the Kubernetes roles read."""

    def filters(self):
        return {"k8s_contains": k8s_contains, "k8s_to_apply": k8s_to_apply}
