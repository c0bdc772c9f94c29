# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for nvidia-smi on test hosts without GPUs: the MIG rules, real output formats.

State lives in a JSON file (env NVSMI_DOUBLE_STATE, default /var/lib/nvidia-smi-double/state.json);
every invocation is appended to a log beside it (env NVSMI_DOUBLE_LOG, one argv per line, joined by
spaces) so tests can count calls. GPU products, MIG profiles and placements come from the
collection's GPU catalog (``_gpu.catalog``), found through env NVSMI_DOUBLE_COLLECTIONS, the folder
of this file, or the repository's .build/collections (the folder that holds ``ansible_collections``).

Modelled on recorded real outputs (tests/fixtures/nvidia-smi and the published folder):
- ``-i N -mig 1|0``: applied at once, or left pending with the real warning while the GPU has
  clients (state ``clients``); a pending mode sets ``reset_required`` until ``--simulate-reboot``
  or a reset. A GPU marked ``pending_needs_reset`` (``--double-pending-needs-reset GPU``, as GPUs
  passed through to a VM) leaves every mode change pending, without clients, with the recorded
  warning (a100-unspecified/mig-enable-warning-pending-enable-not-supported.txt; the disable form
  is that text with "disable", unrecorded).
- ``[-i N] -r`` / ``--gpu-reset``: fails while a selected GPU has clients or compute processes,
  printing the recorded text (a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt, two
  GPUs; the one-GPU sentence "1 device is ... using this device" is NOT recorded, it is a guess),
  and resets none of them; else every selected GPU's pending mode takes effect, its GPU and compute
  instances vanish, and it prints the recorded lines (a100-sxm4-80gb/gpu-reset-r-success-2gpus.txt,
  a100-pcie-40gb/gpu-reset-i2-success.txt). Exit status of a failed reset: not recorded; the
  double uses 255 (nvidia-smi(1): other error). "Resetting GPU ... is not supported." (VM
  passthrough, a100-unspecified/gpu-reset-error-not-supported.txt) is not modelled.
- ``mig -cgi P[:START],... [-C]``: profile ids or names, max instances, allowed placements and
  overlaps. GI ids number every (size, start) slot of the geometry, largest slots first; this
  matches every recording. Without a start the double picks the free placement that blocks the
  fewest still-free placements of all profiles, lowest start first. That reproduces the recorded
  sequences of one profile at a time (GI ids 13,11,12,7,8,9,10 for seven 1g.10gb on A100 and
  H100) but NOT mixed ones: for ``-cgi 9,14,19 -C`` on an A100 80GB PCIe the real driver gave
  3g@0, 2g@4, 1g@6 (GI ids 1,5,13; a100-80gb-pcie/mig-cgi-9-14-19-C.txt) where the double gives
  3g@4, 2g@0, 1g@2 (GI ids 2,3,9). No single rule found explains both recordings;
  tests/unit/doubles/test_nvidia_smi_double.py asserts this difference. The collection always passes
  explicit placements, so its own calls do not depend on the choice.
