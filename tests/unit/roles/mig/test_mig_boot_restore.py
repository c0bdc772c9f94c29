# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The mig role's boot-time restore: roles/mig/files/gpuops_mig_apply.py as gpuops-mig-apply.service runs it, with
the nvidia-smi test double as the GPUs and the collection's code only from the module_utils.json the role installs."""

import json
import pathlib
import subprocess
import sys

import yaml
from ansible_collections.gpuops.cluster.plugins.lookup.python_sources import python_sources

REPO = pathlib.Path(__file__).resolve().parents[4]
DOUBLE_DIR = REPO / "tests" / "doubles" / "nvidia_smi"
A100 = "NVIDIA A100-SXM4-80GB"
SCRIPT = REPO / "roles/mig/files/gpuops_mig_apply.py"
ROLE_VARS = yaml.safe_load((REPO / "roles/mig/vars/main.yml").read_text())


def document(name, mig_devices=None):
    """A mig-parted v1 document with one config NAME: every GPU MIG-enabled with MIG_DEVICES."""
    entry = {"devices": "all", "mig-enabled": True}
    if mig_devices is not None:
        entry["mig-devices"] = mig_devices
    return {"version": "v1", "mig-configs": {name: [entry]}}


def restore_modules(tmp_path):
    """module_utils.json as the mig role installs it: the sources of its __mig_restore_packages, no collection on
    the path of the command that imports them."""
    packages = yaml.safe_load((REPO / "roles/mig/vars/main.yml").read_text())["__mig_restore_packages"]
    path = tmp_path / "module_utils.json"
    path.write_text(json.dumps(python_sources(packages), sort_keys=True))
    return str(path)


