# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""AWX surveys from the roles' argument specs (gpuops.cluster.awx_survey filter).

The rules a survey must meet are those of AWX's API (awx/api/views JobTemplateSurveySpec._validate_spec_data):
question types text, textarea, password, integer, float, multiplechoice, multiselect; a default of the
question's type; choices for the choice types, with defaults among them; integer min/max; unique variables.
"""

import pathlib

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.awx_survey import (
    FilterModule,
    awx_survey,
    awx_survey_problems,
)

REPO = pathlib.Path(__file__).resolve().parents[4]
ROLE_SPECS = {
    path.parents[1].name: yaml.safe_load(path.read_text(encoding="utf-8"))
    for path in sorted(REPO.glob("roles/*/meta/argument_specs.yml"))
    # A private role (_common) has no main entry point and no survey.
    if not path.parent.parent.name.startswith("_")
}
JOB_TEMPLATES_FILE = yaml.safe_load((REPO / "playbooks" / "vars" / "awx_job_templates.yml").read_text(encoding="utf-8"))
JOB_TEMPLATES = {template["name"]: template for template in JOB_TEMPLATES_FILE["gpuops_awx_job_templates"]}
ALL_SPECS = {**ROLE_SPECS, "playbook": JOB_TEMPLATES_FILE["gpuops_awx_playbook_options"]}
RUN_WIDE = JOB_TEMPLATES_FILE["gpuops_awx_run_wide_options"]
ROLE_OPTIONS = [
    pytest.param(role, option, spec, id=f"{role}.{option}")
    for role, document in ROLE_SPECS.items()
    for option, spec in document["argument_specs"]["main"]["options"].items()
]


def one_question(role, option, **source):
    survey = awx_survey([{"from": role, "options": [option], **source}], ROLE_SPECS, "test", run_wide=[option])
    assert awx_survey_problems(survey) == []
    (question,) = survey["spec"]
    return question


def refusal(role, option, **source):
    with pytest.raises(AnsibleFilterError) as error:
        awx_survey([{"from": role, "options": [option], **source}], ROLE_SPECS, "test", run_wide=[option])
    return str(error.value)


def spec_of(options, **extra):
    return {"custom": {"argument_specs": {"main": {"options": options}}}, **extra}


def test_filter_is_registered():
    assert FilterModule().filters()["awx_survey"] is awx_survey


def test_there_are_role_specs():
    assert {"gpu_operator", "gpu_sharing", "nvidia_driver", "rke2"} <= set(ROLE_SPECS)


def expected_refusal(spec):
    """Why the filter must refuse an option, or None when it must make a question of it."""
    option_type = spec.get("type", "str")
    if spec.get("no_log"):
        return None if option_type in ("str", "path") and not spec.get("choices") else "no_log option of type"
    if option_type == "bool":
        return "'false' is not a boolean"
    if option_type == "dict":
        return "no question for a mapping"
    if option_type == "list" and not spec.get("choices"):
        return "no question for a free list"
    if option_type not in ("str", "path", "int", "float", "list"):
        return f"type {option_type} has no AWX question type"
    if "{{" in str(spec.get("default", "")):
        return "computed per run"
    return None


@pytest.mark.parametrize(("role", "option", "spec"), ROLE_OPTIONS)
def test_every_role_option_is_a_valid_question_or_refused_with_its_reason(role, option, spec):
    """Each option of the collection's roles either makes a question AWX accepts, or is refused saying why."""
    option_type = spec.get("type", "str")
    reason = expected_refusal(spec)
    if reason:
        message = refusal(role, option)
        assert f"{role}: {option} cannot be a survey question" in message
        assert reason in message
        return
    question = one_question(role, option)
    assert question["variable"] == option
    assert question["question_description"], "a question says what it asks"
    if spec.get("no_log"):
        assert (question["type"], question["required"], "default" in question) == ("password", True, False)
    elif spec.get("choices"):
        assert question["type"] in ("multiplechoice", "multiselect")
        assert question["choices"] == [str(choice) for choice in spec["choices"]]
    else:
        assert question["type"] == {"str": "text", "path": "text", "int": "integer", "float": "float"}[option_type]
    if "default" in question:
        role_default = {"str": str, "path": str, "list": "\n".join}.get(option_type, lambda value: value)(
            spec["default"]
        )
        assert question["default"] == role_default
        assert question["required"] is bool(spec.get("required", False))
    else:
        assert question["required"] is True, "a question without default must be answered"


