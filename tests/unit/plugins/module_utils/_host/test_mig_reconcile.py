# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The MIG reconcile engine against the nvidia-smi test double and recorded real outputs."""

import pathlib
import sys

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._host import mig_reconcile as engine
from ansible_collections.gpuops.cluster.plugins.module_utils._host.commands import QUERY_GPU_FIELDS
from ansible_collections.gpuops.cluster.plugins.module_utils._host.errors import MigReconcileError

REPO = pathlib.Path(__file__).resolve().parents[5]
DOUBLE_DIR = REPO / "tests" / "doubles" / "nvidia_smi"
sys.path.insert(0, str(DOUBLE_DIR))
import nvsmi_double  # noqa: E402

SMI = "/usr/bin/nvidia-smi"
A100 = "NVIDIA A100-SXM4-80GB"
MIXED = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
CHANGING = ("-cgi", "-cci", "-dci", "-dgi", "-mig", "-r", "--gpu-reset")
RESET_0 = [SMI, "-i", "0", "-r"]


def document(**configs):
    return {"version": "v1", "mig-configs": configs}


def all_gpus(mig_devices=None, enabled=True):
    entry = {"devices": "all", "mig-enabled": enabled}
    if mig_devices is not None:
        entry["mig-devices"] = mig_devices
    return [entry]


class DoubleHost:
    """An in-process host whose nvidia-smi is the test double; records argv of every call."""

    def __init__(self, product=A100, count=2):
        self.state = nvsmi_double.new_state(product, count)
        self.calls = []
        self.before_call = None  # hook(argv) run before a call, to act as another client

    def run(self, argv):
        self.calls.append(list(argv))
        if self.before_call:
            self.before_call(argv)
        stdout, rc = nvsmi_double.run(argv[1:], self.state)
        return rc, stdout + "\n" if stdout else "", ""

    def smi(self, *args):
        """Run nvidia-smi on the host outside the engine (not recorded)."""
        stdout, rc = nvsmi_double.run(list(args), self.state)
        assert rc == 0, stdout
        return stdout

    def changing_calls(self):
        return [call for call in self.calls if any(flag in call for flag in CHANGING)]

    def layout(self, index):
        gpu = self.state["gpus"][index]
        return sorted((gi["profile_id"], gi["start"], len(gi["compute_instances"])) for gi in gpu["gpu_instances"])

    def reconcile(self, doc, name, check_mode=False):
        self.calls = []
        return engine.reconcile(self.run, SMI, doc, name, check_mode=check_mode)


# Profile ids of the A100 80GB (a100-80gb-pcie-seed004-mig-lgip-i0.txt): 3g.40gb 9, 2g.20gb 14, 1g.10gb 19.
MIXED_LAYOUT = [(9, 4, 1), (14, 0, 1), (19, 2, 1), (19, 3, 1)]


@pytest.fixture
def host():
    return DoubleHost()


def test_layout_from_mig_disabled_enables_mode_then_creates_at_planned_placements(host):
    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert result["changed"] is True
    assert host.changing_calls() == [
        [SMI, "-i", "0", "-mig", "1"],
        [SMI, "mig", "-i", "0", "-cgi", "9:4,14:0,19:2,19:3", "-C"],
        [SMI, "-i", "1", "-mig", "1"],
        [SMI, "mig", "-i", "1", "-cgi", "9:4,14:0,19:2,19:3", "-C"],
    ]
    assert host.layout(0) == host.layout(1) == MIXED_LAYOUT
    assert result["gpus"][0]["before"] == {"mig_enabled": False, "mig_pending": None, "instances": []}
    assert result["gpus"][0]["after"]["instances"][-1] == {"profile": "3g.40gb", "placement": "4:4"}
    assert result["reboot_required"] is False


