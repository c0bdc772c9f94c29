# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The job templates' survey answers, sent as AWX sends them, against the real plan playbook.

AWX sends a job's survey answers as extra vars, above every inventory variable. A survey must therefore leave
each host its inventory's values unless the user answers: each GPU model's group keeps its own driver branch.
"""

import json
import pathlib
import re

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.awx_survey import awx_survey

REPO = pathlib.Path(__file__).resolve().parents[3]
TEMPLATES_FILE = yaml.safe_load((REPO / "playbooks" / "vars" / "awx_job_templates.yml").read_text(encoding="utf-8"))
TEMPLATES = {template["name"]: template for template in TEMPLATES_FILE["gpuops_awx_job_templates"]}
SPECS = {
    "playbook": TEMPLATES_FILE["gpuops_awx_playbook_options"],
    **{
        path.parents[1].name: yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in REPO.glob("roles/*/meta/argument_specs.yml")
    },
}

HOSTS = """\
all:
  children:
    rke2_servers:
      hosts:
        cp-1:
    rke2_agents:
      children:
        gpu_nodes:
    gpu_nodes:
      children:
        gpu_v100:
          hosts:
            gpu-v100-1:
        gpu_b200:
          hosts:
            gpu-b200-1:
"""
# Each GPU model's group sets its own driver branch (R580 is Volta's last; B200 needs R570 or later).
GROUP_VARS = {
    "all": 'rke2_version: "v1.35.4+rke2r1"\n',
    "gpu_v100": 'gpuops_gpu_product: Tesla V100-SXM2-32GB\ngpuops_gpu_count: 8\nnvidia_driver_branch: "570"\n'
    'nvidia_container_toolkit_version: "1.17.8-1"\n',
    "gpu_b200": 'gpuops_gpu_product: NVIDIA B200\ngpuops_gpu_count: 8\nnvidia_driver_branch: "595"\n',
}
INVENTORY_VALUES = {
    "gpu-v100-1": {"branch": "570", "toolkit": "1.17.8-1", "rke2": "v1.35.4+rke2r1"},
    "gpu-b200-1": {"branch": "595", "toolkit": "unset", "rke2": "v1.35.4+rke2r1"},
}
# The plan as a job template runs it, then what each GPU node's roles would read.
SHOW = """\
- name: Plan
  ansible.builtin.import_playbook: gpuops.cluster.plan

- name: Show what the roles would read
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: Show the versions
      ansible.builtin.debug:
        msg: >-
          SEEN {{ inventory_hostname }} branch={{ nvidia_driver_branch }}
          toolkit={{ nvidia_container_toolkit_version | default('unset') }} rke2={{ rke2_version }}
