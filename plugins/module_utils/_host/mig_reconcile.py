# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bring the MIG layout of a host to what a mig-parted v1 config asks for (pure Python, no Ansible).

The nvidia_mig module and the boot-time restore (roles/mig, gpuops-mig-apply) both call
:func:`reconcile` with a ``run(argv) -> (rc, stdout, stderr)`` callable. It reads the GPUs, their
MIG modes and instances, computes per GPU what has to change, validates everything (config, layout
placeable on the detected product, GPU not in use) before the first call that changes state, then
changes one GPU at a time and verifies it. When a change fails on one GPU, nothing stays half-applied:
it puts back every GPU the run changed (the failed one first), and the error says each GPU's end state
(put back, not changed by the run, or, when putting it back failed too, the exact state it is in).

A MIG mode change that stays pending is handled as mig-parted does (NVIDIA/mig-parted
cmd/nvidia-mig-parted/apply/mode.go, ApplyMigMode: set the modes, then reset the GPUs when a change
is pending, util.ResetAllGPUs; the GPU Operator's reconfigure-mig.sh reboots only when that fails):
after the other GPUs are done, each pending GPU that no compute process uses is reset
(``nvidia-smi -i N -r``), its mode read again and, when the mode took effect, its instances created.
A GPU whose reset fails (a client holds it, or the platform cannot reset it) stays pending: a reboot
is required. Each GPU's report says which happened (``reset``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import find_product
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.errors import MigLayoutError
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import (
    config_entries,
    entry_selects_gpu,
    gpu_layout,
    lint_mig_parted_document,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import (
    PlacedInstance,
    plan_layout,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host import commands
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import (
    CommandFailed,
    HostError,
    MigReconcileError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.model import (
    DISABLED,
    ENABLED,
    GpuState,
    describe_instance,
    describe_layout,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.parsers import (
    parse_gpu_reset,
    parse_mig_change,
    parse_query_compute_apps,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._host.runner import NvidiaSmiRunner
from ansible_collections.gpuops.cluster.plugins.module_utils._host.state import read_host


@dataclass(frozen=True)
class PlacedDevice:
    """A GPU instance as mig-parted creates it (pkg/mig/config/config.go SetMigConfig): its G profile at a
    planned placement, holding one whole-GI compute instance or the compute instances of the MIG devices
    of that profile that share it ("1c.3g.40gb" x3: one 3g.40gb GI, three 1-slice CIs)."""

    placed: PlacedInstance

    @property
    def key(self):
        return (self.placed.profile.name, self.placed.start)

    @property
    def whole(self):
        """One CI spans the GI ("3g.40gb"): what ``-cgi ... -C`` creates; else ``-cci`` ones ("1c.3g.40gb")."""
        return not self.placed.ci_slices

    @property
    def ci_profile_ids(self):
        return tuple(d.ci_profile_id for d in self.placed.devices)

    @property
    def shape(self):
        return _group_shape(self.placed)

    def describe(self):
        placed = self.placed
        return describe_instance(
            placed.profile.name, placed.start, placed.size, None if self.whole else [d.name for d in placed.devices]
        )


def _group_shape(placed):
    """What a planned GPU instance holds: one whole-GI CI, or its CI profile ids."""
    if not placed.ci_slices:
        return (True, ())
    return (False, tuple(sorted(d.ci_profile_id for d in placed.devices)))


def _shape(instance):
    """What a GpuInstance holds, comparable with PlacedDevice.shape: one whole-GI CI, or its CI profile ids."""
    return (True, ()) if instance.full_ci else (False, tuple(sorted(instance.ci_profile_ids)))


@dataclass
class GpuPlan:
    gpu: GpuState
    product: object = None  # catalog Product, None when unknown
    wanted_enabled: bool | None = None  # None: no config entry selects this GPU, leave it alone
    wanted: tuple = ()  # PlacedDevice: the instances kept, then those created in the planner's order
    destroy: tuple = ()  # GpuInstance
    create: tuple = ()  # PlacedDevice
    set_mode: bool | None = None
    awaiting_reset: bool = False  # the wanted mode is pending already: only a reset/reboot helps
    note: str = ""

    @property
    def changes(self):
        return bool(self.destroy or self.create or self.set_mode is not None)

    def after(self):
        if self.wanted_enabled is None:
            return self.gpu.layout()
        if self.awaiting_reset:
            # The run only removes instances; the wanted mode and its instances wait for a reset or reboot.
            kept = [
                i.describe()
                for i in sorted(self.gpu.instances, key=lambda i: i.placement_start)
                if i not in self.destroy
            ]
            return {
                "mig_enabled": self.gpu.mig_mode_current == ENABLED,
                "mig_pending": ENABLED if self.wanted_enabled else DISABLED,
                "instances": kept,
            }
        instances = [d.describe() for d in self.wanted]
        return {
            "mig_enabled": self.wanted_enabled,
            "mig_pending": None,
            "instances": sorted(instances, key=lambda i: int(i["placement"].split(":")[0])),
        }


@dataclass
class Outcome:
    """What happened on the host, returned to the module and the boot-time restore."""

    changed: bool = False
    gpus: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    planned_commands: list = field(default_factory=list)
    pending_gpus: list = field(default_factory=list)
    reset_gpus: list = field(default_factory=list)  # reset, and their pending MIG mode took effect
    busy_processes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    # GPU index -> GpuState to put it back to when the run fails, in the order the run changed them (not returned).
    baselines: dict = field(default_factory=dict)

    def as_dict(self):
        return {
            "changed": self.changed,
            "gpus": self.gpus,
            "commands": self.commands,
            "planned_commands": self.planned_commands,
            "reboot_required": bool(self.pending_gpus),
            "pending_gpus": self.pending_gpus,
            "reset_gpus": self.reset_gpus,
            "busy_processes": self.busy_processes,
            "warnings": self.warnings,
        }


# ---------------------------------------------------------------- reading the state


def read_state(smi, only_gpu=None):
    """GpuState of every GPU (or of ``only_gpu``): --query-gpu, then mig -lgi/-lci where MIG is on."""
    return read_host(smi, only_gpu).gpus


def busy_processes(smi, gpus):
    """Compute processes on the given GPUs: [{gpu, pid, name}] (from --query-compute-apps)."""
    by_uuid = {gpu.uuid: gpu.index for gpu in gpus}
    processes = smi.parsed(commands.query_compute_apps_args(), parse_query_compute_apps)
    return [
        {"gpu": by_uuid[p.gpu_uuid], "pid": p.pid, "name": p.process_name} for p in processes if p.gpu_uuid in by_uuid
    ]


# ---------------------------------------------------------------- what is wanted


def _selected(entries, gpu, product):
    """True when at least one entry selects the GPU (mig-parted leaves unselected GPUs alone)."""
    return any(
        entry_selects_gpu(entry, gpu.index, product, gpu.pci_device_id, gpu.pci_subsystem_id) for entry in entries
    )


def _match(current, placed):
    """Split into (wanted, destroy, create), ``wanted`` the PlacedDevices kept then those created.

    A current GPU instance stays when it is at a planned placement and holds exactly the compute
    instances of one planned GPU instance of its profile (one whole-GI CI, or e.g. three "1c.3g.40gb"
    CIs); mig-parted counts a GPU's MIG devices per CI profile the same way (config.go GetMigConfig).
    Planned GIs of one profile are interchangeable, so the placements left get the CI groups left.
    """
    places = list(placed)
    groups = [(p.profile.name, p.ci_slices) for p in placed]
    kept, destroy = [], []
    for instance in current:
        place = next((p for p in places if (p.profile.name, p.start) == instance.key), None)
        group = next(
            (
                g
                for g in groups
                if place is not None
                and g[0] == instance.profile_name
                and _group_shape(PlacedInstance(place.profile, place.start, g[1])) == _shape(instance)
            ),
            None,
        )
        if group is not None:
            places.remove(place)
            groups.remove(group)
            kept.append(PlacedDevice(PlacedInstance(place.profile, place.start, group[1])))
        else:
            destroy.append(instance)
    create = []
    for place in places:
        group = next(g for g in groups if g[0] == place.profile.name)
        groups.remove(group)
        create.append(PlacedDevice(PlacedInstance(place.profile, place.start, group[1])))
    return tuple(kept + create), tuple(destroy), tuple(create)


def _mode_step(gpu, want):
    """(set_mode, awaiting_reset) to reach MIG mode ``want``, from the current and pending modes."""
    if gpu.mig_mode_current == want:
        return (None if gpu.mig_mode_pending in (want, None) else want == ENABLED), False
    if gpu.mig_mode_pending == want:
        return None, True
    return want == ENABLED, False


def plan_gpu(gpu, document, config_name):
    """GpuPlan for one GPU; MigLayoutError (message naming the GPU) when the config cannot apply."""
    product = find_product(gpu.name, gpu.pci_device_id)
    plan = GpuPlan(gpu=gpu, product=product)
    label = f"GPU {gpu.index} ({gpu.name})"
    if product is None:
        if gpu.mig_mode_current is None:
            plan.note = f"{label} is not in the GPU catalog and has no MIG mode: left alone"
            return plan
        raise MigLayoutError(f"{label} is not in the GPU catalog; valid: a product listed in docs/gpu-catalog.md")
    try:
        entries = config_entries(config_name, product, document)
        if not _selected(entries, gpu, product):
            plan.note = f"{label}: no entry of config {config_name} selects it: left alone"
            return plan
        enabled, devices = gpu_layout(entries, gpu.index, product, gpu.pci_device_id, gpu.pci_subsystem_id)
        if enabled and gpu.mig_mode_current is None:
            raise MigLayoutError(f"nvidia-smi reports no MIG mode; valid: mig-enabled false for {product.name}")
        # plan_layout validates every name (a "1c.3g.40gb" CI must fit its GI) and groups the CIs into GIs.
        placed = plan_layout(product, devices) if enabled else ()
    except MigLayoutError as exc:
        raise MigLayoutError(f"{label}: {exc}") from exc
    plan.wanted_enabled = enabled
    if enabled:
        plan.wanted, plan.destroy, plan.create = _match(gpu.instances, placed)
    if gpu.mig_mode_current is None:
        return plan
    plan.set_mode, plan.awaiting_reset = _mode_step(gpu, ENABLED if enabled else DISABLED)
    if not enabled:
        plan.destroy = gpu.instances
    elif plan.awaiting_reset:
        plan.create = ()  # instances can only be created once the pending mode is effective
    return plan


def _missing_devices(document, config_name, gpus):
    """Errors for GPU indexes the chosen config names but the host does not have."""
    entries = ((document or {}).get("mig-configs") or {}).get(config_name) or []
    present = sorted(gpu.index for gpu in gpus)
    errors = []
    for position, entry in enumerate(entries):
        devices = entry.get("devices", "all")
        missing = [] if devices == "all" else [i for i in devices if i not in present]
        if missing:
            errors.append(
                f"mig-configs.{config_name}[{position}].devices: GPU {', '.join(map(str, missing))} does not exist "
                f"on this host; valid: {', '.join(map(str, present)) or 'no GPU found'}"
            )
    return errors


def plan_all(gpus, document, config_name):
    """GpuPlans for every GPU, or one MigLayoutError listing every GPU's problem."""
    if document:
        errors = lint_mig_parted_document(document)
        if errors:
            raise MigLayoutError("the MIG config document is not valid mig-parted v1: " + "; ".join(errors))
        errors = _missing_devices(document, config_name, gpus)
        if errors:
            raise MigLayoutError("; ".join(errors))
    plans, errors = [], []
    for gpu in gpus:
        try:
            plans.append(plan_gpu(gpu, document, config_name))
        except MigLayoutError as exc:
            errors.append(str(exc))
    if errors:
        raise MigLayoutError("; ".join(errors))
    return plans


# ---------------------------------------------------------------- the calls that change state


def destroy_args(gpu_index, instances, all_instances):
    """-dci/-dgi argv lists: two calls when every instance goes, else one -dci per GI and one -dgi."""
    if not instances:
        return []
    with_cis = [i for i in instances if i.ci_profile_ids]
    if len(instances) == len(all_instances):
        dci = [commands.destroy_compute_instances_args(gpu_index)] if with_cis else []
        return [*dci, commands.destroy_gpu_instances_args(gpu_index)]
    dci = [commands.destroy_compute_instances_args(gpu_index, i.instance_id) for i in with_cis]
    return [*dci, commands.destroy_gpu_instances_args(gpu_index, [i.instance_id for i in instances])]


def new_gpu_instance_placeholder(placed):
    """Stands for the id of a GPU instance not created yet in planned_commands: the driver assigns it."""
    return f"<GI@{placed.start}:{placed.size}>"


def create_args(gpu_index, devices):
    """The creating argv lists, as planned: one -cgi with explicit placements in the planner's order and -C
    for the GPU instances of one whole-GI CI; then for each GPU instance of compute-instance profiles
    ("1c.3g.40gb" x3), as mig-parted creates it (the GPU instance, then its CIs), -cgi without -C and one
    -cci with all its CIs, largest first."""
    whole = [(d.placed.profile.profile_id, d.placed.start) for d in devices if d.whole]
    argvs = [commands.create_gpu_instances_args(gpu_index, whole)] if whole else []
    for device in (d for d in devices if not d.whole):
        placed = device.placed
        argvs += [
            commands.create_gpu_instances_args(gpu_index, [(placed.profile.profile_id, placed.start)], False),
            commands.create_compute_instances_args(
                gpu_index, new_gpu_instance_placeholder(placed), device.ci_profile_ids
            ),
        ]
    return argvs


def _create_gi_with_cis(smi, gpu_index, profile_id, start, ci_profile_ids):
    """-cgi P:START without -C, then -cci in the GPU instance nvidia-smi says it created."""
    out = smi.change(commands.create_gpu_instances_args(gpu_index, [(profile_id, start)], False))
    created = parse_mig_change(out).created_gpu_instances
    if len(created) != 1:
        call = smi.calls[-1]
        raise CommandFailed(call["cmd"], call["rc"], out, "", "no created GPU instance id in the output")
    if ci_profile_ids:
        smi.change(commands.create_compute_instances_args(gpu_index, created[0].instance_id, ci_profile_ids))


def create_instances(smi, gpu_index, devices):
    """Run what :func:`create_args` plans, with the ids of the new GPU instances for -cci."""
    whole = [(d.placed.profile.profile_id, d.placed.start) for d in devices if d.whole]
    if whole:
        smi.change(commands.create_gpu_instances_args(gpu_index, whole))
    for device in (d for d in devices if not d.whole):
        profile = device.placed.profile
        _create_gi_with_cis(smi, gpu_index, profile.profile_id, device.placed.start, device.ci_profile_ids)


def planned_commands(plan):
    """The state-changing argv lists a plan runs, for check mode (binary not included)."""
    argvs = destroy_args(plan.gpu.index, plan.destroy, plan.gpu.instances)
    if plan.set_mode is not None:
        argvs.append(commands.set_mig_mode_args(plan.gpu.index, plan.set_mode))
    return argvs + create_args(plan.gpu.index, plan.create)


def _same_layout(state, plan):
    if plan.wanted_enabled is None:
        return True
    want = ENABLED if plan.wanted_enabled else DISABLED
    if state.mig_mode_current != want:
        return False
    current = sorted((i.key, _shape(i)) for i in state.instances)
    return current == sorted((d.key, d.shape) for d in plan.wanted)


def apply_plan(smi, plan):
    """Run one GPU's plan and verify it. Returns (GpuState after, pending). CommandFailed on failure."""
    index = plan.gpu.index
    for args in destroy_args(index, plan.destroy, plan.gpu.instances):
        smi.change(args)
    if plan.set_mode is not None:
        smi.change(commands.set_mig_mode_args(index, plan.set_mode))
        (now,) = read_state(smi, index)
        if now.mig_mode_current != (ENABLED if plan.set_mode else DISABLED):
            return now, True
    if plan.awaiting_reset:
        (now,) = read_state(smi, index)
        return now, True
    create_instances(smi, index, plan.create)
    (now,) = read_state(smi, index)
    if not _same_layout(now, plan):
        raise CommandFailed([], 0, "", "", f"GPU {index} does not have the wanted layout afterwards: {now.layout()}")
    return now, False


def _modes(gpu):
    """(current, pending) MIG mode; pending is the current one when no change waits."""
    return gpu.mig_mode_current, gpu.mig_mode_pending or gpu.mig_mode_current


def _restore_mode(smi, previous, now, may_reset):
    """Set the MIG mode back, and the GpuState after. Setting the previous mode also cancels a change the run
    left pending (``-mig`` sets the pending mode, nvidia-smi(1)); when the mode then waits for a reset and the
    run reset this GPU, it is reset again, as the run did (mig-parted ApplyMigMode resets after a mode change)."""
    if previous.mig_mode_current is None or _modes(now) == _modes(previous):
        return now
    smi.change(commands.set_mig_mode_args(previous.index, previous.mig_mode_current == ENABLED))
    (now,) = read_state(smi, previous.index)
    if now.mig_mode_current != previous.mig_mode_current and may_reset:
        smi.change(commands.gpu_reset_args(previous.index))
        (now,) = read_state(smi, previous.index)
    return now


def _restore(smi, previous, may_reset=False):
    """Put one GPU back to ``previous`` (GpuState recorded before the run changed it)."""
    (now,) = read_state(smi, previous.index)
    wanted_keys = [(i.key, _shape(i)) for i in previous.instances]
    extra = [i for i in now.instances if (i.key, _shape(i)) not in wanted_keys]
    for args in destroy_args(previous.index, extra, now.instances):
        smi.change(args)
    now = _restore_mode(smi, previous, now, may_reset)
    if now.mig_mode_current != ENABLED:
        return
    present = [(i.key, _shape(i)) for i in now.instances]
    missing = [i for i in previous.instances if (i.key, _shape(i)) not in present]
    full = [i for i in missing if i.full_ci]
    if full:
        smi.change(
            commands.create_gpu_instances_args(previous.index, [(i.profile_id, i.placement_start) for i in full])
        )
    for instance in (i for i in missing if not i.full_ci):
        _create_gi_with_cis(smi, previous.index, instance.profile_id, instance.placement_start, instance.ci_profile_ids)


def _rollback(smi, previous, may_reset=False):
    """(rolled_back, state now or None, problem text): restore and check the result."""
    try:
        _restore(smi, previous, may_reset)
        (now,) = read_state(smi, previous.index)
    except CommandFailed as exc:
        try:
            (now,) = read_state(smi, previous.index)
        except CommandFailed:
            return False, None, f"restoring failed ({exc.reason}) and the GPU can no longer be read"
        return False, now, f"restoring failed: {' '.join(exc.argv)}: {exc.reason}"
    same = now.layout() == previous.layout()
    return same, now, "" if same else "restoring did not bring the previous layout back"


# ---------------------------------------------------------------- the whole run


def _gpu_report(plan, after=None, pending=False):
    return {
        "index": plan.gpu.index,
        "name": plan.gpu.name,
        "uuid": plan.gpu.uuid,
        "product": plan.product.name if plan.product else None,
        "managed": plan.wanted_enabled is not None,
        "changed": plan.changes,
        "pending": pending or plan.awaiting_reset,
        "before": plan.gpu.layout(),
        "after": after.layout() if after is not None else plan.after(),
        "note": plan.note,
        # null: no reset needed; would_try (check mode), done, failed, skipped (compute processes on
        # the GPU) or not_effective (reset, but the mode is still pending): see RESET_RESULTS.
        "reset": None,
        "reset_reason": "",
    }


# What the run did about a MIG mode change that stayed pending (gpus[].reset).
RESET_RESULTS = ("would_try", "done", "failed", "skipped", "not_effective")


def _reset_failure(exc):
    """The reason a reset failed, from nvidia-smi's per-GPU lines when it printed them."""
    failures = parse_gpu_reset(exc.stdout).failures
    if failures:
        return "; ".join(f"{f.reason} ({f.kind})" for f in failures)
    return f"{exc.reason} ({exc.kind})" if exc.kind else exc.reason


class _ChangeFailed(HostError):
    """A step failed once the run may have changed GPUs: every GPU it changed is to be put back.

    ``index`` is the GPU that failed (put back first), None when the step concerned no single GPU.
    """

    def __init__(self, message, index=None, command=None):
        super().__init__(message)
        self.message, self.index, self.command = message, index, command


def _apply_one(smi, plan, position, outcome):
    """Run one GPU's plan and record it in ``outcome``; _ChangeFailed when a call fails."""
    outcome.baselines.setdefault(plan.gpu.index, plan.gpu)
    try:
        after, pending = apply_plan(smi, plan)
    except CommandFailed as exc:
        command = f"`{' '.join(exc.argv)}` (rc {exc.rc}): " if exc.argv else ""
        raise _ChangeFailed(
            f"changing GPU {plan.gpu.index} failed: {command}{exc.reason}", plan.gpu.index, exc.as_dict()
        ) from exc
    outcome.changed = True
    outcome.gpus[position] = _gpu_report(plan, after, pending)
    if pending and plan.gpu.index not in outcome.pending_gpus:
        outcome.pending_gpus.append(plan.gpu.index)
    return after, pending


def _reset_pending(smi, plans, document, config_name, outcome):
    """Reset each GPU whose MIG mode change is pending, then lay it out when the mode took effect.

    As mig-parted, only after every GPU's mode was set; unlike its reset of all GPUs at once, one
    ``-i N -r`` per GPU, and never one that a compute process uses (the reset would kill it).
    """
    pending = [(position, plan) for position, plan in enumerate(plans) if plan.gpu.index in outcome.pending_gpus]
    if not pending:
        return
    try:
        busy = busy_processes(smi, [plan.gpu for _position, plan in pending])
    except CommandFailed as exc:
        raise _ChangeFailed(
            f"listing GPU processes before a GPU reset failed: {exc.reason}", None, exc.as_dict()
        ) from exc
    for position, plan in pending:
        index, report = plan.gpu.index, outcome.gpus[position]
        users = [_process_text(b) for b in busy if b["gpu"] == index]
        if users:
            report["reset"], report["reset_reason"] = "skipped", "compute processes use the GPU: " + ", ".join(users)
            continue
        outcome.baselines.setdefault(index, plan.gpu)
        try:
            smi.change(commands.gpu_reset_args(index))
        except CommandFailed as exc:
            report["reset"], report["reset_reason"] = "failed", _reset_failure(exc)
            continue
        outcome.changed = report["changed"] = True
        (now,) = read_state(smi, index)
        want = ENABLED if plan.wanted_enabled else DISABLED
        if now.mig_mode_current != want or now.mig_mode_pending not in (want, None):
            report["after"] = now.layout()
            report["reset"], report["reset_reason"] = (
                "not_effective",
                "the GPU was reset; its MIG mode is still pending",
            )
            continue
        outcome.pending_gpus.remove(index)
        outcome.reset_gpus.append(index)
        if _entered_pending(plan.gpu):
            # The reset did what a reboot would do to a mode pending from before this run; no call makes a mode
            # pending again, so a failure from here on puts the GPU back to the state the reset left.
            outcome.baselines[index] = now
        # The wanted mode is in effect now: lay the GPU out from the state the reset left.
        try:
            follow = plan_gpu(now, document, config_name)
        except MigLayoutError as exc:
            raise _ChangeFailed(f"after resetting GPU {index}: {exc}", index) from exc
        after = now
        if follow.changes:
            after, _pending = _apply_one(smi, follow, position, outcome)
        final = _gpu_report(plan, after, index in outcome.pending_gpus)
        final.update(changed=True, pending=index in outcome.pending_gpus, reset="done", reset_reason="")
        outcome.gpus[position] = final


def _entered_pending(gpu):
    """True when the GPU had a MIG mode change waiting for a reset or reboot before the run."""
    return gpu.mig_mode_pending not in (None, gpu.mig_mode_current)


# ---------------------------------------------------------------- a failed change: put every GPU back


def _rollback_order(outcome, failed_index):
    """The GPUs the run changed: the failed one first, then the others, the last changed first."""
    order = [index for index in reversed(list(outcome.baselines)) if index != failed_index]
    return ([failed_index] if failed_index in outcome.baselines else []) + order


def _end_report(report, now, rolled_back, problem):
    """A GPU's report after a failed run: ``after`` is the state read back (None: unreadable)."""
    layout = now.layout() if now is not None else None
    return dict(
        report,
        after=layout,
        pending=bool(layout and layout["mig_pending"]),
        rolled_back=rolled_back,  # None: the run did not change this GPU
        rollback_problem=problem,
    )


def end_state_text(report):
    """One GPU's end state after a failed run, in words (the failure message and the boot-time restore's log)."""
    label = f"GPU {report['index']} ({report['uuid']})"
    now = describe_layout(report["after"]) if report["after"] is not None else "unknown"
    if report["rolled_back"] is None:
        return f"{label}: not changed by this run: {now}"
    if report["rolled_back"]:
        return f"{label}: put back to its previous layout: {now}"
    return f"{label}: not put back ({report['rollback_problem']}); it is now in this state: {now}"


def _put_back(smi, plans, outcome, failure):
    """Put back every GPU the run changed; the MigReconcileError that says what failed and each GPU's end state."""
    positions = {plan.gpu.index: position for position, plan in enumerate(plans)}
    for index in _rollback_order(outcome, failure.index):
        position = positions[index]
        rolled_back, now, problem = _rollback(smi, outcome.baselines[index], index in outcome.reset_gpus)
        outcome.gpus[position] = _end_report(outcome.gpus[position], now, rolled_back, problem)
    for position, plan in enumerate(plans):
        if plan.gpu.index not in outcome.baselines:
            outcome.gpus[position] = _end_report(outcome.gpus[position], plan.gpu, None, "")
    outcome.changed = any(call["changes_state"] for call in smi.calls)
    outcome.pending_gpus = [report["index"] for report in outcome.gpus if report["pending"]]
    if not outcome.baselines:
        lead = "no GPU was changed"
    elif all(report["rolled_back"] is not False for report in outcome.gpus):
        lead = "every GPU this run changed was put back to its previous layout"
    else:
        lead = "NOT every GPU this run changed could be put back"
    states = "; ".join(end_state_text(report) for report in outcome.gpus)
    return MigReconcileError(f"{failure.message}; {lead}. Each GPU now: {states}", outcome.as_dict(), failure.command)


def _process_text(process):
    return f"pid {process['pid']} {process['name']}"


def _busy_text(outcome):
    return ", ".join(f"GPU {b['gpu']}: {_process_text(b)}" for b in outcome.busy_processes)


def reconcile(run, binary, document, config_name, check_mode=False):
    """Read, validate, then change the GPUs that differ from the config. Returns Outcome.as_dict().

    Raises MigReconcileError before any change for a bad config, an impossible layout or a busy
    GPU, and after a failed change with every GPU the run changed put back, each GPU's end state in
    the message and in ``gpus`` (``rolled_back``, ``after``). Any other
    error becomes a MigReconcileError too, with the calls made so far and the GPUs' state as read then.
    """
    smi = NvidiaSmiRunner(binary, run)
    outcome = Outcome(commands=smi.calls)
    try:
        return _reconcile(smi, binary, document, config_name, check_mode, outcome)
    except MigReconcileError:
        raise
    except Exception as exc:  # a bug or an output nobody foresaw: never a traceback after a change
        changed = any(call["changes_state"] for call in smi.calls)
        outcome.changed = changed
        try:
            now = [{"index": gpu.index, "name": gpu.name, "after": gpu.layout()} for gpu in read_state(smi)]
            state = f"the GPUs are now: {now}"
        except Exception as read_exc:
            state = f"the GPUs can no longer be read ({read_exc})"
        done = "after changing the GPUs" if changed else "before any change"
        raise MigReconcileError(
            f"unexpected error {done}: {type(exc).__name__}: {exc}; {state}", outcome.as_dict()
        ) from exc


def _reconcile(smi, binary, document, config_name, check_mode, outcome):
    try:
        gpus = read_state(smi)
    except CommandFailed as exc:
        raise MigReconcileError(f"reading the GPUs failed: {exc.reason}", outcome.as_dict(), exc.as_dict()) from exc
    try:
        plans = plan_all(gpus, document, config_name)
    except MigLayoutError as exc:
        raise MigReconcileError(f"nothing was changed: {exc}", outcome.as_dict()) from exc
    outcome.warnings += [p.note for p in plans if p.note]
    changing = [p for p in plans if p.changes]
    # A GPU whose wanted mode is pending stays pending after the run, whatever else the run changes.
    outcome.pending_gpus = [p.gpu.index for p in plans if p.awaiting_reset]
    if changing:
        try:
            outcome.busy_processes = busy_processes(smi, [p.gpu for p in changing])
        except CommandFailed as exc:
            raise MigReconcileError(
                f"listing GPU processes failed: {exc.reason}", outcome.as_dict(), exc.as_dict()
            ) from exc
    outcome.gpus = [_gpu_report(p) for p in plans]
    outcome.planned_commands = [[binary, *args] for p in changing for args in planned_commands(p)]
    if check_mode:
        # A GPU whose wanted mode is pending already gets a reset in a real run (nothing tells
        # beforehand whether a mode change the run makes will stay pending, nor whether a reset works).
        for position, plan in enumerate(plans):
            if plan.awaiting_reset:
                outcome.gpus[position]["reset"] = "would_try"
                outcome.planned_commands.append([binary, *commands.gpu_reset_args(plan.gpu.index)])
        outcome.changed = bool(changing) or bool(outcome.pending_gpus)
        if outcome.busy_processes:
            outcome.warnings.append(f"GPUs in use; a real run fails unless they are freed first: {_busy_text(outcome)}")
        return outcome.as_dict()
    if outcome.busy_processes:
        raise MigReconcileError(
            f"GPUs in use, nothing was changed: {_busy_text(outcome)}; stop these processes (or the services that "
            "run them) and run again",
            outcome.as_dict(),
        )
    try:
        for position, plan in enumerate(plans):
            if plan.changes:
                _apply_one(smi, plan, position, outcome)
        _reset_pending(smi, plans, document, config_name, outcome)
    except _ChangeFailed as failure:
        raise _put_back(smi, plans, outcome, failure) from failure
    return outcome.as_dict()
