# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_mig as Ansible runs it: arguments, check mode, diff, failures with cmd/rc/stdout/stderr."""

import json
import pathlib
import sys
from unittest.mock import patch

import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.gpuops.cluster.plugins.modules import nvidia_mig

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "doubles" / "nvidia_smi"))
import nvsmi_double

BIN = "/usr/bin/nvidia-smi"
MIXED_DOC = {
    "version": "v1",
    "mig-configs": {
        "mixed": [{"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}]
    },
}


class Exited(Exception):
    pass


@pytest.fixture
def state():
    return nvsmi_double.new_state("NVIDIA A100-SXM4-80GB", 2)


def run_module(state, args, check_mode=False, diff=False, calls=None):
    """Run the module with the double as nvidia-smi; returns the result (failed=True on fail_json)."""
    calls = [] if calls is None else calls

    def run_command(module, argv, **kwargs):
        assert isinstance(argv, list)
        calls.append(argv)
        stdout, rc = nvsmi_double.run(argv[1:], state)
        return rc, stdout + "\n" if stdout else "", ""

    warnings = []

    def leave(module, **result):
        raise Exited(dict(result, warnings=warnings))

    module_args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)
    with (
        patch_module_args(module_args),
        patch.object(AnsibleModule, "run_command", run_command),
        patch.object(AnsibleModule, "get_bin_path", lambda module, name, required=False: BIN),
        patch.object(AnsibleModule, "warn", lambda module, text: warnings.append(text)),
        patch.object(AnsibleModule, "exit_json", leave),
        patch.object(AnsibleModule, "fail_json", lambda module, **r: leave(module, failed=True, **r)),
        pytest.raises(Exited) as exited,
    ):
        nvidia_mig.main()
    return exited.value.args[0]


def changing(calls):
    return [c for c in calls if {"-cgi", "-dci", "-dgi", "-mig", "-r"} & set(c)]


def test_apply_then_rerun_changes_nothing(state):
    first = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"})
    calls = []
    second = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"}, calls=calls)

    assert first["changed"] is True and first["reboot_required"] is False
    assert second["changed"] is False
    assert changing(calls) == []
    assert [c["changes_state"] for c in second["commands"]] == [False, False, False]


def test_check_mode_with_diff_executes_nothing(state):
    calls = []
    result = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"}, check_mode=True, diff=True, calls=calls)

    assert result["changed"] is True
    assert changing(calls) == []
    assert result["diff"]["before"]["gpu 0"] == {"mig_enabled": False, "mig_pending": None, "instances": []}
    assert result["diff"]["after"]["gpu 1"]["instances"][0] == {"profile": "2g.20gb", "placement": "0:2"}
    assert [BIN, "mig", "-i", "1", "-cgi", "9:4,14:0,19:2,19:3", "-C"] in result["planned_commands"]


def test_builtin_config_without_document(state):
    result = run_module(state, {"config_name": "all-balanced"})

    assert result["changed"] is True
    profiles = sorted(i["profile"] for i in result["gpus"][0]["after"]["instances"])
    assert profiles == ["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]


def test_config_file_in_json_and_yaml(state, tmp_path):
    json_file = tmp_path / "mig.json"
    json_file.write_text(json.dumps(MIXED_DOC))
    yaml_file = tmp_path / "mig.yaml"
    yaml_file.write_text(
        "version: v1\nmig-configs:\n  seven:\n    - devices: all\n      mig-enabled: true\n"
        "      mig-devices:\n        1g.10gb: 7\n"
    )

    from_json = run_module(state, {"config_file": str(json_file), "config_name": "mixed"}, check_mode=True)
    from_yaml = run_module(state, {"config_file": str(yaml_file), "config_name": "seven"}, check_mode=True)

    assert len(from_json["gpus"][0]["after"]["instances"]) == 4
    assert len(from_yaml["gpus"][0]["after"]["instances"]) == 7


def test_config_and_config_file_are_mutually_exclusive(state, tmp_path):
    result = run_module(state, {"config": MIXED_DOC, "config_file": str(tmp_path), "config_name": "mixed"})

    assert result["failed"] is True
    assert "mutually exclusive" in result["msg"]


def test_unreadable_config_file_fails_before_nvidia_smi(state, tmp_path):
    calls = []
    result = run_module(state, {"config_file": str(tmp_path / "absent.yaml"), "config_name": "x"}, calls=calls)

    assert result["failed"] is True and "cannot be read" in result["msg"]
    assert calls == []


def test_impossible_layout_fails_with_no_state_change(state):
    doc = {
        "version": "v1",
        "mig-configs": {"bad": [{"devices": "all", "mig-enabled": True, "mig-devices": {"7g.80gb": 2}}]},
    }
    calls = []
    result = run_module(state, {"config": doc, "config_name": "bad"}, calls=calls)

    assert result["failed"] is True
    assert "7g.80gb" in result["msg"] and "nothing was changed" in result["msg"]
    assert changing(calls) == []


def test_busy_gpu_fails_with_processes(state):
    run_module(state, {"config": MIXED_DOC, "config_name": "mixed"})
    gi = state["gpus"][1]["gpu_instances"][0]["id"]
    state["processes"].append({"gpu": 1, "gpu_instance": gi, "pid": 5762, "name": "python", "used_memory_mib": 9})
    calls = []

    result = run_module(state, {"config_name": "all-1g.10gb"}, calls=calls)

    assert result["failed"] is True
    assert "GPU 1: pid 5762 python" in result["msg"]
    assert result["busy_processes"] == [{"gpu": 1, "pid": 5762, "name": "python"}]
    assert changing(calls) == []


def test_nvidia_smi_error_reaches_the_user_with_command_rc_and_output(state):
    state["gpus"][0]["clients"].append({"pid": 1, "name": "nvidia-persistenced"})
    state["gpus"][0]["mig_current"] = state["gpus"][0]["mig_pending"] = True

    result = run_module(state, {"config_name": "all-disabled"})

    assert result["failed"] is True
    assert result["cmd"] == [BIN, "-i", "0", "-mig", "0"]
    assert result["rc"] == 255
    assert "Unable to disable MIG Mode" in result["stdout"] and "In use by another client" in result["msg"]
    assert "stderr" in result


def test_pending_mode_returns_reboot_required_with_a_warning(state):
    state["gpus"][0]["clients"].append({"pid": 1, "name": "nvidia-persistenced"})

    result = run_module(state, {"config_name": "all-1g.10gb"})

    assert result["changed"] is True
    assert result["reboot_required"] is True and result["pending_gpus"] == [0]
    assert result["reset_gpus"] == [] and result["gpus"][0]["reset"] == "failed"
    assert any(
        "[0] (GPU 0: reset failed (In use by another client (in_use))): a reboot is required" in w
        for w in result["warnings"]
    )


# mig-parted's ApplyMigMode (NVIDIA/mig-parted cmd/nvidia-mig-parted/apply/mode.go) resets the GPUs when a
# mode change stays pending (util.ResetAllGPUs: `nvidia-smi -r -i BUS_IDS`); a reboot only when that fails.


def test_reset_of_a_pending_gpu_avoids_the_reboot(state):
    state["gpus"][1]["pending_needs_reset"] = True
    calls = []

    result = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"}, diff=True, calls=calls)

    assert [BIN, "-i", "1", "-r"] in changing(calls)
    assert result["changed"] is True and result["reboot_required"] is False
    assert result["pending_gpus"] == [] and result["reset_gpus"] == [1]
    assert result["gpus"][1]["reset"] == "done" and result["gpus"][1]["reset_reason"] == ""
    assert len(result["diff"]["after"]["gpu 1"]["instances"]) == 4
    assert not any("reboot" in w for w in result["warnings"])


def test_busy_pending_gpu_is_not_reset_and_needs_a_reboot(state):
    state["gpus"][0]["mig_pending"] = True
    state["processes"].append({"gpu": 0, "gpu_instance": None, "pid": 5762, "name": "python", "used_memory_mib": 9})
    calls = []

    result = run_module(state, {"config_name": "all-1g.10gb"}, calls=calls)

    assert [BIN, "-i", "0", "-r"] not in calls
    assert result["reboot_required"] is True and result["gpus"][0]["reset"] == "skipped"
    assert any("reset skipped (compute processes use the GPU: pid 5762 python)" in w for w in result["warnings"])


def test_check_mode_says_a_reset_would_be_tried(state):
    state["gpus"][0]["mig_pending"] = True
    calls = []

    result = run_module(state, {"config_name": "all-1g.10gb"}, check_mode=True, calls=calls)

    assert changing(calls) == []
    assert result["gpus"][0]["reset"] == "would_try"
    assert [BIN, "-i", "0", "-r"] in result["planned_commands"]


@pytest.mark.parametrize("content", ["", "\n", "{}\n"], ids=["empty", "blank", "empty-mapping"])
def test_empty_config_file_fails_instead_of_meaning_builtin_configs(state, tmp_path, content):
    path = tmp_path / "mig-config.json"
    path.write_text(content)
    calls = []

    result = run_module(state, {"config_name": "all-1g.10gb", "config_file": str(path)}, calls=calls)

    assert result["failed"] and f"config_file {path} is empty" in result["msg"]
    assert calls == []


CI_DOC = {
    "version": "v1",
    "mig-configs": {"ci": [{"devices": [0], "mig-enabled": True, "mig-devices": {"1c.3g.40gb": 3}}]},
}


def test_compute_instance_profiles_in_check_mode_then_applied(state):
    """NVIDIA/mig-parted pkg/mig/config/config.go SetMigConfig: consecutive MIG devices of one GI profile are
    further compute instances in the same GI (reuseGI), so "1c.3g.40gb": 3 is one 3g.40gb GPU instance holding
    three 1-slice compute instances (-cci profile id 0, a100-80gb-pcie/mig-lcip-gi1.txt), created in one -cci.
    The module returns the CI profiles in gpus[].after, the same in check mode and in a real run, and a second
    run changes nothing (config.go GetMigConfig counts MIG devices per CI profile)."""
    args = {"config": CI_DOC, "config_name": "ci"}
    calls = []
    check = run_module(state, args, check_mode=True, diff=True, calls=calls)
    real = run_module(state, args)
    again = run_module(state, args)

    assert changing(calls) == [] and check["changed"] is True
    wanted = [
        {
            "profile": "3g.40gb",
            "placement": "0:4",
            "compute_instances": 3,
            "compute_instance_profiles": ["1c.3g.40gb"] * 3,
        }
    ]
    assert check["gpus"][0]["after"]["instances"] == real["gpus"][0]["after"]["instances"] == wanted
    assert check["diff"]["after"]["gpu 0"]["instances"] == wanted
    assert [c[3:] for c in check["planned_commands"]][1:] == [
        ["0", "-cgi", "9:0"],
        ["0", "-gi", "<GI@0:4>", "-cci", "0,0,0"],
    ]
    # The real run makes the planned calls, with the id nvidia-smi printed for the new GPU instance.
    made = [c["cmd"] for c in real["commands"] if c["changes_state"]]
    assert [[arg.replace("<GI@0:4>", "1") for arg in c] for c in check["planned_commands"]] == made
    assert again["changed"] is False and again["gpus"][0]["before"] == real["gpus"][0]["after"]
    assert real["gpus"][1]["managed"] is False


# ---------------------------------------------------------------- nothing half-applied
# GPU 1's `nvidia-smi mig -cgi` fails (the double's --double-fail, as the recorded GH200 "In use by another client"
# failure) after GPU 0 was laid out: every GPU the run changed goes back, and the result says each GPU's end state.

DISABLED = {"mig_enabled": False, "mig_pending": None, "instances": []}


def end_state(state):
    """Each GPU of the double as (MIG mode, pending mode, sorted (profile id, start, compute instances))."""
    return [
        (
            gpu["mig_current"],
            gpu["mig_pending"],
            sorted((gi["profile_id"], gi["start"], len(gi["compute_instances"])) for gi in gpu["gpu_instances"]),
        )
        for gpu in state["gpus"]
    ]


def test_failed_cgi_on_gpu_1_puts_gpu_0_back_too_and_says_every_end_state(state):
    nvsmi_double.inject_failure(state, 1, "-cgi")
    calls = []

    result = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"}, calls=calls)

    assert [BIN, "mig", "-i", "0", "-cgi", "9:4,14:0,19:2,19:3", "-C"] in calls  # GPU 0 was laid out first
    assert end_state(state) == [(False, False, [])] * 2
    assert result["failed"] is True and result["changed"] is True
    assert result["cmd"] == [BIN, "mig", "-i", "1", "-cgi", "9:4,14:0,19:2,19:3", "-C"] and result["rc"] == 255
    assert [gpu["rolled_back"] for gpu in result["gpus"]] == [True, True]
    assert [gpu["after"] for gpu in result["gpus"]] == [DISABLED, DISABLED]
    assert result["reboot_required"] is False and result["pending_gpus"] == []
    message = result["msg"]
    assert "changing GPU 1 failed" in message and "In use by another client" in message
    assert "every GPU this run changed was put back to its previous layout" in message
    for gpu in state["gpus"]:
        assert f"GPU {gpu['index']} ({gpu['uuid']}): put back to its previous layout: MIG disabled" in message


def test_failed_relayout_on_gpu_1_recreates_gpu_0s_instances_and_reports_gpu_1_exactly(state):
    """mixed -> all-1g.10gb; GPU 1's -cgi keeps failing, so GPU 1 cannot get its 3g.40gb and 2g.20gb back either:
    GPU 0 is put back whole, GPU 1 is reported as it is (the two 1g.10gb the re-layout kept)."""
    run_module(state, {"config": MIXED_DOC, "config_name": "mixed"})
    before = end_state(state)
    nvsmi_double.inject_failure(state, 1, "-cgi")

    result = run_module(state, {"config_name": "all-1g.10gb"}, diff=True)

    gpu0, gpu1 = result["gpus"]
    assert end_state(state) == [before[0], (True, True, [(19, 2, 1), (19, 3, 1)])]
    assert (gpu0["rolled_back"], gpu0["after"]) == (True, gpu0["before"])
    assert gpu1["rolled_back"] is False and "In use by another client" in gpu1["rollback_problem"]
    assert [i["placement"] for i in gpu1["after"]["instances"]] == ["2:1", "3:1"]
    uuid0, uuid1 = (gpu["uuid"] for gpu in state["gpus"])
    message = result["msg"]
    assert f"GPU 0 ({uuid0}): put back to its previous layout: MIG enabled: 2g.20gb at 0:2, 1g.10gb at 2:1" in message
    assert f"GPU 1 ({uuid1}): not put back (restoring failed: " in message
    assert "it is now in this state: MIG enabled: 1g.10gb at 2:1, 1g.10gb at 3:1" in message
    assert "NOT every GPU this run changed could be put back" in message


def test_mode_change_left_pending_on_gpu_0_is_cancelled_when_gpu_1_fails(state):
    """GPU 0's enable stays pending (a client holds it), GPU 1's -cgi fails: the pending enable is set back too,
    so no later reset or reboot turns MIG on behind the failed run, and no reboot is asked for."""
    state["gpus"][0]["clients"].append({"pid": 1, "name": "nvidia-persistenced"})
    nvsmi_double.inject_failure(state, 1, "-cgi")

    result = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"})

    assert end_state(state) == [(False, False, [])] * 2
    assert result["failed"] is True
    assert result["reboot_required"] is False and result["pending_gpus"] == []
    assert [gpu["after"] for gpu in result["gpus"]] == [DISABLED, DISABLED]
    assert [gpu["rolled_back"] for gpu in result["gpus"]] == [True, True]


def test_gpu_not_reached_by_the_failed_run_is_reported_as_it_is(state):
    nvsmi_double.inject_failure(state, 0, "-cgi")

    result = run_module(state, {"config": MIXED_DOC, "config_name": "mixed"})

    assert end_state(state) == [(False, False, [])] * 2
    assert [gpu["rolled_back"] for gpu in result["gpus"]] == [True, None]
    assert result["gpus"][1]["after"] == DISABLED  # not the wanted layout: the run never got to GPU 1
    assert f"GPU 1 ({state['gpus'][1]['uuid']}): not changed by this run: MIG disabled" in result["msg"]