"""


def survey_of(name):
    """The survey playbooks/awx.yml gives job template NAME."""
    template = TEMPLATES[name]
    run_wide = TEMPLATES_FILE["gpuops_awx_run_wide_options"]
    return awx_survey(template["survey"], SPECS, name, template["description"], run_wide=run_wide)


def awx_answer_errors(question, value):
    """SurveyJobTemplateMixin._survey_element_validation of awx/main/models/mixins.py (AWX 24.6.1) for a value
    that is given: whether AWX accepts VALUE as the answer to QUESTION."""
    kind = question["type"]
    if kind in ("text", "textarea", "password"):
        if not isinstance(value, str):
            return True
        return len(value) < question.get("min", 0) or len(value) > question.get("max", len(value))
    if kind in ("integer", "float"):
        if type(value) not in ((int,) if kind == "integer" else (int, float)):
            return True
        return value < question.get("min", value) or value > question.get("max", value)
    choices = question["choices"]
    choices = [line for line in choices.splitlines() if line.strip()] if isinstance(choices, str) else choices
    if kind == "multiselect":
        return not isinstance(value, list) or any(item not in choices for item in value)
    return value not in choices


def awx_extra_vars(survey, answers=None):
    """The extra vars of a job launched from SURVEY, as SurveyJobTemplateMixin._update_unified_job_kwargs of
    awx/main/models/mixins.py (AWX 24.6.1) makes them: every question's `default` that is set (not None) and valid
    for its question, then the launch's ANSWERS over them. An optional text question left blank keeps its
    default; one cleared at launch is answered None (ansible/awx#16205)."""
    extra_vars = {}
    for question in survey["spec"]:
        default = question.get("default")
        if default is not None and not awx_answer_errors(question, default):
            extra_vars[question["variable"]] = default
    extra_vars.update(answers or {})
    return extra_vars


@pytest.fixture
def inventory(tmp_path):
    folder = tmp_path / "inventory"
    (folder / "group_vars").mkdir(parents=True)
    (folder / "hosts.yml").write_text(HOSTS)
    for group, text in GROUP_VARS.items():
        (folder / "group_vars" / f"{group}.yml").write_text(text)
    return folder


@pytest.fixture
def launch(run_playbook, tmp_path, inventory):
    """Run PLAYBOOK (plan.yml, or the plan then SHOW) with EXTRA_VARS as AWX passes them: a file given to -e @."""

    def run(playbook, extra_vars):
        extravars = tmp_path / "extravars"
        extravars.write_text(json.dumps(extra_vars))
        if playbook == "show":
            playbook = tmp_path / "show.yml"
            playbook.write_text(SHOW)
        return run_playbook(
            str(playbook), inventory, "-e", f"@{extravars}", "-e", f"gpuops_plan_dir={tmp_path / 'plan'}"
        )

    return run


def seen(result):
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    shown = re.findall(r"SEEN (\S+) branch=(\S*) toolkit=(\S*) rke2=([^\s\"]*)", result.stdout)
    return {host: {"branch": branch, "toolkit": toolkit, "rke2": rke2} for host, branch, toolkit, rke2 in shown}


def blank(survey, how):
    """The launch answers of SURVEY's blank questions: left as they are (AWX 24.6.1 sends their default ''),
    cleared (None, ansible/awx#16205), or not sent at all (AWX from ansible/awx#16289 on)."""
    blanks = [question["variable"] for question in survey["spec"] if question.get("default") == ""]
    return {"left": {}, "cleared": dict.fromkeys(blanks)}.get(how, {})


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("gpuops plan", "left"),
        ("gpuops plan", "cleared"),
        ("gpuops plan", "not sent"),
        ("gpuops upgrade", "left"),
        ("gpuops site", "left"),
    ],
)
def test_blank_survey_answers_leave_each_group_its_inventory_values(launch, name, how):
    """The playbooks of these job templates start with the plan; each host keeps its group's driver branch."""
    survey = survey_of(name)
    extra_vars = awx_extra_vars(survey, blank(survey, how))
    if how == "not sent":
        extra_vars = {key: value for key, value in extra_vars.items() if value != ""}
    assert seen(launch("show", extra_vars)) == INVENTORY_VALUES


def test_an_answer_replaces_the_inventory_value_on_every_host(launch):
    survey = survey_of("gpuops upgrade")
    answers = {"gpuops_awx_nvidia_driver_branch": " 580 ", "gpuops_awx_rke2_version": "v1.36.3+rke2r1"}
    values = seen(launch("show", awx_extra_vars(survey, answers)))
    assert values == {
        "gpu-v100-1": {"branch": "580", "toolkit": "1.17.8-1", "rke2": "v1.36.3+rke2r1"},
        "gpu-b200-1": {"branch": "580", "toolkit": "unset", "rke2": "v1.36.3+rke2r1"},
    }


def test_the_plan_checks_an_answered_branch_against_each_nodes_gpus(launch):
    survey = survey_of("gpuops plan")
    failed = launch(REPO / "playbooks" / "plan.yml", awx_extra_vars(survey, {"gpuops_awx_nvidia_driver_branch": "590"}))
    assert failed.returncode != 0
    assert "gpu-v100-1: nvidia_driver_branch: branch 590 cannot drive Tesla V100-SXM2-32GB (volta)" in failed.stdout
    assert "gpu-b200-1" not in failed.stdout.split("nothing was written", 1)[1]


