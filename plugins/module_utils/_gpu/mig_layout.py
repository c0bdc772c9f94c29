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

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError, excerpt
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.kube_names import mig_resource_name
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.limits import MAX_MIG_DEVICES_PER_GPU


@dataclass(frozen=True)
class PlacedInstance:
    """A GPU instance the plan creates: a catalog profile at a memory-slice start, holding one whole-GI
    compute instance (``ci_slices`` empty) or the compute instances of ``ci_slices`` ("1c.3g.40gb": 1)."""

    profile: object  # GiProfile
    start: int
    ci_slices: tuple = ()  # compute slices of each compute instance, largest first

    @property
    def devices(self):
        """The MigDeviceProfile of each MIG device (compute instance) in it."""
        slices = self.ci_slices or (self.profile.compute_slices,)
        return tuple(MigDeviceProfile(self.profile, c) for c in slices)

    @property
    def size(self):
        return self.profile.memory_slices


# mig-parted's profile syntax (go-nvlib pkg/nvlib/device/mig_profile.go parseMigProfile): an optional
# compute-instance part "Nc.", then "Ng.Mgb", then "+attributes" (or the RTX PRO "-me"). ASCII digits, as Go's
# strconv.Atoi reads them; "Nc." of at most three (no GPU has more than 8 slices), so int() reads no long one.
_CI_PROFILE = re.compile(r"(?P<ci>[0-9]{1,3})c\.(?P<gi>[0-9]+g\.[0-9]+gb(?:[+-].*)?)")
# NVML's compute-instance profile id per slice count (NVML_COMPUTE_INSTANCE_PROFILE_<N>_SLICE), the one
# mig-parted creates for "Nc." (pkg/types/mig_profile.go ParseMigProfile; no other slice count parses).
# `nvidia-smi mig -lcip` prints them: 1c.3g.40gb ID 0, 2c.3g.40gb ID 1, 3g.40gb ID 2
# (a100-80gb-pcie/mig-lcip-gi1.txt; a100-sxm4-40gb/mig-lcip-gi1-nvidia-guide.txt, 1c/2c.3g.20gb).
CI_PROFILE_IDS = {1: 0, 2: 1, 3: 2, 4: 3, 7: 4, 8: 5, 6: 6}


