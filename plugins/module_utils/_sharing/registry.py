# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The memory-sharing backends, by name, in the order messages list them: the one place that names them all.

Everything else asks here at call time, never copies the list at import time, so that a backend registered
later (a test's) is seen everywhere.
"""

from __future__ import annotations

from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.gpushare import GpushareBackend
from ansible_collections.gpuops.cluster.plugins.module_utils._sharing.hami import HamiBackend

BACKEND_KEY = "backend"
# name -> MemorySharingBackend.
BACKENDS = {}


def register(backend):
    """Add BACKEND (a MemorySharingBackend) under its name, after those registered before."""
    BACKENDS[backend.name] = backend
    return backend


register(HamiBackend())
register(GpushareBackend())


def names():
    return tuple(BACKENDS)


def backends():
    return tuple(BACKENDS.values())


def get(name):
    """The backend called NAME, or None (NAME may be any value an inventory holds, a list included)."""
    return BACKENDS.get(name) if isinstance(name, str) else None


def of(sharing):
    """The backend of SHARING: a normalized gpuops_memory_sharing, or a plan's valid memory_sharing entry."""
    return BACKENDS[sharing[BACKEND_KEY]]


def _unique(values):
    return tuple(dict.fromkeys(values))


def variable_keys():
    """Every key gpuops_memory_sharing takes: backend, then each backend's."""
    return _unique((BACKEND_KEY, *(key for backend in backends() for key in backend.keys)))


def key_owners(key):
    """The names of the backends that take KEY."""
    return tuple(backend.name for backend in backends() if key in backend.keys)


def advertised_resources():
    """Every resource some backend's device plugin registers."""
    return _unique(resource for backend in backends() for resource in backend.advertised_resources)


def resource_domains():
    """The domains ("aliyun.com/") of the resources the backends' device plugins register."""
    return _unique(f"{resource.split('/')[0]}/" for resource in advertised_resources())


def unallocatable_resources():
    """Resources some backend's nodes show that no pod asks for."""
    return _unique(resource for backend in backends() for resource in backend.unallocatable_resources)


def _flat_name(backend, option):
    return f"{backend.name}_{option}"


def pod_option_names():
    """The gpu_validation module's names of the backends' pod options: <backend>_<option> (hami_scheduler_name)."""
    return tuple(_flat_name(backend, option) for backend in backends() for option in backend.pod_option_defaults)


def pod_options(by_backend=None, flat=None):
    """Each backend's pod options by backend name: its defaults, then BY_BACKEND's (name -> options), then
    FLAT's (pod_option_names() -> value)."""
    by_backend, flat = by_backend or {}, flat or {}
    options = {}
    for backend in backends():
        chosen = {**backend.pod_option_defaults, **(by_backend.get(backend.name) or {})}
        chosen.update(
            (option, flat[_flat_name(backend, option)])
            for option in backend.pod_option_defaults
            if _flat_name(backend, option) in flat
        )
        options[backend.name] = chosen
    return options
