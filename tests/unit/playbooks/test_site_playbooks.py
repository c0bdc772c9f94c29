# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml, upgrade.yml and the stage playbooks: they parse, every stage has its tag, tags select stages."""

import importlib.util
import pathlib
import re

import pytest

# The Kubernetes stages use kubernetes.core, a dependency the collection declares: `make unit` has it (the
# ansible package bundles it); ansible-test units installs only ansible-core.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and the Kubernetes stages need it",
)

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"
STAGES = {
    "plan.yml": "plan",
    "preflight.yml": "preflight",
    "driver.yml": "driver",
    "container_toolkit.yml": "toolkit",
    "mig.yml": "mig",
    "cluster.yml": "rke2",
    "gpu_operator.yml": "gpu_operator",
    "dra_driver.yml": "dra_driver",
    "gpu_memory_sharing.yml": "gpu_memory_sharing",
    "gpu_sharing.yml": "gpu_sharing",
}
SITE_TAGS = {*STAGES.values(), "validate", "hosts", "cluster", "kubernetes"}
# Ansible checks each role's arguments in a task it tags always; it runs with any --tags.
ARGUMENT_CHECK = "Validating arguments against arg spec"
NEEDS_VALIDATE = pytest.mark.skipif(
    not (REPO / "playbooks" / "validate.yml").exists(),
    reason="playbooks/validate.yml (the validation stage) is not in this tree yet",
)


def _ok(result):
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _tags(listing):
    """{play name: its task tags} of `--list-tags` output."""
    return {
        match.group(1).strip(): set(match.group(2).replace(" ", "").split(","))
        for match in re.finditer(r"play #\d+ \([^)]*\): (.+?)\tTAGS: \[[^\]]*\]\n\s+TASK TAGS: \[([^\]]*)\]", listing)
    }


@pytest.mark.parametrize("playbook", [*STAGES, "gpu_hosts.yml"])
def test_stage_playbooks_parse(run_playbook, playbook):
    _ok(run_playbook(playbook, EXAMPLE, "--syntax-check"))


@pytest.mark.parametrize(("playbook", "tag"), STAGES.items())
def test_each_stage_playbook_has_its_tag_and_plans_always(run_playbook, playbook, tag):
    listing = _ok(run_playbook(playbook, EXAMPLE, "--list-tags"))
    tags = _tags(listing)
    assert any(tag in task_tags for task_tags in tags.values()), listing
    if playbook not in ("gpu_operator.yml", "dra_driver.yml", "gpu_memory_sharing.yml", "gpu_sharing.yml"):
        assert {"plan", "always"} <= tags["Plan the GPU cluster"], listing


@NEEDS_VALIDATE
@pytest.mark.parametrize("playbook", ["site.yml", "upgrade.yml"])
def test_site_and_upgrade_parse(run_playbook, playbook):
    _ok(run_playbook(playbook, EXAMPLE, "--syntax-check"))


@NEEDS_VALIDATE
def test_site_has_every_stage_tag(run_playbook):
    listing = _ok(run_playbook("site.yml", EXAMPLE, "--list-tags"))
    every = set().union(*_tags(listing).values())
    assert every >= SITE_TAGS, sorted(SITE_TAGS - every)


def _tasks(listing):
    """[(play, task)] of `--list-tasks` output, without the tags."""
    found, play = [], None
    for line in listing.splitlines():
        heading = re.match(r"\s+play #\d+ \([^)]*\): (.+?)\t", line)
        if heading:
            play = heading.group(1)
        elif line.startswith("      ") and line.strip():
            found.append((play, line.strip().split("\t")[0]))
    return found


@NEEDS_VALIDATE
def test_tags_mig_runs_the_plan_once_and_the_mig_stage_only(run_playbook):
    listing = _ok(run_playbook("site.yml", EXAMPLE, "--list-tasks", "--tags", "mig"))
    tasks = [(play, task) for play, task in _tasks(listing) if ARGUMENT_CHECK not in task]
    plan = [task for play, task in tasks if play == "Plan the GPU cluster"]
    others = [(play, task) for play, task in tasks if play != "Plan the GPU cluster"]
    assert set(plan) == {
        "End the play where this run has planned already",
        "Give the hosts the answered AWX survey questions",
        "Validate the GPU intent and write the plan",
        "Keep the plan for the stages that follow",
    }
    assert others and all(task.startswith("gpuops.cluster.mig : ") for _play, task in others), others