- ``mig -i N -gi G -cci P,...``: compute instances by CI profile id or name (``1c.3g.40gb``, or
  the GI's own name for the whole GI), lowest free slot and id first, output as recorded
  (a100-80gb-pcie/mig-cci-1c3g40gb-x2.txt).
- ``mig -dci`` / ``-dgi``: refuse with "In use by another client" while a process runs on the GI.
- ``--simulate-reboot``: GPU and compute instances vanish, pending MIG modes take effect.
- ``--double-fail GPU -cgi|-cci [REASON|off]`` (:func:`inject_failure`): every later ``-cgi`` (or ``-cci``) on
  that GPU fails at its first instance with REASON (default "In use by another client"), in the output form
  nvidia-smi prints (gh200-480gb/mig-cgi-error-in-use-by-another-client.txt) and exit status 255; ``off``
  ends it. Other GPUs are not affected.
- ``pci.sub_device_id`` / ``<pci_sub_system_id>``: the GPU's ``pci_sub_system_id`` (state), seeded from
  RECORDED_SUBSYSTEM_IDS; None prints N/A.
Exit codes follow nvidia-smi(1): 0 success, 2 invalid argument, 6 not found, 255 other errors
(the recordings do not show them). Engine columns of -lgip (SM, CE, DEC...) are not modelled.
"""

# ruff: noqa: UP031 -- printf formats (%2d, %-11s) mirror the fixed-width fields nvidia-smi prints
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import uuid as uuidlib

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_STATE = "/var/lib/nvidia-smi-double/state.json"
IN_USE = "In use by another client"
NO_RESOURCES = "Insufficient Resources"


def load_catalog():
    # In a checkout this file is tests/doubles/nvidia_smi/ (the repository three folders up), in a
    # collection tree (ansible-test) it lies inside ansible_collections/; on a test host it stands
    # alone, beside the ansible_collections folder it was given.
    repository = HERE.parents[2] if len(HERE.parents) > 2 else HERE
    candidates = [
        os.environ.get("NVSMI_DOUBLE_COLLECTIONS", ""),
        str(HERE),
        str(repository / ".build" / "collections"),
        *(str(folder.parent) for folder in HERE.parents if folder.name == "ansible_collections"),
    ]
    for folder in candidates:
        if folder and (pathlib.Path(folder) / "ansible_collections").is_dir() and folder not in sys.path:
            sys.path.insert(0, folder)
    from ansible_collections.gpuops.cluster.plugins.module_utils._gpu import catalog

    return catalog


class Failure(Exception):
    def __init__(self, text, rc=255):
        super().__init__(text)
        self.text, self.rc = text, rc


# ---------------------------------------------------------------- state


def state_path():
    return pathlib.Path(os.environ.get("NVSMI_DOUBLE_STATE", DEFAULT_STATE))


# PCI subsystem id as recorded for the device id the double reports (--query-gpu pci.sub_device_id,
# -q -x <pci><pci_sub_system_id>); a product without a recording reports N/A, as nvidia-smi does for an
# unavailable value. Sources: a100-sxm4-80gb/nvidia-smi-q-x.txt, tesla-t4/nvidia-smi-q-x.txt,
# h100-80gb-hbm3/query-gpu-csv-allfields-mig.txt, h200/query-gpu-csv-allfields-mig.txt,
# l40s/query-gpu-csv-allfields.txt.
RECORDED_SUBSYSTEM_IDS = {
    "0x20B210DE": "0x147F10DE",
    "0x1EB810DE": "0x12A210DE",
    "0x233010DE": "0x16C110DE",
    "0x233510DE": "0x18BE10DE",
    "0x26B910DE": "0x185110DE",
}


def new_state(product, count, driver_version="535.183.01", cuda_version="12.2"):
    """A host with ``count`` GPUs of one product, MIG disabled, no clients.

    A product the GPU catalog lacks (a GeForce card, say) is played by its name alone, as the plan plans
    it: whole GPUs, no MIG, no recorded PCI ids.
    """
    catalog = load_catalog()
    found = catalog.find_product(product) or catalog.unknown_product(product)
    gpus = []
    for index in range(count):
        digest = hashlib.sha256(("%s/%d" % (found.name, index)).encode()).hexdigest()
        gpus.append(
            {
                "index": index,
                "product": found.name,
                "uuid": "GPU-" + str(uuidlib.UUID(digest[:32])),
                "pci_bus_id": "00000000:%02X:00.0" % (0x07 + 0x10 * index),
                "pci_sub_system_id": RECORDED_SUBSYSTEM_IDS.get(next(iter(found.pci_device_ids), "")),
                "mig_current": False,
                "mig_pending": False,
                "clients": [],
                "pending_needs_reset": False,
                "gpu_instances": [],
            }
        )
    return {
        "driver_version": driver_version,
        "cuda_version": cuda_version,
        "reset_required": False,
        "gpus": gpus,
        "processes": [],
    }


# Calls --double-fail can make fail, per GPU (state "fail": {operation: reason}).
FAILABLE = ("-cgi", "-cci")


def inject_failure(state, gpu_index, operation, reason=IN_USE):
    """Make every later OPERATION on GPU ``gpu_index`` fail with REASON; REASON "off" ends it."""
    if operation not in FAILABLE:
        raise ValueError(f"--double-fail: {operation!r} cannot be made to fail; valid: {', '.join(FAILABLE)}")
    failures = state["gpus"][gpu_index].setdefault("fail", {})
    if reason == "off":
        failures.pop(operation, None)
    else:
        failures[operation] = reason


def injected_failure(gpu, operation):
    """Failure of an OPERATION made to fail on the GPU by inject_failure, else None."""
    reason = gpu.get("fail", {}).get(operation)
    return Failure(reason) if reason else None


def load_state():
    return json.loads(state_path().read_text(encoding="utf-8"))


def save_state(state):
    """Replaces the state file whole: a reader running at the same time never sees it half written."""
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, path)


def log_call(argv):
    path = pathlib.Path(os.environ.get("NVSMI_DOUBLE_LOG", str(state_path().with_name("calls.log"))))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        log.write(" ".join(argv) + "\n")


# ---------------------------------------------------------------- MIG geometry


def product_of(gpu):
    catalog = load_catalog()
    return catalog.find_product(gpu["product"]) or catalog.unknown_product(gpu["product"])


def slot_ids(mig):
    """GI id of every (size, start) slot: largest slots first, then by start (A100/H100 numbering)."""
    slots = sorted(
        {(p.memory_slices, s) for p in mig.profiles for s in p.placements}, key=lambda slot: (-slot[0], slot[1])
    )
    return {slot: number for number, slot in enumerate(slots)}


def used_slices(gpu):
    return {s for gi in gpu["gpu_instances"] for s in range(gi["start"], gi["start"] + gi["size"])}


def free_placements(mig, gpu, profile):
    used = used_slices(gpu)
    return [s for s in profile.placements if not used & set(range(s, s + profile.memory_slices))]


def blocked_by(mig, gpu, start, size):
    """How many still-free placements of all profiles a new instance at start:size would take away."""
    taken = set(range(start, start + size))
    return sum(
        1 for p in mig.profiles for s in free_placements(mig, gpu, p) if taken & set(range(s, s + p.memory_slices))
    )


def resolve_profile(mig, token):
    name = token[4:] if token.startswith("MIG ") else token
    profile = mig.profile_by_id(int(name)) if name.isdigit() else mig.profile(name)
    if profile is None:
        raise Failure("Invalid Argument", 2)
    return profile


def ci_profile_id(profile):
    """Compute-instance profile id of the default (whole-GI) CI, as -C prints it."""
    if profile.compute_slices == 1 and profile.memory_slices == 2:
        return 7  # NVML 1_SLICE_REV1, recorded for 1g.24gb on GH200 (mig-cgi-15x3-C-success.txt)
    return {1: 0, 2: 1, 3: 2, 4: 3, 7: 4, 8: 5, 6: 6}[profile.compute_slices]


def create_gpu_instance(gpu, token, with_ci):
    """Create one GI (and its default CI); returns the lines nvidia-smi prints."""
    failure = injected_failure(gpu, "-cgi")
    if failure:
        raise failure
    product = product_of(gpu)
    mig = product.mig
    text, _colon, start_text = token.partition(":")
    profile = resolve_profile(mig, text)
    existing = [gi for gi in gpu["gpu_instances"] if gi["profile_id"] == profile.profile_id]
    free = free_placements(mig, gpu, profile)
    if start_text:
        start = int(start_text)
        if start not in profile.placements:
            raise Failure("Invalid Argument", 2)
        if start not in free:
            raise Failure(NO_RESOURCES)
    elif free:
        start = min(free, key=lambda s: (blocked_by(mig, gpu, s, profile.memory_slices), s))
    if len(existing) >= profile.max_instances or not free:
        raise Failure(NO_RESOURCES)
    gi_id = slot_ids(mig)[(profile.memory_slices, start)]
    instance = {
        "id": gi_id,
        "profile_id": profile.profile_id,
        "start": start,
        "size": profile.memory_slices,
        "compute_instances": [],
    }
    gpu["gpu_instances"].append(instance)
    index = gpu["index"]
    lines = [
        "Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)"
        % (gi_id, index, profile.name, profile.profile_id)
    ]
    if with_ci:
        ci = {
            "id": 0,
            "profile_id": ci_profile_id(profile),
            "name": profile.name,
            "start": 0,
            "size": profile.compute_slices,
        }
        instance["compute_instances"].append(ci)
        lines.append(
            "Successfully created compute instance ID %2d on GPU %2d GPU instance ID %2d using profile MIG %s (ID %2d)"
            % (0, index, gi_id, profile.name, ci["profile_id"])
        )
    return lines


# CI profile id -> compute slices (NVML COMPUTE_INSTANCE_PROFILE_*: 1, 2, 3, 4, 7, 8, 6, 1 rev1).
CI_SLICES_BY_ID = {0: 1, 1: 2, 2: 3, 3: 4, 4: 7, 5: 8, 6: 6, 7: 1}


def resolve_ci_profile(gi_profile, token):
    """(compute slices, CI profile id, name) of a -cci token for a GI of ``gi_profile``."""
    name = token[4:] if token.startswith("MIG ") else token
    if name.isdigit():
        slices = CI_SLICES_BY_ID.get(int(name))
    elif name == gi_profile.name:
        slices = gi_profile.compute_slices
    else:
        prefix, _dot, rest = name.partition(".")
        slices = int(prefix[:-1]) if prefix[:-1].isdigit() and prefix.endswith("c") else None
        slices = slices if rest == gi_profile.name else None
    if slices is None or slices > gi_profile.compute_slices:
        raise Failure("Invalid Argument", 2)
    whole = slices == gi_profile.compute_slices
    profile_id = ci_profile_id(gi_profile) if whole else {1: 0, 2: 1, 3: 2, 4: 3, 6: 6}[slices]
    return slices, profile_id, gi_profile.name if whole else "%dc.%s" % (slices, gi_profile.name)


def create_compute_instance(gpu, gi, token):
    """Create one CI in a GI at the lowest free start (a multiple of its size); the line nvidia-smi prints."""
    failure = injected_failure(gpu, "-cci")
    if failure:
        raise failure
    gi_profile = product_of(gpu).mig.profile_by_id(gi["profile_id"])
    slices, profile_id, name = resolve_ci_profile(gi_profile, token)
    used = {s for ci in gi["compute_instances"] for s in range(ci["start"], ci["start"] + ci["size"])}
    starts = [
        s for s in range(0, gi_profile.compute_slices - slices + 1, slices) if not used & set(range(s, s + slices))
    ]
    if not starts:
        raise Failure(NO_RESOURCES)
    ci_id = min(set(range(8)) - {ci["id"] for ci in gi["compute_instances"]})
    gi["compute_instances"].append(
        {"id": ci_id, "profile_id": profile_id, "name": name, "start": starts[0], "size": slices}
    )
    line = "Successfully created compute instance ID %2d on GPU %2d GPU instance ID %2d using profile MIG %s (ID %2d)"
    return line % (ci_id, gpu["index"], gi["id"], name, profile_id)


def cmd_create_ci(state, args):
    tokens = args[args.index("-cci") + 1].split(",")
    wanted = _ids(args, "-gi")
    lines = []
    for gpu in mig_gpus(state, args):
        gis = [gi for gi in gpu["gpu_instances"] if wanted is None or gi["id"] in wanted]
        if not gis:
            raise Failure("No GPU instances found.", 6)
        for gi in sorted(gis, key=lambda g: g["id"]):
            for token in tokens:
                try:
                    lines.append(create_compute_instance(gpu, gi, token))
                except Failure as failure:
                    lines += [
                        "Unable to create a compute instance on GPU %2d GPU instance ID %2d using profile %s: %s"
                        % (gpu["index"], gi["id"], token, failure.text),
                        f"Failed to create compute instances: {failure.text}",
                    ]
                    return "\n".join(lines), failure.rc
    return "\n".join(lines), 0


def gi_busy(state, gpu, gi):
    return any(p["gpu"] == gpu["index"] and p.get("gpu_instance") == gi["id"] for p in state["processes"])


# ---------------------------------------------------------------- commands


def selected(state, args):
    if "-i" in args:
        wanted = {int(i) for i in args[args.index("-i") + 1].split(",")}
        gpus = [g for g in state["gpus"] if g["index"] in wanted]
        if not gpus:
            raise Failure("No devices were found", 6)
        return gpus
    return state["gpus"]


def cmd_set_mig(state, args):
    enable = args[args.index("-mig") + 1] in ("1", "ENABLED", "Enabled")
    out = []
    for gpu in selected(state, args):
        product = product_of(gpu)
        bus = gpu["pci_bus_id"]
        verb = "enable" if enable else "disable"
        if product.mig is None:
            out += [
                f"Unable to {verb} MIG Mode for GPU {bus}: Not Supported",
                "Treating as warning and moving on.",
            ]
        elif gpu.get("pending_needs_reset") and enable != gpu["mig_current"]:
            # Recorded in VM passthrough: a100-unspecified/mig-enable-warning-pending-enable-not-supported.txt
            gpu["mig_pending"] = enable
            state["reset_required"] = True
            out += [
                f"Warning: MIG mode is in pending {verb} state for GPU {bus}:Not Supported",
                f"Reboot the system or try nvidia-smi --gpu-reset to make MIG mode effective on GPU {bus}",
            ]
        elif gpu["clients"] and enable != gpu["mig_current"]:
            if not enable:
                return "\n".join(
                    [
                        *out,
                        f"Unable to disable MIG Mode for GPU {bus}: {IN_USE}",
                        "Terminating early due to previous errors.",
                    ]
                ), 255
            gpu["mig_pending"] = True
            state["reset_required"] = True
            out += [
                f"Warning: MIG mode is in pending enable state for GPU {bus}:{IN_USE}",
                f"{bus} is currently being used by one or more other processes (e.g. CUDA application or a monitoring"
                " application such as another instance of nvidia-smi). Please first kill all processes using the"
                " device and retry the command or reboot the system to make MIG mode effective.",
            ]
        else:
            gpu["mig_current"] = gpu["mig_pending"] = enable
            if not enable:
                gpu["gpu_instances"] = []
            out.append("{} MIG Mode for GPU {}".format("Enabled" if enable else "Disabled", bus))
    return "\n".join([*out, "All done."]), 0


def mig_gpus(state, args):
    gpus = [g for g in selected(state, args) if g["mig_current"]]
    if not gpus:
        raise Failure("No MIG-enabled devices found.", 6)
    return gpus


def cmd_create(state, args):
    tokens = args[args.index("-cgi") + 1].split(",")
    lines = []
    for gpu in mig_gpus(state, args):
        for token in tokens:
            try:
                lines += create_gpu_instance(gpu, token, "-C" in args)
            except Failure as failure:
                profile = token.partition(":")[0]
                lines += [
                    "Unable to create a GPU instance on GPU %2d using profile %s: %s"
                    % (gpu["index"], profile, failure.text),
                    f"Failed to create GPU instances: {failure.text}",
                ]
                return "\n".join(lines), failure.rc
    return "\n".join(lines), 0


def _ids(args, flag):
    return None if flag not in args else {int(x) for x in args[args.index(flag) + 1].split(",")}


def cmd_destroy_ci(state, args):
    lines = []
    wanted_gi, wanted_ci = _ids(args, "-gi"), _ids(args, "-ci")
    for gpu in mig_gpus(state, args):
        for gi in sorted(gpu["gpu_instances"], key=lambda g: g["id"]):
            if wanted_gi is not None and gi["id"] not in wanted_gi:
                continue
            for ci in list(gi["compute_instances"]):
                if wanted_ci is not None and ci["id"] not in wanted_ci:
                    continue
                if gi_busy(state, gpu, gi):
                    reason = IN_USE
                    lines += [
                        "Unable to destroy compute instance ID %2d from GPU %2d GPU instance ID %2d: %s"
                        % (ci["id"], gpu["index"], gi["id"], reason),
                        f"Failed to destroy compute instances: {reason}",
                    ]
                    return "\n".join(lines), 255
                gi["compute_instances"].remove(ci)
                lines.append(
                    "Successfully destroyed compute instance ID %2d from GPU %2d GPU instance ID %2d"
                    % (ci["id"], gpu["index"], gi["id"])
                )
    if not lines:
        return "No compute instances found.", 6
    return "\n".join(lines), 0


def cmd_destroy_gi(state, args):
    lines = []
    wanted = _ids(args, "-gi")
    for gpu in mig_gpus(state, args):
        for gi in sorted(gpu["gpu_instances"], key=lambda g: g["id"]):
            if wanted is not None and gi["id"] not in wanted:
                continue
            if gi["compute_instances"] or gi_busy(state, gpu, gi):
                lines += [
                    "Unable to destroy GPU instance ID %2d from GPU %2d: %s" % (gi["id"], gpu["index"], IN_USE),
                    f"Failed to destroy GPU instances: {IN_USE}",
                ]
                return "\n".join(lines), 255
            gpu["gpu_instances"].remove(gi)
            lines.append("Successfully destroyed GPU instance ID %2d from GPU %2d" % (gi["id"], gpu["index"]))
    if not lines:
        return "No GPU instances found.", 6
    return "\n".join(lines), 0


RESET_IN_USE_TAIL = (
    " currently being used by one or more other processes (e.g., Fabric Manager, CUDA application, graphics"
    " application such as an X server, or a monitoring application such as another instance of nvidia-smi)."
    " Please first kill all processes using %s and all compute applications running in the system."
)


def cmd_reset(state, args):
    """``[-i N] -r`` / ``--gpu-reset``: all selected GPUs reset, or none when one of them is in use."""
    gpus = selected(state, args)
    busy = [g for g in gpus if g["clients"] or any(p["gpu"] == g["index"] for p in state["processes"])]
    if busy:
        lines = ["The following GPUs could not be reset:"]
        lines += ["  GPU %s: %s" % (g["pci_bus_id"], IN_USE) for g in busy]
        if len(busy) == 1:  # unrecorded: the recording shows two GPUs
            lines += ["", "1 device is" + RESET_IN_USE_TAIL % "this device"]
        else:
            lines += ["", "%d devices are" % len(busy) + RESET_IN_USE_TAIL % "these devices"]
        return "\n".join(lines), 255
    for gpu in gpus:
        gpu["mig_current"] = gpu["mig_pending"]
        gpu["gpu_instances"] = []
    state["reset_required"] = any(g["mig_current"] != g["mig_pending"] for g in state["gpus"])
    return "\n".join(["GPU %s was successfully reset." % g["pci_bus_id"] for g in gpus] + ["All done."]), 0


def simulate_reboot(state):
    """MIG mode survives a reboot (pending modes take effect); GPU and compute instances do not."""
    for gpu in state["gpus"]:
        gpu["mig_current"] = gpu["mig_pending"]
        gpu["gpu_instances"] = []
        gpu["clients"] = []
    state["processes"] = []
    state["reset_required"] = False
    return "", 0


def run(argv, state):
    """(stdout, rc) of one invocation; ``state`` is changed in place."""
    from nvsmi_double_render import render

    args = list(argv)
    try:
        if args == ["--simulate-reboot"]:
            return simulate_reboot(state)
        if "-r" in args or "--gpu-reset" in args:
            return cmd_reset(state, args)
        if "-mig" in args and args[0] != "mig":
            return cmd_set_mig(state, args)
        if args and args[0] == "mig":
            if "-cgi" in args:
                return cmd_create(state, args)
            if "-cci" in args:
                return cmd_create_ci(state, args)
            if "-dci" in args:
                return cmd_destroy_ci(state, args)
            if "-dgi" in args:
                return cmd_destroy_gi(state, args)
            gpus = selected(state, args)
            if "-lgip" in args or "-lgipp" in args:
                if not any(product_of(g).mig for g in gpus):
                    raise Failure("No MIG-supported devices found.", 6)
                gpus = [g for g in gpus if product_of(g).mig]
            else:
                gpus = mig_gpus(state, args)
            return render(args, state, gpus)
        return render(args, state, selected(state, args))
    except Failure as failure:
        return failure.text, failure.rc


# ---------------------------------------------------------------- a container's view


def visible_view(state, value):
    """What nvidia-smi sees in a container given NVIDIA_VISIBLE_DEVICES=value, as the NVIDIA container
    runtime documents it: ``all``; ``none`` (driver, no GPU), ``void`` or empty (no GPU); or a
    comma-separated list of GPU indexes, GPU UUIDs and MIG UUIDs. Visible GPUs are numbered from 0 in
    the host's order; a GPU reached through MIG UUIDs shows only those MIG devices. An unknown device
    raises Failure with libnvidia-container's "unknown device" error (its exact text is not recorded)."""
    from nvsmi_double_render import mig_uuid

    view = json.loads(json.dumps(state))
    value = value.strip()
    if value == "all":
        return view
    wanted = [] if value in ("", "none", "void") else [token.strip() for token in value.split(",") if token.strip()]
    whole, parts, found = set(), {}, set()
    for gpu in state["gpus"]:
        for token in wanted:
            if token in (str(gpu["index"]), gpu["uuid"]):
                whole.add(gpu["index"])
                found.add(token)
            for gi in gpu["gpu_instances"]:
                for ci in gi["compute_instances"]:
                    if token == mig_uuid(gpu, gi, ci):
                        parts.setdefault(gpu["index"], set()).add((gi["id"], ci["id"]))
                        found.add(token)
    unknown = [token for token in wanted if token not in found]
    if unknown:
        raise Failure(f"nvidia-container-cli: device error: {unknown[0]}: unknown device", 1)
    gpus = []
    for gpu in view["gpus"]:
        if gpu["index"] in whole:
            gpus.append(gpu)
        elif gpu["index"] in parts:
            keep = parts[gpu["index"]]
            for gi in gpu["gpu_instances"]:
                gi["compute_instances"] = [ci for ci in gi["compute_instances"] if (gi["id"], ci["id"]) in keep]
            gpu["gpu_instances"] = [gi for gi in gpu["gpu_instances"] if gi["compute_instances"]]
            gpus.append(gpu)
    for number, gpu in enumerate(gpus):
        gpu["index"] = number
    view["gpus"] = gpus
    return view