def test_choices_become_a_multiplechoice_with_the_role_default():
    question = one_question("gpu_operator", "gpu_operator_state")
    assert question == {
        "question_name": "gpu_operator_state",
        "question_description": "absent uninstalls the release; CRDs, the namespace and its ConfigMaps stay.",
        "variable": "gpu_operator_state",
        "type": "multiplechoice",
        "required": False,
        "choices": ["present", "absent"],
        "default": "present",
    }


def test_integer_keeps_a_whole_number_default_and_takes_limits():
    question = one_question(
        "gpu_operator", "gpu_operator_wait_timeout", limits={"gpu_operator_wait_timeout": {"min": 60}}
    )
    assert (question["type"], question["default"], question["min"]) == ("integer", 900, 60)
    assert "max" not in question


def test_no_log_option_is_a_required_password_without_default():
    question = one_question("rke2", "rke2_token")
    assert (question["type"], question["required"]) == ("password", True)
    assert "default" not in question


def test_no_log_option_takes_no_survey_default():
    message = refusal("rke2", "rke2_token", defaults={"rke2_token": "changeme"})
    assert "a no_log option takes no survey default" in message


@pytest.mark.parametrize(
    ("role", "option", "reason"),
    [
        pytest.param("gpu_operator", "gpu_operator_wait", "'false' is not a boolean", id="bool"),
        pytest.param("gpu_operator", "gpu_operator_values", "no question for a mapping", id="dict"),
        pytest.param("rke2", "rke2_tls_san", "no question for a free list", id="list"),
        pytest.param("rke2", "rke2_config_secrets", "no_log option of type dict", id="no_log-dict"),
        pytest.param("gpu_operator", "gpu_operator_kubeconfig", "computed per run", id="templated-default"),
    ],
)
def test_options_a_survey_cannot_carry_are_refused(role, option, reason):
    assert reason in refusal(role, option)


def test_a_literal_default_makes_a_templated_option_askable():
    question = one_question(
        "gpu_operator", "gpu_operator_kubeconfig", defaults={"gpu_operator_kubeconfig": "/runner/kubeconfig"}
    )
    assert (question["type"], question["default"], question["required"]) == ("text", "/runner/kubeconfig", False)


def test_description_markup_is_removed_and_lists_joined():
    question = one_question("rke2", "rke2_release_url")
    assert question["question_description"] == (
        "Base URL of RKE2's release downloads or of a mirror with the same layout ({url}/{version}/{file})."
    )
    specs = spec_of(
        {"x": {"type": "str", "default": "a", "description": ["See L(the docs,https://x.y/z).", "O(y) too."]}}
    )
    (question,) = awx_survey([{"from": "custom", "options": ["x"]}], specs, "t", run_wide=["x"])["spec"]
    assert question["question_description"] == "See the docs. y too."


def test_list_of_strings_with_choices_is_a_multiselect_with_newline_defaults():
    specs = spec_of({"pick": {"type": "list", "elements": "str", "choices": ["a", "b", "c"], "default": ["a", "c"]}})
    survey = awx_survey([{"from": "custom", "options": ["pick"]}], specs, "t", run_wide=["pick"])
    assert survey["spec"][0]["type"] == "multiselect"
    assert survey["spec"][0]["default"] == "a\nc"
    assert awx_survey_problems(survey) == []


def test_float_default_is_a_float():
    specs = spec_of({"ratio": {"type": "float", "default": 1}})
    (question,) = awx_survey([{"from": "custom", "options": ["ratio"]}], specs, "t", run_wide=["ratio"])["spec"]
    assert question["type"] == "float"
    assert isinstance(question["default"], float)


def test_option_without_default_becomes_required():
    specs = spec_of({"name": {"type": "str", "description": "A name."}})
    (question,) = awx_survey([{"from": "custom", "options": ["name"]}], specs, "t", run_wide=["name"])["spec"]
    assert question["required"] is True
    assert "default" not in question


@pytest.mark.parametrize(
    ("options", "source", "reason"),
    [
        pytest.param({"n": {"type": "int", "choices": [1, 2], "default": 1}}, {}, "int with choices", id="int-choices"),
        pytest.param(
            {"c": {"choices": ["a", "b"], "default": "a"}},
            {"defaults": {"c": "z"}},
            "not among the choices",
            id="override-outside-choices",
        ),
        pytest.param({"n": {"type": "int", "default": "ten"}}, {}, "is not a whole number", id="int-default-text"),
        pytest.param({"n": {"type": "int", "default": True}}, {}, "is not a whole number", id="int-default-bool"),
        pytest.param(
            {"n": {"type": "int", "default": 1}},
            {"limits": {"n": {"min": 5, "max": 2}}},
            "greater than max",
            id="min-over-max",
        ),
        pytest.param(
            {"n": {"type": "int", "default": 1}},
            {"limits": {"n": {"max": 2.5}}},
            "AWX takes integer limits",
            id="float-limit",
        ),
        pytest.param(
            {"c": {"choices": ["a"], "default": "a"}},
            {"limits": {"c": {"max": 3}}},
            "takes no min/max",
            id="choice-limits",
        ),
        pytest.param({"r": {"type": "raw", "default": "x"}}, {}, "type raw has no AWX question type", id="raw"),
    ],
)
def test_bad_sources_fail_naming_option_and_reason(options, source, reason):
    option = next(iter(options))
    with pytest.raises(AnsibleFilterError, match="custom: " + option + " cannot be a survey question") as error:
        awx_survey([{"from": "custom", "options": [option], **source}], spec_of(options), "t", run_wide=[option])
    assert reason in str(error.value)


