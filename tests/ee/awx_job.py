# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A job run in the execution environment as AWX runs one outside Kubernetes: ansible-runner with container
process isolation, on a private data dir that holds the project (playbooks that import the collection's), the
inventory and the credential's SSH key, which ansible-runner hands to an ssh-agent inside the container.

What AWX does is read in ansible/awx at commit ad25cb743b31 (awx/main/tasks/jobs.py, BaseTask): the container
options of build_execution_environment_params (podman, `--user=root`), to which the network of the test bed's hosts
and a name with the test bed's prefix are added here, and the key written to the fifo env/ssh_key
(build_private_data_files), so that it never rests on disk.
"""

import dataclasses
import pathlib
import shutil

import yaml


@dataclasses.dataclass
class JobResult:
    status: str
    rc: int
    stdout: str
    events: list
    stats: dict

    def recap(self, host):
        """The PLAY RECAP counters of HOST, e.g. {"ok": 3, "changed": 1, "failed": 0, ...}."""
        keys = {"ok": "ok", "changed": "changed", "dark": "unreachable", "failures": "failed", "skipped": "skipped"}
        keys.update(rescued="rescued", ignored="ignored")
        return {name: (self.stats.get(key) or {}).get(host, 0) for key, name in keys.items()}

    def hosts(self):
        """Every host of the PLAY RECAP."""
        return sorted({host for counters in self.stats.values() if isinstance(counters, dict) for host in counters})

    def task_results(self, task_name, event="runner_on_ok"):
        """{host: res} of the events EVENT of the task named TASK_NAME."""
        return {
            item["event_data"]["host"]: item["event_data"].get("res", {})
            for item in self.events
            if item.get("event") == event and item["event_data"].get("task") == task_name
        }

    def explain(self):
        return f"status {self.status}, rc {self.rc}; last output:\n{self.stdout[-6000:]}"


def write_private_data_dir(root, playbooks, inventory, ssh_key=None, envvars=None, files=None):
    """A private data dir at ROOT: project/NAME.yml importing each FQCN playbook of PLAYBOOKS ({name: fqcn}),
    inventory/ (a copy of the folder INVENTORY, or the mapping INVENTORY as hosts.yml), env/ssh_key (a private key,
    given through a fifo as AWX gives a Machine credential's), env/envvars, and FILES ({relative path: text})."""
    root = pathlib.Path(root)
    (root / "project").mkdir(parents=True)
    (root / "env").mkdir(mode=0o700)
    for name, fqcn in playbooks.items():
        play = [{"name": f"Run {fqcn} as an AWX job template would", "ansible.builtin.import_playbook": fqcn}]
        (root / "project" / f"{name}.yml").write_text("---\n" + yaml.safe_dump(play, sort_keys=False), encoding="utf-8")
    if isinstance(inventory, dict):
        (root / "inventory").mkdir()
        (root / "inventory" / "hosts.yml").write_text(yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
    else:
        shutil.copytree(inventory, root / "inventory")
    if ssh_key is not None:
        from ansible_runner.utils import open_fifo_write

        open_fifo_write(str(root / "env" / "ssh_key"), ssh_key)
    if envvars:
        (root / "env" / "envvars").write_text(yaml.safe_dump(envvars), encoding="utf-8")
    for relative, text in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run_job(ansible_runner, private_data_dir, playbook, *, image, runtime, name, network=None, cmdline=None):
    """Run project/PLAYBOOK in the image IMAGE, in a container called NAME (on NETWORK), and collect the result."""
    options = ["--user=root", "--name", name]
    if network:
        options += ["--network", network]
    runner = ansible_runner.run(
        private_data_dir=str(private_data_dir),
        playbook=playbook,
        ident=name,
        cmdline=cmdline,
        process_isolation=True,
        process_isolation_executable=runtime,
        container_image=image,
        container_options=options,
        quiet=True,
        timeout=1200,
    )
    return JobResult(
        status=runner.status,
        rc=runner.rc,
        stdout=runner.stdout.read(),
        events=list(runner.events),
        stats=runner.stats or {},
    )