def test_boot_time_restore_command_recreates_the_layout(tmp_path, monkeypatch):
    """roles/mig/files/gpuops_mig_apply.py with the double as nvidia-smi, as the systemd unit runs it."""
    monkeypatch.setenv("NVSMI_DOUBLE_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("PATH", f"{DOUBLE_DIR}:/usr/bin:/bin")
    config = tmp_path / "mig-config.json"
    config.write_text(json.dumps(document("mixed", {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})))
    subprocess.run(["nvidia-smi", "--double-init", A100, "2"], check=True)
    subprocess.run(["nvidia-smi", "-mig", "1"], check=True, capture_output=True)
    command = [
        sys.executable,
        str(REPO / "roles/mig/files/gpuops_mig_apply.py"),
        "--config-file",
        str(config),
        "--config-name",
        "mixed",
        "--modules",
        restore_modules(tmp_path),
    ]

    first = subprocess.run(command, capture_output=True, text=True, check=False)
    second = subprocess.run(command, capture_output=True, text=True, check=False)

    assert first.returncode == 0, first.stderr
    assert "GPU 1 (NVIDIA A100-SXM4-80GB): MIG enabled: 2g.20gb at 0:2" in first.stdout
    assert "11 nvidia-smi calls, 2 of them changed state" in first.stdout
    assert second.returncode == 0 and "3 nvidia-smi calls, 0 of them changed state" in second.stdout


def test_boot_time_restore_command_recreates_compute_instance_profiles(tmp_path, monkeypatch):
    """After a reboot the unit lays out "1c.3g.40gb" as mig-parted does (pkg/mig/config/config.go SetMigConfig:
    the GPU instance, then one CI of the C profile), with the module's engine."""
    monkeypatch.setenv("NVSMI_DOUBLE_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("PATH", f"{DOUBLE_DIR}:/usr/bin:/bin")
    config = tmp_path / "mig-config.json"
    config.write_text(json.dumps(document("ci", {"1c.3g.40gb": 1, "3g.40gb": 1})))
    subprocess.run(["nvidia-smi", "--double-init", A100, "1"], check=True)
    subprocess.run(["nvidia-smi", "-mig", "1"], check=True, capture_output=True)
    script = str(REPO / "roles/mig/files/gpuops_mig_apply.py")
    command = [
        sys.executable,
        script,
        "--config-file",
        str(config),
        "--config-name",
        "ci",
        "--modules",
        restore_modules(tmp_path),
    ]

    first = subprocess.run(command, capture_output=True, text=True, check=False)
    subprocess.run(["nvidia-smi", "--simulate-reboot"], check=True)
    restored = subprocess.run(command, capture_output=True, text=True, check=False)
    again = subprocess.run(command, capture_output=True, text=True, check=False)

    assert first.returncode == restored.returncode == again.returncode == 0, first.stderr + restored.stderr
    layout = "MIG enabled: 3g.40gb at 0:4, 3g.40gb at 4:4 (compute instances: 1c.3g.40gb) [changed]"
    assert layout in restored.stdout
    assert "3 of them changed state" in restored.stdout  # -cgi ... -C, -cgi without -C, -cci
    assert "0 of them changed state" in again.stdout


def test_boot_time_restore_command_without_document_applies_a_builtin_config(tmp_path, monkeypatch):
    """The unit of a host without gpuops_mig_configs runs without --config-file: built-in configs only."""
    monkeypatch.setenv("NVSMI_DOUBLE_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("PATH", f"{DOUBLE_DIR}:/usr/bin:/bin")
    subprocess.run(["nvidia-smi", "--double-init", A100, "1"], check=True)
    subprocess.run(["nvidia-smi", "-mig", "1"], check=True, capture_output=True)
    script = str(REPO / "roles/mig/files/gpuops_mig_apply.py")
    modules = restore_modules(tmp_path)

    done = subprocess.run(
        [sys.executable, script, "--config-name", "all-1g.10gb", "--modules", modules],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "MIG enabled: " + ", ".join(f"1g.10gb at {start}:1" for start in range(7)) in done.stdout


def render(text_var, **variables):
    """A file the role writes (__mig_restore_unit_text, __mig_drop_in_text of roles/mig/vars/main.yml), templated as
    Ansible templates it, with the role's vars."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    values = {
        **{key: trust_as_template(value) if isinstance(value, str) else value for key, value in ROLE_VARS.items()},
        "mig_config_dir": "/etc/gpuops",
        "mig_lib_dir": "/usr/local/lib/gm",
        **variables,
    }
    return Templar(loader=DataLoader(), variables=values).template(trust_as_template("{{ " + text_var + " }}"))


def render_unit(**variables):
    """The boot-time restore unit as the role writes it."""
    return render("__mig_restore_unit_text", **variables)


def exec_start_argv(unit):
    """ExecStart as systemd splits it: "..." quoting with backslash escapes, then %% -> % and $$ -> $."""
    import shlex

    line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    return [word.replace("%%", "%").replace("$$", "$") for word in shlex.split(line[len("ExecStart=") :])]


def test_unit_quotes_the_config_name_and_reads_a_document_only_when_there_is_one():
    name = 'mixed "a" 50% $HOME\\x'
    with_document = exec_start_argv(render_unit(mig_config_name=name, mig_configs=document("m")))
    builtin = exec_start_argv(render_unit(mig_config_name="all-balanced", mig_configs={}))

    assert with_document[with_document.index("--config-name") + 1] == name
    assert with_document[with_document.index("--config-file") + 1] == "/etc/gpuops/mig-config.json"
    assert "--config-file" not in builtin
    assert builtin[builtin.index("--config-name") + 1] == "all-balanced"
    assert builtin[builtin.index("--modules") + 1] == "/usr/local/lib/gm/module_utils.json"


# ---------------------------------------------------------------- a failed restore holds Kubernetes back
KUBERNETES_UNITS = ["kubelet.service", "rke2-agent.service", "rke2-server.service", "k3s-agent.service"]


def restore_command(tmp_path, name, config=None, held_back=()):
    command = [sys.executable, str(SCRIPT), "--config-name", name, "--modules", restore_modules(tmp_path)]
    command += ["--config-file", str(config)] if config else []
    return command + [word for unit in held_back for word in ("--held-back", unit)]


def test_restore_that_fails_on_gpu_1_puts_gpu_0_back_and_says_kubernetes_is_held_back(tmp_path, monkeypatch):
    """At boot (MIG on, no instances) GPU 1's -cgi fails: the restore leaves both GPUs as the reboot left them,
    exits 1 and tells the journal (stderr) what failed, where each GPU is, and that Kubernetes does not start."""
    monkeypatch.setenv("NVSMI_DOUBLE_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("PATH", f"{DOUBLE_DIR}:/usr/bin:/bin")
    subprocess.run(["nvidia-smi", "--double-init", A100, "2"], check=True)
    subprocess.run(["nvidia-smi", "-mig", "1"], check=True, capture_output=True)
    subprocess.run(["nvidia-smi", "--double-fail", "1", "-cgi"], check=True)
    config = tmp_path / "mig-config.json"
    config.write_text(json.dumps(document("mixed", {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})))

    done = subprocess.run(
        restore_command(tmp_path, "mixed", config, KUBERNETES_UNITS), capture_output=True, text=True, check=False
    )

    state = json.loads((tmp_path / "state.json").read_text())
    assert done.returncode == 1, done.stderr
    assert [gpu["gpu_instances"] for gpu in state["gpus"]] == [[], []]
    lines = done.stderr.splitlines()
    assert lines[0].startswith("MIG layout mixed not applied: changing GPU 1 failed: ")
    assert "In use by another client" in lines[0]
    for gpu in state["gpus"]:
        line = f"GPU {gpu['index']} ({gpu['uuid']}): put back to its previous layout: MIG enabled: no instances"
        assert line in lines
    assert [line for line in lines if line.startswith('the nvidia-smi call that failed: {"cmd": [')] != []
    assert (
        "Kubernetes is held back: kubelet.service, rke2-agent.service, rke2-server.service, k3s-agent.service "
        "require gpuops-mig-apply.service and do not start until it succeeds"
    ) in done.stderr


def test_restore_with_a_broken_config_file_says_so_and_holds_kubernetes_back(tmp_path, monkeypatch):
    monkeypatch.setenv("NVSMI_DOUBLE_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("PATH", f"{DOUBLE_DIR}:/usr/bin:/bin")
    subprocess.run(["nvidia-smi", "--double-init", A100, "1"], check=True)
    config = tmp_path / "mig-config.json"
    config.write_text("{broken")

    done = subprocess.run(
        restore_command(tmp_path, "mixed", config, ["rke2-agent.service"]), capture_output=True, text=True, check=False
    )

    assert done.returncode == 1
    assert done.stderr.startswith(f"MIG layout mixed not applied: the MIG config file {config} cannot be read as JSON")
    assert "Traceback" not in done.stderr
    assert "Kubernetes is held back: rke2-agent.service require" in done.stderr


def test_restore_run_by_hand_names_no_held_back_unit(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no nvidia-smi

    done = subprocess.run(restore_command(tmp_path, "all-balanced"), capture_output=True, text=True, check=False)

    assert done.returncode == 1
    assert done.stderr == "MIG layout all-balanced not applied: nvidia-smi not found in PATH\n"


def unit_sections(text):
    """A systemd unit file as {section: {key: [values]}} (a key may repeat)."""
    sections, current = {}, None
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif line and not line.startswith("#") and current is not None:
            key, _sep, value = line.partition("=")
            current.setdefault(key, []).append(value)
    return sections


def test_kubernetes_drop_in_requires_the_restore_and_orders_after_it():
    """systemd.unit(5): with Requires= and After= on a unit whose start fails, this unit is not started
    ("Dependency failed"); the drop-in adds exactly that to each Kubernetes unit."""
    drop_in = unit_sections(render("__mig_drop_in_text"))

    assert drop_in == {"Unit": {"Requires": ["gpuops-mig-apply.service"], "After": ["gpuops-mig-apply.service"]}}


def test_unit_runs_before_each_held_back_unit_and_names_them_for_the_journal():
    unit = render_unit(mig_config_name="all-balanced", mig_configs={})
    argv = exec_start_argv(unit)
    before = unit_sections(unit)["Unit"]["Before"][0].split()

    assert ROLE_VARS["__mig_kubernetes_units"] == KUBERNETES_UNITS
    assert [argv[i + 1] for i, word in enumerate(argv) if word == "--held-back"] == KUBERNETES_UNITS
    assert before == [*KUBERNETES_UNITS, "dcgm-exporter.service", "nvidia-cdi-refresh.service"]