def test_every_problem_is_listed_at_once():
    sources = [
        {"from": "rke2", "options": ["rke2_version", "rke2_typo", "rke2_cni"], "defaults": {"rke2_cni_x": "canal"}},
        {"from": "nowhere", "options": ["x"]},
        {"from": "rke2", "options": ["rke2_version"]},
        {"from": "rke2", "entry_point": "upgrade", "options": ["rke2_version"]},
    ]
    with pytest.raises(AnsibleFilterError) as error:
        awx_survey(sources, ROLE_SPECS, "gpuops upgrade", run_wide=["rke2_version", "rke2_cni"])
    message = str(error.value)
    assert message.startswith("survey 'gpuops upgrade': ")
    assert "rke2: no option 'rke2_typo' in entry point main" in message
    assert "`defaults` names rke2_cni_x, which the source does not ask" in message
    assert "source 1: 'from: nowhere' is not one of" in message
    assert "rke2: rke2_version is already asked through rke2" in message
    assert "rke2: no entry point 'upgrade'" in message


def test_a_survey_without_question_is_refused():
    with pytest.raises(AnsibleFilterError, match="'spec' has no question"):
        awx_survey([], ROLE_SPECS, "empty")


def test_an_option_not_declared_run_wide_is_refused_as_itself():
    """AWX would send its default as an extra var, over the driver branch each GPU model's group_vars set."""
    for run_wide in (None, ["rke2_version"]):
        with pytest.raises(AnsibleFilterError) as error:
            awx_survey(
                [{"from": "nvidia_driver", "options": ["nvidia_driver_branch"]}], ROLE_SPECS, "p", run_wide=run_wide
            )
        message = str(error.value)
        assert message.startswith("survey 'p': nvidia_driver: nvidia_driver_branch would override the inventory")
        assert "ask it under inventory_options, as gpuops_awx_nvidia_driver_branch whose blank answer" in message
        assert "or declare it run-wide (gpuops_awx_run_wide_options)" in message


def test_an_inventory_option_is_a_blank_text_question_under_a_survey_only_variable():
    survey = awx_survey([{"from": "rke2", "inventory_options": ["rke2_version"]}], ROLE_SPECS, "t")
    assert awx_survey_problems(survey) == []
    (question,) = survey["spec"]
    role_default = ROLE_SPECS["rke2"]["argument_specs"]["main"]["options"]["rke2_version"]["default"]
    assert question["question_description"].endswith(
        f"Blank: each host keeps its inventory value, else the role's default ({role_default})."
    )
    assert {key: value for key, value in question.items() if key != "question_description"} == {
        "question_name": "rke2_version",
        "variable": "gpuops_awx_rke2_version",
        "type": "text",
        "required": False,
        "default": "",
    }


@pytest.mark.parametrize(
    ("role", "option", "source", "reason"),
    [
        pytest.param(
            "gpu_operator", "gpu_operator_wait_timeout", {}, "its integer question cannot be left blank", id="integer"
        ),
        pytest.param(
            "gpu_operator", "gpu_operator_state", {}, "its multiplechoice question cannot be left blank", id="choices"
        ),
        pytest.param("rke2", "rke2_token", {}, "its password question cannot be left blank", id="no_log"),
        pytest.param("gpu_operator", "gpu_operator_wait", {}, "'false' is not a boolean", id="bool"),
        pytest.param(
            "rke2",
            "rke2_version",
            {"defaults": {"rke2_version": "v1.35.4+rke2r1"}},
            "`defaults` names rke2_version, a default would be sent and override the inventory",
            id="default",
        ),
        pytest.param(
            "rke2",
            "rke2_version",
            {"limits": {"rke2_version": {"min": 1}}},
            "min 1 would refuse the blank answer",
            id="min",
        ),
    ],
)
def test_inventory_options_that_cannot_be_left_blank_are_refused(role, option, source, reason):
    with pytest.raises(AnsibleFilterError) as error:
        awx_survey([{"from": role, "inventory_options": [option], **source}], ROLE_SPECS, "t")
    assert reason in str(error.value)


