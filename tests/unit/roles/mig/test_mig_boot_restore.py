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


def render_unit(**variables):
    """roles/mig/templates/gpuops-mig-apply.service.j2 as the template module renders it (trim_blocks)."""
    import jinja2

    folder = REPO / "roles/mig/templates"
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), trim_blocks=True)
    environment.filters["comment"] = lambda text: "# " + text
    values = {"ansible_managed": "managed", "mig_config_dir": "/etc/gpuops", "mig_lib_dir": "/usr/local/lib/gm"}
    return environment.get_template("gpuops-mig-apply.service.j2").render(values, **variables)


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
