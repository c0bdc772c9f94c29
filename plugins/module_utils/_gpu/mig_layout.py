# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""MIG layouts: can a set of GPU instances really be created on a product, and in which order.

A layout can fit by compute slices and still not be placeable: every profile may only start at the
memory slices `nvidia-smi mig -lgipp` lists, and instances may not overlap. The driver picks the
placement itself when instances are created one by one, so creating the largest first matters
(a100-sxm4-40gb/mig-cgi-19-19-14-9-error-insufficient-resources-nvidia-guide.txt: 1g,1g,2g then 3g
fails with "Insufficient Resources", while 3g first succeeds).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError


@dataclass(frozen=True)
class PlacedInstance:
    """A GPU instance the plan creates: a catalog profile at a memory-slice start."""

    profile: object  # GiProfile
    start: int

    @property
    def size(self):
        return self.profile.memory_slices


# mig-parted's profile syntax (go-nvlib pkg/nvlib/device/mig_profile.go parseMigProfile): an optional
# compute-instance part "Nc.", then "Ng.Mgb", then "+attributes" (or the RTX PRO "-me").
_CI_PROFILE = re.compile(r"(?P<ci>\d+)c\.(?P<gi>\d+g\.\d+gb(?:[+-].*)?)")


@dataclass(frozen=True)
class MigDeviceProfile:
    """The MIG device a mig-devices name creates: a GPU instance and the one compute instance mig-parted
    creates in it. "1c.3g.40gb" is a 3g.40gb GPU instance with a 1-slice compute instance
    (go-nvlib pkg/nvlib/device/mig_profile.go, MigProfileInfo.String: "Cc.Gg.Mgb" when C != G)."""

    gi: object  # GiProfile
    ci_slices: int

    @property
    def name(self):
        if self.ci_slices == self.gi.compute_slices:
            return self.gi.name
        return f"{self.ci_slices}c.{self.gi.name}"

    @property
    def resource_name(self):
        # k8s-device-plugin internal/rm/rm.go: "mig-" + the MIG device's profile string, "+" as ".".
        return "mig-" + self.name.replace("+", ".")

    @property
    def compute_slices(self):
        """GPU-instance compute slices (nvidia.com/<resource>.slices.gi)."""
        return self.gi.compute_slices

    @property
    def memory_mib(self):
        return self.gi.memory_mib

    @property
    def is_compute_instance_profile(self):
        return self.ci_slices != self.gi.compute_slices


def mig_device_profile(product, name):
    """The MigDeviceProfile of a mig-devices NAME on PRODUCT ("3g.40gb", "1c.3g.40gb"), or None when the
    product has no such GPU-instance profile or the compute instance would be larger than it."""
    if product.mig is None or not isinstance(name, str):
        return None
    match = _CI_PROFILE.fullmatch(name)
    gi = product.mig.profile(match.group("gi") if match else name)
    if gi is None:
        return None
    ci_slices = int(match.group("ci")) if match else gi.compute_slices
    if not 1 <= ci_slices <= gi.compute_slices:
        return None
    return MigDeviceProfile(gi, ci_slices)


def compute_instance_profiles(mig_devices):
    """The names in MIG_DEVICES (with a count > 0) that ask for a compute-instance profile ("1c.3g.40gb")."""
    return [
        name
        for name, count in (mig_devices or {}).items()
        if isinstance(name, str) and _CI_PROFILE.fullmatch(name) and count
    ]


def describe_mig_devices(counts):
    """The one way the collection writes MIG devices for people: ((name, count), ...) -> "2x3g.40gb + 1x1g.10gb"."""
    return " + ".join(f"{count}x{name}" for name, count in counts)