def test_an_option_is_asked_once_whichever_way():
    sources = [{"from": "rke2", "options": ["rke2_version"], "inventory_options": ["rke2_version"]}]
    with pytest.raises(AnsibleFilterError, match="rke2: rke2_version is already asked through rke2"):
        awx_survey(sources, ROLE_SPECS, "t", run_wide=["rke2_version"])


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        pytest.param({"type": "text", "default": 3}, "default 3 is not a str", id="text-int-default"),
        pytest.param({"type": "integer", "default": "3"}, "default '3' is not a int", id="integer-text-default"),
        pytest.param({"type": "float", "default": 3}, "default 3 is not a float", id="float-int-default"),
        pytest.param({"type": "multiplechoice"}, "needs choices", id="no-choices"),
        pytest.param(
            {"type": "multiplechoice", "choices": ["a", "b"], "default": "a\nb"},
            "one default at most",
            id="two-defaults",
        ),
        pytest.param(
            {"type": "multiselect", "choices": "a\nb", "default": "c"}, "not among the choices", id="default-outside"
        ),
        pytest.param({"type": "text", "min": "1"}, "min must be an integer", id="text-min"),
        pytest.param({"type": "checkbox"}, "is not one of text, textarea", id="unknown-type"),
        pytest.param({"type": "text", "required": "yes"}, "'required' must be a bool", id="required-text"),
    ],
)
def test_awx_survey_problems_finds_what_awx_refuses(question, problem):
    item = {"question_name": "q", "variable": "v", "required": False, **question}
    problems = awx_survey_problems({"name": "s", "description": "", "spec": [item]})
    assert any(problem in line for line in problems), problems


def test_awx_survey_problems_finds_a_variable_asked_twice():
    item = {"question_name": "q", "variable": "v", "required": False, "type": "text"}
    assert awx_survey_problems({"name": "s", "description": "", "spec": [item, item]}) == [
        "question 1 (v): variable is asked twice"
    ]


# The job templates of playbooks/awx.yml, with the roles' real argument specs.
DAY_2 = ("gpuops add_node", "gpuops remove_node", "gpuops change_node", "gpuops replace_node")
EXPECTED_VARIABLES = {
    "gpuops plan": [
        "gpuops_awx_nvidia_driver_branch",
        "gpuops_awx_nvidia_driver_version",
        "gpuops_awx_nvidia_container_toolkit_version",
        "gpuops_awx_rke2_version",
    ],
    "gpuops site": [
        "gpuops_serial",
        "gpuops_max_fail_percentage",
        "gpu_operator_wait_timeout",
        "gpuops_awx_gpu_operator_chart_version",
        "gpuops_awx_gpu_operator_image_registry",
        "dra_driver_wait_timeout",
        "gpuops_awx_dra_driver_chart_version",
        "gpu_memory_sharing_capacity_timeout",
        "gpuops_awx_gpu_memory_sharing_hami_chart_version",
        "gpu_sharing_capacity_timeout",
        "gpu_validation_checks",
    ],
    "gpuops validate": [
        "gpu_validation_checks",
        "gpu_validation_timeout",
        "gpu_validation_image_pull_policy",
        "gpuops_awx_gpu_validation_cuda_image",
        "gpuops_awx_gpu_validation_registry",
    ],
    "gpuops upgrade": [
        "gpuops_awx_nvidia_driver_branch",
        "gpuops_awx_nvidia_driver_version",
        "gpuops_awx_nvidia_container_toolkit_version",
        "gpuops_awx_rke2_version",
        "gpuops_awx_gpu_operator_chart_version",
        "gpuops_serial",
        "gpuops_max_fail_percentage",
    ],
    **{name: ["gpuops_node"] for name in DAY_2},
}


def template_survey(name):
    template = JOB_TEMPLATES[name]
    return awx_survey(template["survey"], ALL_SPECS, template["name"], template["description"], run_wide=RUN_WIDE)


def test_the_job_templates_are_defined():
    assert set(JOB_TEMPLATES) == {"gpuops plan", "gpuops site", "gpuops validate", "gpuops upgrade", *DAY_2}
    # Each runs playbooks/<name>.yml of the user's repository, which imports gpuops.cluster.<name>.
    assert {name: template["playbook"] for name, template in JOB_TEMPLATES.items()} == {
        name: f"playbooks/{name.removeprefix('gpuops ')}.yml" for name in JOB_TEMPLATES
    }