def test_the_plan_sees_the_inventory_branch_behind_a_blank_answer(launch, inventory):
    """A default in the survey would have hidden the inventory's branch from the plan, and from the driver role."""
    (inventory / "group_vars" / "gpu_v100.yml").write_text(GROUP_VARS["gpu_v100"].replace('"570"', '"590"'))
    failed = launch(REPO / "playbooks" / "plan.yml", awx_extra_vars(survey_of("gpuops plan")))
    assert failed.returncode != 0
    assert "gpu-v100-1: nvidia_driver_branch: branch 590 cannot drive Tesla V100-SXM2-32GB (volta)" in failed.stdout


def test_survey_variables_are_no_unknown_inventory_variables(launch):
    survey = survey_of("gpuops upgrade")
    planned = launch(
        REPO / "playbooks" / "plan.yml", awx_extra_vars(survey, {"gpuops_awx_rke2_version": "v1.36.3+rke2r1"})
    )
    assert planned.returncode == 0, planned.stdout[-4000:]
    assert "is not a variable of gpuops.cluster" not in planned.stdout


def test_every_job_template_playbook_takes_the_answers_before_its_first_role():
    """plan.yml takes them first; site.yml and upgrade.yml import plan.yml first; validate.yml plans nothing."""
    answers = {"ansible.builtin.import_tasks": "tasks/awx_survey_answers.yml"}

    def first_task(play, section):
        return {key: value for key, value in play[section][0].items() if key == "ansible.builtin.import_tasks"}

    def load(name):
        return yaml.safe_load((REPO / "playbooks" / name).read_text(encoding="utf-8"))

    plan_tasks = load("plan.yml")[0]["tasks"]
    # A run that planned already ends the play before them: its answers are the hosts' facts since.
    assert plan_tasks[0]["ansible.builtin.meta"] == "end_play" and plan_tasks[0]["when"] == "gpuops_plan is defined"
    assert first_task({"tasks": plan_tasks[1:]}, "tasks") == answers
    for name in ("site.yml", "upgrade.yml"):
        assert load(name)[0]["ansible.builtin.import_playbook"] == "plan.yml", name
    assert first_task(load("validate.yml")[0], "pre_tasks") == answers
    # The job templates whose surveys have inventory questions run these (the user's playbooks/<name>.yml imports
    # gpuops.cluster.<name>); the others ask no question the playbooks must take.
    asking = {
        template["playbook"]
        for template in TEMPLATES.values()
        if any(source.get("inventory_options") for source in template["survey"])
    }
    assert asking == {f"playbooks/{name}" for name in ("plan.yml", "site.yml", "upgrade.yml", "validate.yml")}


def awx_launch_errors(survey, answers):
    """SurveyJobTemplateMixin.survey_variable_validation of awx/main/models/mixins.py (AWX 24.6.1): each question's
    _survey_element_validation against the launch's ANSWERS, a required question left out refused ("value missing")."""
    errors = []
    for question in survey["spec"]:
        if question["variable"] not in answers:
            if question["required"]:
                errors.append(f"'{question['variable']}' value missing")
        elif awx_answer_errors(question, answers[question["variable"]]):
            errors.append(f"'{question['variable']}' value {answers[question['variable']]!r} refused")
    return errors


NODE_TEMPLATES = [
    name
    for name, template in TEMPLATES.items()
    if any("gpuops_node" in source.get("options", []) for source in template["survey"])
]


def test_the_day_2_job_templates_ask_the_node():
    assert len(NODE_TEMPLATES) == 4, NODE_TEMPLATES


@pytest.mark.parametrize("name", NODE_TEMPLATES)
def test_a_day_2_launch_names_its_node_and_sends_nothing_else(name):
    """AWX refuses the launch without a node or with an empty one; an accepted one sends gpuops_node alone."""
    survey = survey_of(name)
    assert awx_launch_errors(survey, {}) == ["'gpuops_node' value missing"]
    assert awx_launch_errors(survey, {"gpuops_node": ""}) == ["'gpuops_node' value '' refused"]
    assert awx_launch_errors(survey, {"gpuops_node": "gpu-l4-1"}) == []
    assert awx_extra_vars(survey, {"gpuops_node": "gpu-l4-1"}) == {"gpuops_node": "gpu-l4-1"}