def _check_request(product, mig_devices):
    """Validated ((profile, count), ...) with count > 0, in the catalog's profile order."""
    if not isinstance(mig_devices, dict):
        raise MigLayoutError(f"mig-devices must be a mapping of profile name to count, got {mig_devices!r}")
    for name, count in mig_devices.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MigLayoutError(f"profile {name}: count must be a non-negative integer, got {count!r}")
    wanted = {name: count for name, count in mig_devices.items() if count}
    if product.mig is None:
        if wanted:
            raise MigLayoutError(f"{product.name} does not support MIG; valid: mig-enabled false without mig-devices")
        return ()
    valid = ", ".join(profile.name for profile in product.mig.profiles)
    by_gi = {}
    for name, count in wanted.items():
        device = mig_device_profile(product, name)
        if device is None and _CI_PROFILE.fullmatch(name):
            raise MigLayoutError(
                f"unknown profile {name} for {product.name}; valid: Cc.<profile>, C from 1 to the compute slices "
                f"of <profile>, one of {valid}"
            )
        if device is None:
            raise MigLayoutError(f"unknown profile {name} for {product.name}; valid: {valid}")
        # A compute-instance profile takes a whole GPU instance of its GI profile (one CI in it).
        by_gi[device.gi.name] = by_gi.get(device.gi.name, 0) + count
    request = tuple((p, by_gi[p.name]) for p in product.mig.profiles if p.name in by_gi)
    for profile, count in request:
        if count > profile.max_instances:
            raise MigLayoutError(
                f"profile {profile.name}: {count} instances requested, at most {profile.max_instances} fit on "
                f"{product.name}"
            )
    media = [p.name for p, _count in request if p.media_extensions]
    if len(media) > 1:
        # Each "+me" instance takes the GPU's only JPEG and OFA engines (GUIDE: "a single profile can
        # include media extensions"), so two different "+me" profiles cannot coexist.
        raise MigLayoutError(
            f"profiles {' and '.join(media)} both take the media extensions of {product.name}; valid: one +me instance"
        )
    return request


def _place(instances, memory_slices):
    """Starts for instances (largest first) with no overlap, or None. Exact backtracking over <= 8 slices."""
    starts = []

    def search(index, used):
        if index == len(instances):
            return True
        profile = instances[index]
        # Identical profiles take increasing starts: the same arrangement is not tried twice.
        floor = starts[-1] if index and instances[index - 1] is profile else -1
        for start in profile.placements:
            mask = ((1 << profile.memory_slices) - 1) << start
            if start <= floor or start + profile.memory_slices > memory_slices or used & mask:
                continue
            starts.append(start)
            if search(index + 1, used | mask):
                return True
            starts.pop()
        return False

    return tuple(starts) if search(0, 0) else None


def _largest_first(request):
    ordered = sorted(request, key=lambda item: (-item[0].memory_slices, -item[0].compute_slices))
    return [profile for profile, count in ordered for _instance in range(count)]


def _best_placeable_subset(request, memory_slices):
    """The placeable sub-layout with the most compute slices (ties: more instances), for error messages."""
    best, best_key = (), (-1, -1)

    def walk(index, chosen):
        nonlocal best, best_key
        if index == len(request):
            key = (sum(p.compute_slices * n for p, n in chosen), sum(n for _profile, n in chosen))
            if key > best_key and _place(_largest_first(chosen), memory_slices) is not None:
                best, best_key = tuple(chosen), key
            return
        profile, count = request[index]
        for taken in range(count, -1, -1):
            walk(index + 1, chosen + ([(profile, taken)] if taken else []))

    walk(0, [])
    return best


@functools.lru_cache(maxsize=4096)
def _plan_cached(product, request_items):
    request = tuple((product.mig.profile(name), count) for name, count in request_items)
    request = tuple(sorted(request, key=lambda item: (-item[0].memory_slices, -item[0].compute_slices)))
    mig = product.mig
    instances = _largest_first(request)
    starts = _place(instances, mig.memory_slices)
    if starts is not None:
        # _place returns one start per instance. map, unlike zip(strict=), also runs on Python 3.9 targets.
        return tuple(map(PlacedInstance, instances, starts)), None
    shown = describe_mig_devices((p.name, n) for p, n in request)
    compute = sum(p.compute_slices * n for p, n in request)
    memory = sum(p.memory_slices * n for p, n in request)
    subset = describe_mig_devices((p.name, n) for p, n in _best_placeable_subset(request, mig.memory_slices))
    if compute > mig.compute_slices:
        reason = f"needs {compute} compute slices but {product.name} has {mig.compute_slices}"
    elif memory > mig.memory_slices:
        reason = (
            f"uses {compute} of {mig.compute_slices} compute slices but cannot be placed: it needs {memory} "
            f"memory slices and {product.name} has {mig.memory_slices}"
        )
    else:
        rules = "; ".join(
            f"{p.name} starts at {{{','.join(map(str, p.placements))}}} and takes {p.memory_slices}"
            for p, _count in request
        )
        reason = (
            f"uses {compute} of {mig.compute_slices} compute slices but cannot be placed: {rules} of the "
            f"{mig.memory_slices} memory slices of {product.name} and no arrangement avoids an overlap"
        )
    return None, f"{shown} {reason}; valid: {subset or 'fewer instances'}"


def plan_layout(product, mig_devices):
    """One valid creation order (largest first) with placements, or MigLayoutError."""
    request = _check_request(product, mig_devices)
    if not request:
        return ()
    plan, error = _plan_cached(product, tuple((p.name, n) for p, n in request))
    if error:
        raise MigLayoutError(error)
    return plan