@pytest.mark.parametrize("name", sorted(JOB_TEMPLATES))
def test_job_template_survey_is_valid_for_awx(name):
    survey = template_survey(name)
    assert awx_survey_problems(survey) == []
    assert survey["name"] == name
    assert [question["variable"] for question in survey["spec"]] == EXPECTED_VARIABLES[name]


@pytest.mark.parametrize("name", sorted(JOB_TEMPLATES))
def test_job_template_uses_known_credentials(name):
    assert set(JOB_TEMPLATES[name]["credentials"]) <= {"machine", "kubeconfig"}


@pytest.mark.parametrize("name", sorted(JOB_TEMPLATES))
def test_job_template_playbook_exists(name):
    """The collection's playbook that the user's playbooks/<name>.yml imports (gpuops.cluster.<name>)."""
    playbook = REPO / "playbooks" / pathlib.PurePosixPath(JOB_TEMPLATES[name]["playbook"]).name
    if not playbook.exists():
        pytest.skip(f"playbooks/{playbook.name} is not in this checkout yet")
    assert yaml.safe_load(playbook.read_text(encoding="utf-8")), f"{playbook} is empty"


@pytest.mark.parametrize("name", DAY_2)
def test_day_2_survey_requires_the_node(name):
    """A required question: AWX refuses a launch without it, and min 1 refuses the empty answer AWX accepts for a
    required text question otherwise (awx/main/models/mixins.py SurveyJobTemplateMixin._survey_element_validation)."""
    (question,) = template_survey(name)["spec"]
    assert question == {
        "question_name": "gpuops_node",
        "question_description": "The node this run acts on, by its host name in the inventory.",
        "variable": "gpuops_node",
        "type": "text",
        "required": True,
        "min": 1,
    }
    assert "gpuops_node" in RUN_WIDE
    assert set(JOB_TEMPLATES[name]["credentials"]) == {"machine", "kubeconfig"}


def test_upgrade_survey_goes_one_node_at_a_time_by_default():
    questions = {question["variable"]: question for question in template_survey("gpuops upgrade")["spec"]}
    assert questions["gpuops_serial"]["default"] == "1"
    assert (questions["gpuops_max_fail_percentage"]["min"], questions["gpuops_max_fail_percentage"]["max"]) == (0, 100)
    assert questions["gpuops_awx_nvidia_driver_branch"] == {
        "question_name": "nvidia_driver_branch",
        "question_description": (
            "Driver branch (major version) to install and hold. The default, 580, is the newest long-term support "
            "branch and drives every GPU of the collection's catalog. Blank: each host keeps its inventory value, "
            "else the role's default (580)."
        ),
        "variable": "gpuops_awx_nvidia_driver_branch",
        "type": "text",
        "required": False,
        "default": "",
    }


def test_validate_survey_asks_the_checks_as_a_multiselect():
    questions = {question["variable"]: question for question in template_survey("gpuops validate")["spec"]}
    checks = questions["gpu_validation_checks"]
    assert (checks["type"], checks["choices"]) == ("multiselect", ["capacity", "dra", "smoke", "cuda", "sharing"])
    assert checks["default"] == "capacity\ndra\nsmoke\ncuda\nsharing"
    assert questions["gpu_validation_image_pull_policy"]["type"] == "multiplechoice"


def test_survey_defaults_are_the_role_defaults():
    """A question's default is what the role would use, so accepting every default changes nothing but the asked."""
    for name in JOB_TEMPLATES:
        for question in template_survey(name)["spec"]:
            for role, document in ROLE_SPECS.items():
                spec = document["argument_specs"]["main"]["options"].get(question["variable"])
                if spec is not None and "default" in question and question["type"] != "multiselect":
                    assert str(question["default"]) == str(spec["default"]), (name, role, question["variable"])


@pytest.mark.parametrize("name", sorted(JOB_TEMPLATES))
def test_job_template_defaults_send_no_inventory_variable(name):
    """Accepting a survey's defaults sends only run-wide options and blank survey-only answers."""
    for question in template_survey(name)["spec"]:
        if question["variable"].startswith("gpuops_awx_"):
            assert (question["default"], question["required"]) == ("", False), question
        else:
            assert question["variable"] in RUN_WIDE, question


def test_every_run_wide_declaration_is_asked_and_says_why():
    asked = {question["variable"] for name in JOB_TEMPLATES for question in template_survey(name)["spec"]}
    assert set(RUN_WIDE) <= asked
    assert all(isinstance(why, str) and why for why in RUN_WIDE.values())