@NEEDS_VALIDATE
def test_tags_hosts_runs_preflight_driver_toolkit_and_mig(run_playbook):
    listing = _ok(run_playbook("site.yml", EXAMPLE, "--list-tasks", "--tags", "hosts"))
    roles = {task.split(" : ")[0] for _play, task in _tasks(listing) if " : " in task and ARGUMENT_CHECK not in task}
    assert roles == {
        "gpuops.cluster.preflight",
        "gpuops.cluster.nvidia_driver",
        "gpuops.cluster.nvidia_container_toolkit",
        "gpuops.cluster.mig",
    }


def test_plan_runs_once_when_stage_playbooks_import_it_again(run_playbook, tmp_path):
    """Two stage playbooks in one run: the second import of plan.yml ends its play before any task with a worker, the
    first plan standing."""
    playbook = tmp_path / "two-stages.yml"
    playbook.write_text(
        "---\n"
        "- name: First\n  ansible.builtin.import_playbook: gpuops.cluster.plan\n"
        "- name: Second\n  ansible.builtin.import_playbook: gpuops.cluster.plan\n"
        "- name: Read the plan\n  hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - name: Show the totals of the plan\n      ansible.builtin.debug:\n"
        '        msg: "totals {{ gpuops_plan.capacity.totals | length }}"\n'
    )
    result = run_playbook(str(playbook), EXAMPLE, "-e", f"gpuops_plan_dir={tmp_path / 'plan'}")
    output = _ok(result)
    assert output.count("PLAY [Plan the GPU cluster]") == 2, output
    for task in ("Give the hosts the answered AWX survey questions", "Validate the GPU intent and write the plan"):
        assert output.count(f"TASK [{task}]") == 1, output
    runs = [section for section in output.split("TASK [") if section.startswith("Validate the GPU intent")]
    assert "GPU cluster plan:" in runs[0] and "changed: [" in runs[0], runs[0]
    assert re.search(r"totals [1-9]", output), output


@pytest.mark.parametrize("playbook", ["gpu_sharing.yml", "validate.yml"])
def test_kubernetes_stages_preview_a_new_site_in_check_mode_and_fail_for_real(run_playbook, playbook, tmp_path):
    """No kubeconfig yet (the rke2 stage of the same run would write it): check mode says so and goes on."""
    kubeconfig = tmp_path / "not-yet.kubeconfig"
    options = ("-e", f"gpuops_plan_dir={tmp_path / 'plan'}", "-e", f"gpuops_kubeconfig={kubeconfig}")
    preview = run_playbook(playbook, EXAMPLE, "--check", *options)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert f"Check mode: {kubeconfig} does not exist yet" in " ".join(preview.stdout.split())

    real = run_playbook(playbook, EXAMPLE, *options)
    assert real.returncode != 0
    assert f"{kubeconfig} does not exist on the controller" in " ".join(real.stdout.split())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param("gpuops_serial=0%", "gpuops_serial='0%' is invalid", id="serial"),
        pytest.param("gpuops_max_fail_percentage=150", "gpuops_max_fail_percentage='150' is invalid", id="max-fail"),
    ],
)
def test_a_bad_batch_setting_stops_the_host_stage_before_any_host(
    run_playbook, example_inventory, tmp_path, extra, message
):
    ran = run_playbook("gpu_hosts.yml", example_inventory, "-e", f"gpuops_plan_dir={tmp_path / 'plan'} {extra}")

    assert ran.returncode != 0
    assert message in ran.stdout + ran.stderr
    assert "PLAY [Prepare the GPU hosts]" not in ran.stdout
    assert "TASK [gpuops.cluster.nvidia_driver" not in ran.stdout