def test_converged_host_gets_queries_only(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert result["changed"] is False
    assert host.changing_calls() == []
    assert [call[1:] for call in host.calls] == [
        ["--query-gpu=" + ",".join(QUERY_GPU_FIELDS), "--format=csv,noheader,nounits"],
        ["mig", "-lgi"],
        ["mig", "-lci"],
    ]
    assert all(not c["changes_state"] for c in result["commands"])


def test_check_mode_plans_without_changing_and_reports_before_and_after(host):
    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed", check_mode=True)

    assert result["changed"] is True
    assert host.changing_calls() == []
    assert host.state["gpus"][0]["mig_current"] is False
    assert result["planned_commands"][:2] == [
        [SMI, "-i", "0", "-mig", "1"],
        [SMI, "mig", "-i", "0", "-cgi", "9:4,14:0,19:2,19:3", "-C"],
    ]
    assert [i["profile"] for i in result["gpus"][1]["after"]["instances"]] == [
        "2g.20gb",
        "1g.10gb",
        "1g.10gb",
        "3g.40gb",
    ]


def test_builtin_config_needs_no_document(host):
    result = host.reconcile(None, "all-1g.10gb")

    assert result["changed"] is True
    assert host.layout(0) == [(19, start, 1) for start in range(7)]


def test_relayout_destroys_all_then_creates_without_touching_the_mode(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    host.reconcile(None, "all-7g.80gb")

    assert host.changing_calls()[:3] == [
        [SMI, "mig", "-i", "0", "-dci"],
        [SMI, "mig", "-i", "0", "-dgi"],
        [SMI, "mig", "-i", "0", "-cgi", "0:0", "-C"],
    ]
    assert len(host.changing_calls()) == 6
    assert not any("-mig" in call for call in host.changing_calls())


def test_relayout_keeps_instances_at_wanted_placements(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    ids = {gi["start"]: gi["id"] for gi in host.state["gpus"][0]["gpu_instances"]}

    host.reconcile(None, "all-1g.10gb")

    assert host.changing_calls()[:4] == [
        [SMI, "mig", "-i", "0", "-gi", str(ids[4]), "-dci"],
        [SMI, "mig", "-i", "0", "-gi", str(ids[0]), "-dci"],
        [SMI, "mig", "-i", "0", "-gi", f"{ids[4]},{ids[0]}", "-dgi"],
        [SMI, "mig", "-i", "0", "-cgi", "19:0,19:1,19:4,19:5,19:6", "-C"],
    ]
    assert host.layout(0) == [(19, start, 1) for start in range(7)]


def test_instances_already_at_wanted_placements_are_kept(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    ids_before = {gi["start"]: gi["id"] for gi in host.state["gpus"][0]["gpu_instances"]}

    host.reconcile(document(other=all_gpus({"3g.40gb": 1, "1g.10gb": 4})), "other")

    two_g = ids_before[0]
    assert host.changing_calls()[:3] == [
        [SMI, "mig", "-i", "0", "-gi", str(two_g), "-dci"],
        [SMI, "mig", "-i", "0", "-gi", str(two_g), "-dgi"],
        [SMI, "mig", "-i", "0", "-cgi", "19:0,19:1", "-C"],
    ]
    kept = {gi["start"]: gi["id"] for gi in host.state["gpus"][0]["gpu_instances"]}
    assert all(kept[start] == ids_before[start] for start in (2, 3, 4))


def test_all_disabled_destroys_instances_then_disables_the_mode(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    host.reconcile(None, "all-disabled")

    assert host.changing_calls()[:3] == [
        [SMI, "mig", "-i", "0", "-dci"],
        [SMI, "mig", "-i", "0", "-dgi"],
        [SMI, "-i", "0", "-mig", "0"],
    ]
    assert [gpu["mig_current"] for gpu in host.state["gpus"]] == [False, False]


def test_devices_select_gpus_and_unselected_ones_are_left_alone(host):
    doc = document(one=[{"devices": [1], "mig-enabled": True, "mig-devices": {"7g.80gb": 1}}])

    result = host.reconcile(doc, "one")

    assert host.state["gpus"][0]["mig_current"] is False
    assert host.layout(1) == [(0, 0, 1)]
    assert result["gpus"][0]["managed"] is False
    assert "left alone" in result["warnings"][0]


def test_device_filter_of_another_product_selects_nothing(host):
    doc = document(h100=[{"devices": "all", "device-filter": "0x233010DE", "mig-enabled": True, "mig-devices": {}}])

    result = host.reconcile(doc, "h100")

    assert result["changed"] is False
    assert host.changing_calls() == []


@pytest.mark.parametrize(
    ("mig_devices", "expected"),
    [
        ({"3g.40gb": 2, "1g.10gb": 1}, "memory slices"),
        ({"7g.80gb": 2}, "at most 1"),
        ({"2g.10gb": 1}, "unknown profile 2g.10gb"),
    ],
)
def test_impossible_layout_fails_before_any_change(host, mig_devices, expected):
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(bad=all_gpus(mig_devices)), "bad")

    assert expected in error.value.message
    assert "GPU 0 (NVIDIA A100-SXM4-80GB)" in error.value.message
    assert "nothing was changed" in error.value.message
    assert host.changing_calls() == []
    assert len(host.calls) == 1


def test_unknown_config_name_lists_the_valid_ones(host):
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(mixed=all_gpus(MIXED)), "mixd")

    assert "'mixd' is not defined" in error.value.message
    assert "mixed" in error.value.message and "all-balanced" in error.value.message


def test_invalid_document_is_reported_with_its_path(host):
    doc = document(mixed=[{"devices": "all", "mig-enabled": "yes"}])

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(doc, "mixed")

    assert "mig-configs.mixed[0].mig-enabled" in error.value.message
    assert host.calls == [host.calls[0]]


def test_busy_gpu_fails_naming_processes_and_changes_nothing(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    gi = host.state["gpus"][0]["gpu_instances"][0]["id"]
    host.state["processes"].append(
        {"gpu": 0, "gpu_instance": gi, "pid": 4242, "name": "/usr/bin/python3", "used_memory_mib": 2048}
    )

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(None, "all-1g.10gb")

    assert "GPU 0: pid 4242 /usr/bin/python3" in error.value.message
    assert host.changing_calls() == []
    assert host.layout(0) == host.layout(1) == MIXED_LAYOUT
    assert error.value.result["busy_processes"] == [{"gpu": 0, "pid": 4242, "name": "/usr/bin/python3"}]


def test_busy_gpu_in_check_mode_is_a_warning(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    host.state["processes"].append({"gpu": 1, "gpu_instance": 1, "pid": 7, "name": "dcgm", "used_memory_mib": 1})

    result = host.reconcile(None, "all-1g.10gb", check_mode=True)

    assert result["busy_processes"] == [{"gpu": 1, "pid": 7, "name": "dcgm"}]
    assert any("pid 7 dcgm" in warning for warning in result["warnings"])


def test_busy_gpu_that_needs_no_change_does_not_block(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    host.state["processes"].append({"gpu": 0, "gpu_instance": 1, "pid": 7, "name": "train", "used_memory_mib": 1})

    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert result["changed"] is False


def test_pending_mode_reports_reboot_required_and_creates_nothing_there(host):
    host.state["gpus"][0]["clients"].append({"pid": 99, "name": "nvidia-persistenced"})

    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert result["reboot_required"] is True
    assert result["pending_gpus"] == [0]
    assert result["gpus"][0]["pending"] is True
    assert result["gpus"][0]["after"]["mig_pending"] == "enabled"
    assert not any(call[2:4] == ["0", "-cgi"] for call in host.changing_calls())
    assert host.layout(1) == MIXED_LAYOUT

    assert result["gpus"][0]["reset"] == "failed"
    assert result["gpus"][0]["reset_reason"] == "In use by another client (in_use)"

    again = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    assert again["changed"] is False and again["reboot_required"] is True
    assert host.changing_calls() == [RESET_0]  # the reset is tried again, and fails again

    host.smi("--simulate-reboot")
    after_reboot = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    assert after_reboot["reboot_required"] is False
    assert host.layout(0) == host.layout(1) == MIXED_LAYOUT
    assert not any("-mig" in call for call in host.changing_calls())


def test_boot_restore_recreates_instances_only(host):
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    host.smi("--simulate-reboot")

    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert [call[1:4] for call in host.changing_calls()] == [["mig", "-i", "0"], ["mig", "-i", "1"]]
    assert host.layout(0) == host.layout(1) == MIXED_LAYOUT


def test_half_way_failure_rolls_the_gpu_back(host):
    host.smi("-i", "0", "-mig", "1")

    def another_client(argv):
        if "-cgi" in argv and argv[3] == "0" and host.before_call:
            host.before_call = None
            host.smi("mig", "-i", "0", "-cgi", "19:3", "-C")  # takes the slot the plan needs last

    host.before_call = another_client
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    message = error.value.message
    assert "changing GPU 0 failed" in message and "-cgi 9:4,14:0,19:2,19:3 -C" in message
    assert "Insufficient Resources" in message
    assert "put back to its previous layout" in message
    assert host.layout(0) == []
    assert error.value.result["gpus"][0]["rolled_back"] is True
    assert error.value.command["cmd"][-3:] == ["-cgi", "9:4,14:0,19:2,19:3", "-C"]
    assert "Successfully created GPU instance" in error.value.command["stdout"]
    assert host.state["gpus"][1]["mig_current"] is False  # GPU 1 untouched after the failure


def test_failed_rollback_reports_the_exact_state(host):
    host.smi("-i", "0", "-mig", "1")

    def busy_intruder(argv):
        if "-cgi" in argv and argv[3] == "0" and host.before_call:
            host.before_call = None
            host.smi("mig", "-i", "0", "-cgi", "19:3", "-C")
            intruder = next(gi for gi in host.state["gpus"][0]["gpu_instances"] if gi["start"] == 3)
            host.state["processes"].append(
                {"gpu": 0, "gpu_instance": intruder["id"], "pid": 31, "name": "job", "used_memory_mib": 1}
            )

    host.before_call = busy_intruder
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    message = error.value.message
    assert "restoring failed" in message and "In use by another client" in message
    assert "it is now in this state" in message and "1g.10gb at 3:1" in message
    assert error.value.result["gpus"][0]["rolled_back"] is False
    reported = error.value.result["gpus"][0]["after"]["instances"]
    assert [(i["profile"], i["placement"], i.get("compute_instances", 1)) for i in reported] == [
        ("2g.20gb", "0:2", 0),
        ("1g.10gb", "2:1", 0),
        ("1g.10gb", "3:1", 1),
        ("3g.40gb", "4:4", 0),
    ]
    assert host.layout(0) == [(9, 4, 0), (14, 0, 0), (19, 2, 0), (19, 3, 1)]


def test_driver_not_loaded_reports_command_rc_and_output(host):
    def unloaded(argv):
        return 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", ""

    with pytest.raises(MigReconcileError) as error:
        engine.reconcile(unloaded, SMI, None, "all-disabled")

    assert "couldn't communicate with the NVIDIA driver" in error.value.message
    assert error.value.command["rc"] == 9
    assert error.value.command["cmd"][0] == SMI


def test_unknown_mig_capable_product_is_refused():
    host = DoubleHost()
    host.state["gpus"][0]["product"] = A100
    row = "0, GPU-x, NVIDIA Z999, 00000000:07:00.0, 0x999910DE, 1, 1, Disabled, Disabled, [N/A]\n"

    def run(argv):
        if argv[1].startswith("--query-gpu"):
            return 0, row, ""
        return host.run(argv)

    with pytest.raises(MigReconcileError) as error:
        engine.reconcile(run, SMI, None, "all-disabled")

    assert "GPU 0 (NVIDIA Z999) is not in the GPU catalog" in error.value.message


# ---------------------------------------------------------------- recorded real outputs
# The double answers the queries; the calls below answer with outputs recorded on real GPUs.


def recorded(host, argv_tail, rc, text, apply_to_double):
    """Answer ``nvidia-smi argv_tail`` with a recorded output, changing the double as the GPU did."""
    plain_run = host.run

    def run(argv):
        if argv[1:] != argv_tail:
            return plain_run(argv)
        host.calls.append(list(argv))
        if apply_to_double:
            nvsmi_double.run(argv_tail, host.state)
        return rc, text, ""

    host.run = run


def test_recorded_pending_enable_in_use_means_reboot_required(published_nvsmi_dir):
    text = (published_nvsmi_dir / "a100-80gb-pcie/mig-enable-warning-pending-in-use-by-another-client.txt").read_text()
    host = DoubleHost("NVIDIA A100 80GB PCIe", 1)
    host.state["gpus"][0]["clients"].append({"pid": 99, "name": "nvidia-persistenced"})
    recorded(host, ["-i", "0", "-mig", "1"], 0, text, apply_to_double=True)

    result = host.reconcile(None, "all-1g.10gb")

    assert result["reboot_required"] is True and result["pending_gpus"] == [0]
    assert host.changing_calls() == [[SMI, "-i", "0", "-mig", "1"], RESET_0]


def test_recorded_in_use_failure_of_cgi_is_rolled_back(published_nvsmi_dir):
    text = (published_nvsmi_dir / "gh200-480gb/mig-cgi-error-in-use-by-another-client.txt").read_text()
    host = DoubleHost(A100, 1)
    host.smi("-i", "0", "-mig", "1")
    # nvidia-smi(1) documents no exit status for this error; 255 is its "other error".
    recorded(host, ["mig", "-i", "0", "-cgi", "19:0,19:1,19:2,19:3,19:4,19:5,19:6", "-C"], 255, text, False)

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(None, "all-1g.10gb")

    assert "In use by another client" in error.value.message
    assert "put back to its previous layout" in error.value.message
    assert error.value.command["rc"] == 255 and error.value.command["stdout"] == text
    assert host.layout(0) == []


def test_recorded_insufficient_resources_is_a_failure(published_nvsmi_dir):
    name = "a100-sxm4-40gb/mig-cgi-19-19-14-9-error-insufficient-resources-nvidia-guide.txt"
    text = (published_nvsmi_dir / name).read_text()
    host = DoubleHost(A100, 1)
    host.smi("-i", "0", "-mig", "1")
    recorded(host, ["mig", "-i", "0", "-cgi", "19:0,19:1,19:2,19:3,19:4,19:5,19:6", "-C"], 255, text, False)

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(None, "all-1g.10gb")

    assert "Insufficient Resources" in error.value.message


def test_seed_cgi_output_is_accepted_and_verified(seed_fixture):
    text = seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-mig-cgi-9-14-19-C.txt")
    host = DoubleHost("NVIDIA A100 80GB PCIe", 1)
    host.smi("-i", "0", "-mig", "1")
    recorded(host, ["mig", "-i", "0", "-cgi", "9:0,14:4,19:6", "-C"], 0, text, apply_to_double=True)

    result = host.reconcile(document(seed=all_gpus({"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1})), "seed")

    assert result["changed"] is True
    assert host.layout(0) == [(9, 0, 1), (14, 4, 1), (19, 6, 1)]
    assert [call[-2] for call in host.changing_calls()] == ["9:0,14:4,19:6"]


def test_output_of_an_unexpected_shape_after_a_change_is_rolled_back_and_reported():
    host = DoubleHost(A100, 1)
    host.smi("-i", "0", "-mig", "1")
    bad = {"left": 1}

    def run(argv):
        rc, stdout, stderr = host.run(argv)
        if argv[1:] == ["mig", "-i", "0", "-lgi"] and bad["left"]:
            bad["left"] -= 1
            return rc, stdout.replace("MIG 1g.10gb", "MIG  1g.10gb ???", 1), stderr
        return rc, stdout, stderr

    with pytest.raises(MigReconcileError) as error:
        engine.reconcile(run, SMI, None, "all-1g.10gb")

    assert "unexpected output" in error.value.message
    assert "put back to its previous layout: MIG enabled: no instances" in error.value.message
    assert error.value.command["cmd"] == [SMI, "mig", "-i", "0", "-lgi"] and "???" in error.value.command["stdout"]
    assert error.value.result["gpus"][0]["rolled_back"] is True
    assert host.layout(0) == []


def test_any_other_error_after_a_change_reports_the_calls_and_the_state():
    host = DoubleHost(A100, 1)

    def run(argv):
        if "-cgi" in argv:
            raise KeyError("surprise")
        return host.run(argv)

    with pytest.raises(MigReconcileError) as error:
        engine.reconcile(run, SMI, None, "all-7g.80gb")

    assert "unexpected error after changing the GPUs: KeyError" in error.value.message
    assert "'mig_enabled': True" in error.value.message  # the state read back after the error
    assert [SMI, "-i", "0", "-mig", "1"] in [call["cmd"] for call in error.value.result["commands"]]
    assert error.value.result["changed"] is True


def test_process_name_with_commas_is_named_in_the_refusal(host):
    host.reconcile(None, "all-7g.80gb")
    host.state["processes"].append(
        {"gpu": 0, "gpu_instance": 0, "pid": 5, "name": "python3 -c a,b", "used_memory_mib": 1}
    )

    with pytest.raises(MigReconcileError, match=r"GPU 0: pid 5 python3 -c a,b; stop"):
        host.reconcile(None, "all-1g.10gb")

    assert host.changing_calls() == []


def partial_compute_instances(host):
    """GPU 0 with one 3g.40gb GPU instance split into three 1c.3g.40gb compute instances (mig -cci)."""
    host.smi("-i", "0", "-mig", "1")
    host.smi("mig", "-i", "0", "-cgi", "9:0")
    host.smi("mig", "-i", "0", "-gi", "1", "-cci", "1c.3g.40gb,1c.3g.40gb,1c.3g.40gb")


def test_partial_compute_instances_converge_to_whole_ones():
    host = DoubleHost(A100, 1)
    partial_compute_instances(host)

    result = host.reconcile(None, "all-3g.40gb")

    assert result["gpus"][0]["before"]["instances"] == [
        {
            "profile": "3g.40gb",
            "placement": "0:4",
            "compute_instances": 3,
            "compute_instance_profiles": ["1c.3g.40gb", "1c.3g.40gb", "1c.3g.40gb"],
        }
    ]
    assert [call[1:] for call in host.changing_calls()] == [
        ["mig", "-i", "0", "-dci"],
        ["mig", "-i", "0", "-dgi"],
        ["mig", "-i", "0", "-cgi", "9:0,9:4", "-C"],
    ]
    assert host.layout(0) == [(9, 0, 1), (9, 4, 1)]


def test_rollback_recreates_partial_compute_instances():
    host = DoubleHost(A100, 1)
    partial_compute_instances(host)

    def refuse_the_new_layout(argv):
        if "-C" in argv:
            host.state["gpus"][0]["gpu_instances"].append(
                {"id": 0, "profile_id": 0, "start": 0, "size": 8, "compute_instances": []}
            )

    host.before_call = refuse_the_new_layout
    with pytest.raises(MigReconcileError, match="put back to its previous layout"):
        host.reconcile(None, "all-7g.80gb")

    assert host.layout(0) == [(9, 0, 3)]
    assert [call[1:] for call in host.changing_calls()][-2:] == [
        ["mig", "-i", "0", "-cgi", "9:0"],
        ["mig", "-i", "0", "-gi", "1", "-cci", "0,0,0"],
    ]


def test_check_mode_reports_what_a_real_run_does_for_a_gpu_awaiting_a_reset():
    """MIG enabled with instances, disable pending: the run destroys the instances and still needs a reboot."""
    plans = []
    for check_mode in (True, False):
        host = DoubleHost(A100, 1)
        host.reconcile(None, "all-1g.10gb")
        host.state["gpus"][0]["mig_pending"] = False
        host.state["gpus"][0]["clients"].append({"pid": 99, "name": "nvidia-persistenced"})  # the reset fails
        plans.append(host.reconcile(None, "all-disabled", check_mode=check_mode))
    check, real = plans

    assert check["reboot_required"] is real["reboot_required"] is True
    assert check["pending_gpus"] == real["pending_gpus"] == [0]
    assert check["gpus"][0]["after"] == real["gpus"][0]["after"]
    assert check["gpus"][0]["after"] == {"mig_enabled": True, "mig_pending": "disabled", "instances": []}


def test_check_mode_shows_no_instances_on_a_gpu_whose_enable_is_pending():
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["mig_pending"] = True
    host.state["gpus"][0]["clients"].append({"pid": 99, "name": "nvidia-persistenced"})  # the reset fails

    check = host.reconcile(None, "all-1g.10gb", check_mode=True)
    real = host.reconcile(None, "all-1g.10gb")

    assert check["gpus"][0]["after"] == real["gpus"][0]["after"]
    assert check["gpus"][0]["after"] == {"mig_enabled": False, "mig_pending": "enabled", "instances": []}
    assert check["reboot_required"] is real["reboot_required"] is True


def test_devices_naming_a_missing_gpu_fail_before_any_change(host):
    missing = r"m\[0\]\.devices: GPU 5 does not exist on this host; valid: 0, 1"
    with pytest.raises(MigReconcileError, match=missing):
        host.reconcile(document(m=[{"devices": [5], "mig-enabled": True, "mig-devices": {"7g.80gb": 1}}]), "m")

    assert host.changing_calls() == []


def test_device_filter_is_matched_against_the_reported_device_id():
    """The double reports 0x20B110DE for an A100-PCIE-40GB; a filter on its other catalog id does not select it."""
    host = DoubleHost("NVIDIA A100-PCIE-40GB", 1)
    entry = {"devices": "all", "device-filter": "0x20F110DE", "mig-enabled": True, "mig-devices": {"7g.40gb": 1}}

    result = host.reconcile(document(m=[entry]), "m")

    assert result["changed"] is False and host.changing_calls() == []
    assert "no entry of config m selects it" in result["gpus"][0]["note"]


# ---------------------------------------------------------------- a pending MIG mode: GPU reset before a reboot
# As NVIDIA/mig-parted cmd/nvidia-mig-parted/apply/mode.go (ApplyMigMode): when a mode change stays
# pending, reset the GPUs (util.ResetAllGPUs -> nvmlResetAllGPUs in cmd/nvidia-mig-parted/util/device.go,
# `nvidia-smi -r -i BUS_IDS`); the GPU Operator's deployments/gpu-operator/reconfigure-mig.sh and the
# systemd service deployments/systemd/service.sh reboot only when that is not possible.


def test_reset_makes_a_pending_mode_effective_and_the_instances_are_created():
    """mig-parted ApplyMigMode: pending after -mig 1 (VM passthrough), so reset; no reboot is needed then."""
    host = DoubleHost(A100, 2)
    host.state["gpus"][0]["pending_needs_reset"] = True

    result = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert host.changing_calls() == [
        [SMI, "-i", "0", "-mig", "1"],
        [SMI, "-i", "1", "-mig", "1"],
        [SMI, "mig", "-i", "1", "-cgi", "9:4,14:0,19:2,19:3", "-C"],
        RESET_0,
        [SMI, "mig", "-i", "0", "-cgi", "9:4,14:0,19:2,19:3", "-C"],
    ]
    assert host.layout(0) == host.layout(1) == MIXED_LAYOUT
    assert result["reboot_required"] is False and result["pending_gpus"] == []
    assert result["reset_gpus"] == [0]
    gpu0 = result["gpus"][0]
    assert (gpu0["reset"], gpu0["pending"], gpu0["changed"]) == ("done", False, True)
    assert gpu0["before"] == {"mig_enabled": False, "mig_pending": None, "instances": []}
    assert gpu0["after"]["mig_enabled"] is True and len(gpu0["after"]["instances"]) == 4
    assert result["gpus"][1]["reset"] is None

    again = host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    assert again["changed"] is False and host.changing_calls() == []


def test_gpu_left_pending_by_an_earlier_run_is_reset_and_laid_out():
    """deployments/systemd/service.sh: `apply --mode-only` on a mode already set "will just do a GPU reset"."""
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["mig_pending"] = True  # an enable left pending earlier, its client gone since

    result = host.reconcile(None, "all-1g.10gb")

    assert host.changing_calls() == [
        RESET_0,
        [SMI, "mig", "-i", "0", "-cgi", "19:0,19:1,19:2,19:3,19:4,19:5,19:6", "-C"],
    ]
    assert (result["gpus"][0]["reset"], result["gpus"][0]["pending"], result["reboot_required"]) == (
        "done",
        False,
        False,
    )
    assert result["gpus"][0]["after"]["mig_pending"] is None and len(result["gpus"][0]["after"]["instances"]) == 7


def test_reset_that_fails_leaves_the_gpu_pending_and_requires_a_reboot(host):
    """reconfigure-mig.sh: when applying the mode (and its reset) fails, the node is rebooted."""
    host.state["gpus"][0]["clients"].append({"pid": 777, "name": "/usr/bin/nv-hostengine"})

    result = host.reconcile(None, "all-1g.10gb")

    assert RESET_0 in host.changing_calls()
    assert result["reboot_required"] is True and result["pending_gpus"] == [0] and result["reset_gpus"] == []
    assert (result["gpus"][0]["reset"], result["gpus"][0]["pending"]) == ("failed", True)
    assert "In use by another client" in result["gpus"][0]["reset_reason"]
    assert host.state["gpus"][0]["mig_current"] is False and host.layout(0) == []
    assert host.layout(1) == [(19, start, 1) for start in range(7)]


def test_busy_gpu_is_not_reset():
    """A compute process on a GPU whose enable waits: no reset (it would kill the process), a reboot is needed."""
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["mig_pending"] = True  # an enable left pending earlier
    host.state["processes"].append({"gpu": 0, "gpu_instance": None, "pid": 4242, "name": "train", "used_memory_mib": 1})

    result = host.reconcile(None, "all-1g.10gb")

    assert host.changing_calls() == []
    assert result["reboot_required"] is True and result["pending_gpus"] == [0]
    assert result["gpus"][0]["reset"] == "skipped"
    assert result["gpus"][0]["reset_reason"] == "compute processes use the GPU: pid 4242 train"


def test_check_mode_only_says_the_reset_would_be_tried():
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["mig_pending"] = True

    result = host.reconcile(None, "all-1g.10gb", check_mode=True)

    assert host.changing_calls() == [] and host.state["gpus"][0]["mig_current"] is False
    assert result["gpus"][0]["reset"] == "would_try"
    assert result["planned_commands"] == [RESET_0]
    assert result["reboot_required"] is True and result["changed"] is True


def test_reset_that_leaves_the_mode_pending_requires_a_reboot(monkeypatch):
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["pending_needs_reset"] = True
    bus = host.state["gpus"][0]["pci_bus_id"]
    monkeypatch.setattr(
        nvsmi_double, "cmd_reset", lambda state, args: (f"GPU {bus} was successfully reset.\nAll done.", 0)
    )

    result = host.reconcile(None, "all-1g.10gb")

    assert RESET_0 in host.changing_calls()
    assert result["gpus"][0]["reset"] == "not_effective"
    assert result["reboot_required"] is True and result["pending_gpus"] == [0] and result["reset_gpus"] == []
    assert result["changed"] is True


def test_recorded_reset_in_use_leaves_the_gpu_pending(published_nvsmi_dir):
    """The recorded two-GPU failure of `nvidia-smi -r` (Yandex Cloud docs, A100-SXM4-80GB) per GPU."""
    text = (published_nvsmi_dir / "a100-sxm4-80gb/gpu-reset-r-error-in-use-by-another-client.txt").read_text()
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["pending_needs_reset"] = True
    # nvidia-smi(1) documents no exit status for this failure; 255 is its "other error". The recording
    # names two GPUs, the engine reports both reasons it cannot tell apart by bus id.
    recorded(host, RESET_0[1:], 255, text, apply_to_double=False)

    result = host.reconcile(None, "all-1g.10gb")

    assert result["reboot_required"] is True and result["gpus"][0]["reset"] == "failed"
    assert result["gpus"][0]["reset_reason"].startswith("In use by another client (in_use)")


@pytest.mark.parametrize(
    "recording",
    ["a100-sxm4-80gb/gpu-reset-r-error-not-supported-nvlink.txt", "a100-unspecified/gpu-reset-error-not-supported.txt"],
)
def test_recorded_reset_not_supported_requires_a_reboot(published_nvsmi_dir, recording):
    """Passthrough or NVLink VMs where a reset is not supported, even with exit status 0: a reboot is needed."""
    text = (published_nvsmi_dir / recording).read_text()
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["pending_needs_reset"] = True
    recorded(host, RESET_0[1:], 0, text, apply_to_double=False)

    result = host.reconcile(None, "all-1g.10gb")

    assert result["reboot_required"] is True and result["gpus"][0]["reset"] == "failed"
    assert "Not Supported (not_supported)" in result["gpus"][0]["reset_reason"]


def test_recorded_reset_success_lets_the_instances_be_created(published_nvsmi_dir):
    """`sudo nvidia-smi -i 2 --gpu-reset` on an A100-PCIE-40GB (R460): one success line, then "All done."."""
    text = (published_nvsmi_dir / "a100-pcie-40gb/gpu-reset-i2-success.txt").read_text()
    host = DoubleHost("NVIDIA A100-PCIE-40GB", 1)
    host.state["gpus"][0]["pending_needs_reset"] = True
    recorded(host, RESET_0[1:], 0, text, apply_to_double=True)

    result = host.reconcile(None, "all-1g.5gb")

    assert result["reboot_required"] is False and result["reset_gpus"] == [0]
    assert len(host.layout(0)) == 7


# ---------------------------------------------------------------- compute-instance profiles ("1c.3g.40gb")
# NVIDIA/mig-parted pkg/mig/config/config.go SetMigConfig: each MIG device of a config is a compute instance of
# its C profile (CreateComputeInstance, the CI profile pkg/types/mig_profile.go ParseMigProfile maps "Nc." to:
# NVML_COMPUTE_INSTANCE_PROFILE_N_SLICE) in a GPU instance of its G profile (CreateGpuInstance), the last one
# created while it has that profile and the CI fits (reuseGI), else a new one.
# `nvidia-smi mig -lcip` lists those ids: 1c.3g.40gb 0, 2c.3g.40gb 1, 3g.40gb 2 (a100-80gb-pcie/mig-lcip-gi1.txt).
CI_MIXED = {"1c.3g.40gb": 1, "3g.40gb": 1}
ONE_CI = {"profile": "3g.40gb", "placement": "4:4", "compute_instances": 1, "compute_instance_profiles": ["1c.3g.40gb"]}


def test_compute_instance_profile_creates_its_gpu_instance_then_one_ci_of_its_profile():
    """config.go SetMigConfig: a GPU instance of the G profile, then one compute instance of the C profile."""
    host = DoubleHost(A100, 1)

    result = host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    assert [call[1:] for call in host.changing_calls()] == [
        ["-i", "0", "-mig", "1"],
        ["mig", "-i", "0", "-cgi", "9:0", "-C"],
        ["mig", "-i", "0", "-cgi", "9:4"],  # no -C: the GI's own CI would span it
        ["mig", "-i", "0", "-gi", "2", "-cci", "0"],  # GI id 2 as -cgi printed it; CI profile 1c = id 0
    ]
    gpu = host.state["gpus"][0]
    cis = {
        gi["start"]: [(ci["profile_id"], ci["name"]) for ci in gi["compute_instances"]] for gi in gpu["gpu_instances"]
    }
    assert cis == {0: [(2, "3g.40gb")], 4: [(0, "1c.3g.40gb")]}
    assert result["gpus"][0]["after"]["instances"] == [{"profile": "3g.40gb", "placement": "0:4"}, ONE_CI]


def test_compute_instance_profile_check_mode_plans_what_a_real_run_does():
    """Check mode: the same calls (the new GI's id, which the driver assigns, as a placeholder) and the same after."""
    check_host, real_host = DoubleHost(A100, 1), DoubleHost(A100, 1)

    check = check_host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci", check_mode=True)
    real = real_host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    assert check_host.changing_calls() == [] and check["changed"] is True
    assert check["planned_commands"] == [
        [SMI, "-i", "0", "-mig", "1"],
        [SMI, "mig", "-i", "0", "-cgi", "9:0", "-C"],
        [SMI, "mig", "-i", "0", "-cgi", "9:4"],
        [SMI, "mig", "-i", "0", "-gi", "<GI@4:4>", "-cci", "0"],
    ]
    assert check["gpus"][0]["after"] == real["gpus"][0]["after"]
    assert ONE_CI in check["gpus"][0]["after"]["instances"]


def test_compute_instance_profile_already_in_place_changes_nothing():
    """mig-parted reads a GPU's MIG devices per CI (config.go GetMigConfig): a GI holding exactly the wanted
    one CI is that MIG device, so a second apply only queries."""
    host = DoubleHost(A100, 1)
    host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    result = host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    assert result["changed"] is False and host.changing_calls() == []
    assert result["gpus"][0]["before"] == result["gpus"][0]["after"]


SHARED = {"1c.3g.40gb": 3}


def test_compute_instances_of_one_profile_share_their_gpu_instance():
    """config.go SetMigConfig reuseGI: "1c.3g.40gb": 3 is one 3g.40gb GI (-cgi without -C) and its three CIs in
    one -cci; the second run only queries (config.go GetMigConfig: 3x 1c.3g.40gb, as the config asks)."""
    host = DoubleHost(A100, 1)

    result = host.reconcile(document(ci=all_gpus(SHARED)), "ci")
    first = [call[1:] for call in host.changing_calls()]
    again = host.reconcile(document(ci=all_gpus(SHARED)), "ci")

    assert first == [
        ["-i", "0", "-mig", "1"],
        ["mig", "-i", "0", "-cgi", "9:0"],
        ["mig", "-i", "0", "-gi", "1", "-cci", "0,0,0"],
    ]
    (gi,) = host.state["gpus"][0]["gpu_instances"]
    assert [ci["name"] for ci in gi["compute_instances"]] == ["1c.3g.40gb"] * 3
    assert result["gpus"][0]["after"]["instances"] == [
        {
            "profile": "3g.40gb",
            "placement": "0:4",
            "compute_instances": 3,
            "compute_instance_profiles": ["1c.3g.40gb"] * 3,
        }
    ]
    assert again["changed"] is False and host.changing_calls() == []
    assert again["gpus"][0]["before"] == result["gpus"][0]["after"]


def test_shared_gpu_instance_check_mode_plans_what_a_real_run_does():
    """Check mode lists the real run's calls (the new GI's id as a placeholder) and its after; a 2c and a 1c CI
    share one 3g.40gb GI, largest first in the -cci as the planner packs them."""
    config = {"1c.3g.40gb": 4, "2c.3g.40gb": 1}
    check_host, real_host = DoubleHost(A100, 1), DoubleHost(A100, 1)

    check = check_host.reconcile(document(ci=all_gpus(config)), "ci", check_mode=True)
    real = real_host.reconcile(document(ci=all_gpus(config)), "ci")

    assert check["planned_commands"] == [
        [SMI, "-i", "0", "-mig", "1"],
        [SMI, "mig", "-i", "0", "-cgi", "9:0"],
        [SMI, "mig", "-i", "0", "-gi", "<GI@0:4>", "-cci", "1,0"],
        [SMI, "mig", "-i", "0", "-cgi", "9:4"],
        [SMI, "mig", "-i", "0", "-gi", "<GI@4:4>", "-cci", "0,0,0"],
    ]
    ids = {gi["start"]: str(gi["id"]) for gi in real_host.state["gpus"][0]["gpu_instances"]}
    planned = [
        [arg.replace("<GI@0:4>", ids[0]).replace("<GI@4:4>", ids[4]) for arg in call]
        for call in check["planned_commands"]
    ]
    assert planned == real_host.changing_calls()
    assert check["gpus"][0]["after"] == real["gpus"][0]["after"]


def test_gpu_instance_holding_the_wanted_compute_instances_is_kept():
    """A GI at a planned placement that holds exactly the CIs of one planned GI stays (config.go GetMigConfig
    counts MIG devices per CI profile); planned GIs of one profile are interchangeable, so only the whole-GI
    3g.40gb is created beside it."""
    host = DoubleHost(A100, 1)
    partial_compute_instances(host)  # 3g.40gb at 0:4 holding three 1c.3g.40gb

    result = host.reconcile(document(ci=all_gpus({"1c.3g.40gb": 3, "3g.40gb": 1})), "ci")

    assert [call[1:] for call in host.changing_calls()] == [["mig", "-i", "0", "-cgi", "9:4", "-C"]]
    assert result["gpus"][0]["after"]["instances"][0]["compute_instance_profiles"] == ["1c.3g.40gb"] * 3


def test_gpu_instance_with_other_compute_instances_is_recreated():
    """A 3g.40gb GI split into three 1c CIs is not one 1c.3g.40gb MIG device: destroyed and created again;
    the whole-GI instance at 0:4 that the config also wants stays."""
    host = DoubleHost(A100, 1)
    host.smi("-i", "0", "-mig", "1")
    host.smi("mig", "-i", "0", "-cgi", "9:0", "-C")
    host.smi("mig", "-i", "0", "-cgi", "9:4")
    host.smi("mig", "-i", "0", "-gi", "2", "-cci", "0,0,0")

    result = host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    assert [call[1:] for call in host.changing_calls()] == [
        ["mig", "-i", "0", "-gi", "2", "-dci"],
        ["mig", "-i", "0", "-gi", "2", "-dgi"],
        ["mig", "-i", "0", "-cgi", "9:4"],
        ["mig", "-i", "0", "-gi", "2", "-cci", "0"],
    ]
    assert result["gpus"][0]["before"]["instances"][1]["compute_instance_profiles"] == ["1c.3g.40gb"] * 3
    assert result["gpus"][0]["after"]["instances"][1] == ONE_CI
    assert host.layout(0) == [(9, 0, 1), (9, 4, 1)]


def test_failed_compute_instance_creation_rolls_the_gpu_back():
    """The -cci fails after its GPU instance was created (another client took the GI's slices first): the
    GPU is put back to the layout it had, the new GI and the intruder's CI removed."""
    host = DoubleHost(A100, 1)
    host.reconcile(None, "all-7g.80gb")

    def another_client(argv):
        if "-cci" in argv and host.before_call:
            host.before_call = None
            host.smi("mig", "-i", "0", "-gi", "2", "-cci", "2")  # a whole-GI CI: no 1-slice one fits then

    host.before_call = another_client
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(ci=all_gpus(CI_MIXED)), "ci")

    message = error.value.message
    assert "changing GPU 0 failed" in message and "-gi 2 -cci 0" in message and "Insufficient Resources" in message
    assert "put back to its previous layout" in message
    assert host.layout(0) == [(0, 0, 1)]  # the 7g.80gb instance again, with its CI
    assert error.value.result["gpus"][0]["rolled_back"] is True


@pytest.mark.parametrize(
    ("profile", "valid"),
    [("4c.3g.40gb", "1c.3g.40gb, 2c.3g.40gb, 3g.40gb"), ("5c.7g.80gb", "1c.7g.80gb, 2c.7g.80gb, 3c.7g.80gb")],
)
def test_compute_instance_larger_than_its_gpu_instance_is_refused_before_any_change(host, profile, valid):
    """mig-parted ParseMigProfile (pkg/types/mig_profile.go) knows CI slice counts 1, 2, 3, 4, 6, 7, 8 only, and
    the CI must fit in its GI (C <= G): refused naming GPU, profile and the valid names."""
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(ci=all_gpus({profile: 1})), "ci")

    message = error.value.message
    assert "nothing was changed" in message and f"GPU 0 (NVIDIA A100-SXM4-80GB): unknown profile {profile}" in message
    assert f"valid: {valid}" in message
    assert host.changing_calls() == []


# ---------------------------------------------------------------- device filters with a subsystem id
# NVIDIA/mig-parted pkg/types/device.go DeviceID.Matches: a filter "<device>:<subsystem>" must match both ids.
# The double reports the recorded ids of an A100-SXM4-80GB: 20B210DE and subsystem 147F10DE
# (<pci_sub_system_id> of a100-sxm4-80gb/nvidia-smi-q-x.txt).


@pytest.mark.parametrize(
    ("device_filter", "selected"),
    [
        ("0x20B210DE:0x147F10DE", True),
        (["0x20B210DE:0x147f10de"], True),
        ("0x20B210DE:0x151D10DE", False),  # the same GPU with another subsystem id than it reports
        (["0x20B210DE:0x151D10DE", "0x20B210DE"], True),  # a filter without subsystem matches it
    ],
)
def test_subsystem_device_filter_matches_as_mig_parted(host, device_filter, selected):
    entry = {"devices": "all", "device-filter": device_filter, "mig-enabled": True, "mig-devices": {"7g.80gb": 1}}

    result = host.reconcile(document(sub=[entry]), "sub")

    assert result["gpus"][0]["managed"] is selected
    assert host.layout(0) == ([(0, 0, 1)] if selected else [])


def test_subsystem_filter_is_refused_when_the_gpu_reports_no_subsystem_id():
    """nvidia-smi printed [N/A] for pci.sub_device_id: which board it is cannot be known, so nothing changes."""
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["pci_sub_system_id"] = None
    entry = {"devices": "all", "device-filter": "0x20B210DE:0x147F10DE", "mig-enabled": False}

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(sub=[entry]), "sub")

    message = error.value.message
    assert "device-filter 0x20B210DE:0x147F10DE names a subsystem id, and nvidia-smi reported none for GPU 0" in message
    assert "valid: the device id alone (0x20B210DE)" in message
    assert host.changing_calls() == []


# ---------------------------------------------------------------- nothing half-applied across GPUs
# A change that fails on one GPU puts back every GPU the run changed, and says each GPU's end state.


def double_layout(host, index):
    """The double's GPU as the module reports it: (profile, placement, compute instances) by start."""
    gpu = host.state["gpus"][index]
    names = {19: "1g.10gb", 14: "2g.20gb", 9: "3g.40gb", 0: "7g.80gb"}
    return [
        (names[gi["profile_id"]], f"{gi['start']}:{gi['size']}", len(gi["compute_instances"]))
        for gi in sorted(gpu["gpu_instances"], key=lambda gi: gi["start"])
    ]


def reported_layout(report):
    return [(i["profile"], i["placement"], i.get("compute_instances", 1)) for i in report["after"]["instances"]]


def test_failed_rollback_of_an_earlier_gpu_reports_every_gpus_exact_state(host):
    """GPU 0 is laid out, a job starts on it, GPU 1's -cgi fails: GPU 0 cannot be put back (its busy GPU instance
    cannot be destroyed), GPU 1 is; the message and gpus[] say exactly where each GPU is."""
    nvsmi_double.inject_failure(host.state, 1, "-cgi")

    def job_on_gpu_0(argv):
        if argv[1:5] == ["mig", "-i", "1", "-cgi"] and host.before_call:
            host.before_call = None
            busy = next(gi for gi in host.state["gpus"][0]["gpu_instances"] if gi["start"] == 4)
            host.state["processes"].append(
                {"gpu": 0, "gpu_instance": busy["id"], "pid": 31, "name": "job", "used_memory_mib": 1}
            )

    host.before_call = job_on_gpu_0
    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    gpus, message = error.value.result["gpus"], error.value.message
    uuids = [gpu["uuid"] for gpu in host.state["gpus"]]
    assert [gpu["rolled_back"] for gpu in gpus] == [False, True]
    assert reported_layout(gpus[0]) == double_layout(host, 0) and ("3g.40gb", "4:4", 1) in double_layout(host, 0)
    assert gpus[0]["after"]["mig_enabled"] is True and "In use by another client" in gpus[0]["rollback_problem"]
    assert host.state["gpus"][1]["mig_current"] is False and gpus[1]["after"]["mig_enabled"] is False
    assert "changing GPU 1 failed" in message and "NOT every GPU this run changed could be put back" in message
    assert f"GPU 0 ({uuids[0]}): not put back (restoring failed: " in message
    assert "it is now in this state: MIG enabled: " in message and "3g.40gb at 4:4" in message
    assert f"GPU 1 ({uuids[1]}): put back to its previous layout: MIG disabled" in message


def test_boot_restore_that_fails_on_gpu_1_leaves_no_gpu_half_restored(host):
    """After a reboot (MIG mode kept, instances gone) the restore creates GPU 0's instances, then GPU 1's -cgi
    fails: GPU 0's are removed again, so the node is as the reboot left it, not half in the plan."""
    host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")
    host.smi("--simulate-reboot")
    nvsmi_double.inject_failure(host.state, 1, "-cgi")

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(document(mixed=all_gpus(MIXED)), "mixed")

    assert host.layout(0) == host.layout(1) == []
    assert [gpu["mig_current"] for gpu in host.state["gpus"]] == [True, True]
    assert [gpu["rolled_back"] for gpu in error.value.result["gpus"]] == [True, True]
    assert not any("-mig" in call for call in host.changing_calls())
    assert "put back to its previous layout: MIG enabled: no instances" in error.value.message


def test_failure_after_gpu_resets_puts_the_reset_gpus_back_with_a_reset():
    """Both GPUs' enables wait for a reset (VM passthrough); after the resets GPU 0 is laid out and GPU 1's -cgi
    fails. Setting the mode back leaves it pending again, so the rollback resets each GPU as the run did
    (mig-parted ApplyMigMode's reset), and no mode change is left pending for a later reboot."""
    host = DoubleHost(A100, 2)
    for gpu in host.state["gpus"]:
        gpu["pending_needs_reset"] = True
    nvsmi_double.inject_failure(host.state, 1, "-cgi")

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(None, "all-1g.10gb")

    result = error.value.result
    assert [(gpu["mig_current"], gpu["mig_pending"]) for gpu in host.state["gpus"]] == [(False, False)] * 2
    assert host.layout(0) == host.layout(1) == []
    assert [gpu["rolled_back"] for gpu in result["gpus"]] == [True, True]
    assert result["reboot_required"] is False and result["pending_gpus"] == []
    resets = [call for call in host.changing_calls() if call[-1] == "-r"]
    assert resets == [RESET_0, [SMI, "-i", "1", "-r"], [SMI, "-i", "1", "-r"], RESET_0]


def test_gpu_that_entered_the_run_pending_keeps_the_mode_its_reset_made_effective():
    """An enable left pending by an earlier run is what a reboot would make effective: the run's reset did that,
    and a failure after it does not disable MIG again (no mode call can make a mode pending again)."""
    host = DoubleHost(A100, 1)
    host.state["gpus"][0]["mig_pending"] = True
    nvsmi_double.inject_failure(host.state, 0, "-cgi")

    with pytest.raises(MigReconcileError) as error:
        host.reconcile(None, "all-1g.10gb")

    assert (host.state["gpus"][0]["mig_current"], host.layout(0)) == (True, [])
    assert error.value.result["gpus"][0]["rolled_back"] is True
    assert not any("-mig" in call for call in host.changing_calls())