@dataclass(frozen=True)
class MigDeviceProfile:
    """The MIG device a mig-devices name creates: a compute instance in a GPU instance of its profile.
    "1c.3g.40gb" is a 1-slice compute instance in a 3g.40gb GPU instance, which it may share with others
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
        # From the MIG device's profile string, compute slices included ("1c.2g.20gb").
        return mig_resource_name(self.name)

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

    @property
    def ci_profile_id(self):
        """The ``-cci`` profile id of its compute instance (a whole-GI one is what ``-cgi ... -C`` creates)."""
        return CI_PROFILE_IDS[self.ci_slices]


def compute_instance_names(gi):
    """The mig-devices names of the one-CI MIG devices a GPU-instance profile can hold, smallest first."""
    return [f"{c}c.{gi.name}" for c in sorted(CI_PROFILE_IDS) if c < gi.compute_slices] + [gi.name]


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
    if not 1 <= ci_slices <= gi.compute_slices or ci_slices not in CI_PROFILE_IDS:
        return None
    return MigDeviceProfile(gi, ci_slices)


def describe_mig_devices(counts):
    """The one way the collection writes MIG devices for people: ((name, count), ...) -> "2x3g.40gb + 1x1g.10gb"."""
    return " + ".join(f"{count}x{name}" for name, count in counts)


def _check_request(product, mig_devices):
    """Validated ((profile, GPU instances), ...) with a count > 0, in the catalog's profile order, and
    {profile name: the CI slices of each of its GPU instances (_pack)}."""
    if not isinstance(mig_devices, dict):
        raise MigLayoutError(f"mig-devices must be a mapping of profile name to count, got {excerpt(mig_devices)}")
    for name, count in mig_devices.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MigLayoutError(
                f"profile {excerpt(name, bare=True)}: count must be a non-negative integer, got {excerpt(count)}"
            )
        if count > MAX_MIG_DEVICES_PER_GPU:
            # Checked before the counts become lists of compute instances (_pack): a count no GPU holds.
            raise MigLayoutError(
                f"profile {excerpt(name, bare=True)}: {excerpt(count)} MIG devices requested, and no GPU holds more "
                f"than {MAX_MIG_DEVICES_PER_GPU}"
            )
    wanted = {name: count for name, count in mig_devices.items() if count}
    if product.mig is None:
        if wanted:
            raise MigLayoutError(f"{product.name} does not support MIG; valid: mig-enabled false without mig-devices")
        return (), {}
    valid = ", ".join(profile.name for profile in product.mig.profiles)
    by_gi = {}
    for name, count in wanted.items():
        device = mig_device_profile(product, name)
        match = _CI_PROFILE.fullmatch(name) if isinstance(name, str) else None
        gi = product.mig.profile(match.group("gi")) if match else None
        shown = excerpt(name, bare=True)
        if device is None and gi is not None:
            raise MigLayoutError(
                f"unknown profile {shown} for {product.name}: its GPU instance {gi.name} ({gi.compute_slices} compute "
                f"slices) holds no {match.group('ci')}-slice compute instance; valid: "
                f"{', '.join(compute_instance_names(gi))}"
            )
        if device is None and match:
            raise MigLayoutError(
                f"unknown profile {shown} for {product.name}; valid: Cc.<profile>, C from 1 to the compute slices "
                f"of <profile>, one of {valid}"
            )
        if device is None:
            raise MigLayoutError(f"unknown profile {shown} for {product.name}; valid: {valid}")
        by_gi.setdefault(device.gi.name, []).extend([device.ci_slices] * count)
    groups = {name: _pack(product.mig.profile(name).compute_slices, slices) for name, slices in by_gi.items()}
    request = tuple((p, len(groups[p.name])) for p in product.mig.profiles if p.name in groups)
    for profile, count in request:
        if count > profile.max_instances:
            shared = [(n, c) for n, c in wanted.items() if mig_device_profile(product, n).gi is profile]
            detail = (
                f" ({describe_mig_devices(shared)} take {count} GPU instances of {profile.compute_slices} compute "
                "slices)"
                if any(mig_device_profile(product, n).is_compute_instance_profile for n, _c in shared)
                else ""
            )
            raise MigLayoutError(
                f"profile {profile.name}: {count} instances requested, at most {profile.max_instances} fit on "
                f"{product.name}{detail}"
            )
    media = [p.name for p, _count in request if p.media_extensions]
    if len(media) > 1:
        # Each "+me" instance takes the GPU's only JPEG and OFA engines (GUIDE: "a single profile can
        # include media extensions"), so two different "+me" profiles cannot coexist.
        raise MigLayoutError(
            f"profiles {' and '.join(media)} both take the media extensions of {product.name}; valid: one +me instance"
        )
    return request, groups


def _pack(gi_slices, ci_slices):
    """The compute instances of one GI profile grouped into the fewest GPU instances: tuples of CI slices,
    largest first, () for a GI holding one whole-GI CI.

    mig-parted (pkg/mig/config/config.go SetMigConfig) creates each MIG device as a further CI in the last
    GI when that GI has the same profile and the CI still fits, else in a new GI, and tries every ordering
    (iteratePermutationsUntilSuccess): any grouping whose CIs fit their GIs can come out. Fewer GIs never
    place worse, so the plan takes the fewest; first-fit decreasing finds them for every catalog profile:
    only 2g and 3g profiles allow several GIs (CIs of 1 and 2 slices: FFD is optimal), and a single GI of
    4g or 7g holds all its CIs exactly when their slices sum to at most G, which FFD packs into one. The
    placements of CIs inside a GI are not modelled (the catalog has none): mig-parted may fail there too.
    """
    bins = []
    for size in sorted(ci_slices, reverse=True):
        group = next((b for b in bins if sum(b) + size <= gi_slices), None)
        if group is None:
            bins.append([size])
        else:
            group.append(size)
    # A whole-GI CI fills its GI alone: () keeps those instances as plans without CI profiles had them.
    return sorted((() if b == [gi_slices] else tuple(b) for b in bins), key=lambda b: (bool(b), [-c for c in b]))


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
    """REQUEST_ITEMS: ((GI profile name, (CI slices of each of its GIs, ...)), ...)."""
    groups = {name: list(gi_groups) for name, gi_groups in request_items}
    request = tuple((product.mig.profile(name), len(gi_groups)) for name, gi_groups in request_items)
    request = tuple(sorted(request, key=lambda item: (-item[0].memory_slices, -item[0].compute_slices)))
    mig = product.mig
    instances = _largest_first(request)
    starts = _place(instances, mig.memory_slices)
    if starts is not None:
        # The instances of one profile take its groups in order: whole-GI ones at the lowest starts.
        ci_slices = [groups[profile.name].pop(0) for profile in instances]
        # _place returns one start per instance. map, unlike zip(strict=), also runs on Python 3.9 targets.
        return tuple(map(PlacedInstance, instances, starts, ci_slices)), None
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
    """One valid creation order (largest first) of GPU instances with placements, each with the compute
    instances it holds (MIG devices of one GI profile share GIs as mig-parted creates them), or MigLayoutError.
    """
    request, groups = _check_request(product, mig_devices)
    if not request:
        return ()
    plan, error = _plan_cached(product, tuple((p.name, tuple(groups[p.name])) for p, _n in request))
    if error:
        raise MigLayoutError(error)
    return plan
