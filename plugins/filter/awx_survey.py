# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter that turns options of role argument specs into an AWX job template survey.

The survey format and its rules are AWX's: awx/api/views JobTemplateSurveySpec._validate_spec_data
(question types, `default` of the question's type, `choices` for the two choice types with defaults
among them, integer `min`/`max`, unique variables) and awx/main/models/mixins.py
SurveyJobTemplateMixin._update_unified_job_kwargs (a question's `default` is sent as an extra var whenever it is
set and valid, and the launch's answers replace the defaults), as AWX 24.6.1 does.

An extra var overrides every inventory variable on every host. So a role option is asked as itself only where the
job template declares it run-wide (one choice for the whole run: batch size, timeouts, which checks); an option the
inventory may set per host or group is asked under a survey-only name, gpuops_awx_<option>, blank by default, and
the playbooks (playbooks/tasks/awx_survey_answers.yml) give it to the hosts only when it is answered.
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError

# The survey-only variables of blank-means-inventory questions start with this.
INVENTORY_PREFIX = "gpuops_awx_"
# AWX's question types and the Python type their `default` must have.
QUESTION_TYPES = {
    "text": str,
    "textarea": str,
    "password": str,
    "multiplechoice": str,
    "multiselect": str,
    "integer": int,
    "float": float,
}
_MARKUP = re.compile(r"\b[BCIMOUV]\(([^()]*)\)")
_LINK = re.compile(r"\bL\(([^,()]*),[^()]*\)")
_WHY_NOT = {
    "bool": "AWX answers a choice with a string and 'false' is not a boolean: set it in the inventory",
    "dict": "AWX has no question for a mapping: set it in the inventory or the job template's extra vars",
    "list": "AWX has no question for a free list (only a list of str with choices, as multiselect): set it in the "
    "inventory or the job template's extra vars",
}


def _description_line(description):
    """One line of text from an argument spec description (a string or a list), Ansible doc markup removed."""
    lines = description if isinstance(description, list) else [description or ""]
    # A line with ": " in it that YAML read as a mapping is put back as the text it was written as.
    text = " ".join(
        ", ".join(f"{key}: {value}" for key, value in line.items()) if isinstance(line, dict) else str(line)
        for line in lines
    )
    return _MARKUP.sub(r"\1", _LINK.sub(r"\1", text)).strip()


def _templated(value):
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def _question_type(spec):
    """(AWX question type, None) for an option's spec, or (None, reason it cannot be a question)."""
    option_type = spec.get("type", "str")
    choices = spec.get("choices")
    if spec.get("no_log"):
        if option_type not in ("str", "path") or choices:
            return None, f"no_log option of type {option_type} cannot be a password question"
        return "password", None
    if option_type in ("str", "path"):
        return ("multiplechoice" if choices else "text"), None
    if option_type in ("int", "float"):
        if choices:
            return None, f"{option_type} with choices: AWX would answer with a string"
        return ("integer" if option_type == "int" else "float"), None
    if option_type == "list" and choices and spec.get("elements", "str") == "str":
        return "multiselect", None
    return None, _WHY_NOT.get(option_type, f"type {option_type} has no AWX question type")


def _survey_default(question_type, value, choices):
    """The option's default as AWX wants it for the question type, or raise ValueError saying why not."""
    if question_type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"default {value!r} is not a whole number")
        return value
    if question_type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"default {value!r} is not a number")
        return float(value)
    if question_type == "multiselect":
        values = value if isinstance(value, list) else [value]
        outside = [item for item in values if str(item) not in choices]
        if outside:
            raise ValueError(f"default {outside} is not among the choices {choices}")
        return "\n".join(str(item) for item in values)
    if isinstance(value, (dict, list)):
        raise ValueError(f"default {value!r} is not a single value")
    text = str(value)
    if question_type == "multiplechoice" and text not in choices:
        raise ValueError(f"default {text!r} is not among the choices {choices}")
    return text


def _limits(question_type, limits):
    """AWX's min/max of a question (length for text, value for numbers), checked as AWX does: integers."""
    bounds = {}
    for key in ("min", "max"):
        if key in (limits or {}):
            value = limits[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{key} {value!r} is not a whole number (AWX takes integer limits)")
            bounds[key] = value
    if bounds and question_type in ("multiplechoice", "multiselect"):
        raise ValueError("a choice question takes no min/max")
    if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
        raise ValueError(f"min {bounds['min']} is greater than max {bounds['max']}")
    return bounds


def _question(option, spec, source, override, limits):
    """One AWX question for an option of an argument spec; raises ValueError saying why it cannot be."""
    question_type, why_not = _question_type(spec)
    if why_not:
        raise ValueError(why_not)
    choices = [str(choice) for choice in spec.get("choices") or []]
    question = {
        "question_name": option,
        "question_description": _description_line(spec.get("description")) or f"{option} ({source})",
        "variable": option,
        "type": question_type,
        "required": bool(spec.get("required", False)),
    }
    if choices:
        question["choices"] = choices
    question.update(_limits(question_type, limits))
    if question_type == "password":
        # A secret never goes into the survey: AWX would store it and send it on every launch.
        if override is not None:
            raise ValueError("a no_log option takes no survey default")
        question["required"] = True
        return question
    default = override if override is not None else spec.get("default")
    if _templated(default):
        raise ValueError(
            f"its default {default!r} is computed per run; AWX would send the question's answer instead "
            f"(a blank answer too): give the source a literal default for it under `defaults`"
        )
    if default is None:
        # AWX sends an optional question left blank as an empty value, which would replace the role's own
        # handling of an unset variable: the question must be answered.
        question["required"] = True
        return question
    question["default"] = _survey_default(question_type, default, choices)
    return question


def _inventory_question(option, spec, source, limits):
    """A question whose blank answer keeps the inventory's value: asked as gpuops_awx_OPTION, default blank."""
    question_type, why_not = _question_type(spec)
    if why_not:
        raise ValueError(why_not)
    if question_type != "text":
        # AWX checks a number's type and a choice against its choices: only a text answer can be blank.
        raise ValueError(f"its {question_type} question cannot be left blank to keep the inventory's value")
    bounds = _limits(question_type, limits)
    if bounds.get("min", 0) > 0:
        raise ValueError(f"min {bounds['min']} would refuse the blank answer that keeps the inventory's value")
    default = spec.get("default")
    otherwise = "" if default in (None, "") or _templated(default) else f" ({default})"
    return {
        "question_name": option,
        "question_description": (
            f"{_description_line(spec.get('description')) or f'{option} ({source})'} Blank: each host keeps its "
            f"inventory value, else the role's default{otherwise}."
        ).strip(),
        "variable": INVENTORY_PREFIX + option,
        "type": "text",
        "required": False,
        **bounds,
        # AWX 24.6.1 sends this blank default as ''; the playbooks take '' (or null, or nothing) as unanswered.
        "default": "",
    }


def awx_survey_problems(survey):
    """What AWX's API would refuse in a survey spec (JobTemplateSurveySpec._validate_spec_data), as a list of lines."""
    problems = []
    for field, kind in (("name", str), ("description", str), ("spec", list)):
        if not isinstance((survey or {}).get(field), kind):
            problems.append(f"'{field}' must be a {kind.__name__}")
    if problems:
        return problems
    if not survey["spec"]:
        problems.append("'spec' has no question")
    seen = set()
    for index, item in enumerate(survey["spec"]):
        where = f"question {index} ({item.get('variable', '?')})"
        for field, kind in (("type", str), ("question_name", str), ("variable", str), ("required", bool)):
            if not isinstance(item.get(field), kind):
                problems.append(f"{where}: '{field}' must be a {kind.__name__}")
        if item.get("variable") in seen:
            problems.append(f"{where}: variable is asked twice")
        seen.add(item.get("variable"))
        qtype = item.get("type")
        if qtype not in QUESTION_TYPES:
            problems.append(f"{where}: type {qtype!r} is not one of {', '.join(QUESTION_TYPES)}")
            continue
        default = item.get("default", "")
        if default != "" and not isinstance(default, QUESTION_TYPES[qtype]):
            problems.append(f"{where}: default {default!r} is not a {QUESTION_TYPES[qtype].__name__}")
        for key in ("min", "max"):
            if item.get(key) is not None and (isinstance(item[key], bool) or not isinstance(item[key], int)):
                problems.append(f"{where}: {key} must be an integer")
        if qtype in ("multiplechoice", "multiselect"):
            choices = item.get("choices")
            if not choices:
                problems.append(f"{where}: a {qtype} question needs choices")
                continue
            choices = choices.splitlines() if isinstance(choices, str) else choices
            defaults = [line for line in str(item.get("default", "")).splitlines() if line.strip()]
            if qtype == "multiplechoice" and len(defaults) > 1:
                problems.append(f"{where}: a multiplechoice question has one default at most")
            if any(value not in choices for value in defaults):
                problems.append(f"{where}: default {defaults} is not among the choices {choices}")
    return problems


def _source_questions(key, source, options, run_wide, asked):
    """(questions, problems) of one source whose argument spec entry point has OPTIONS; ASKED is updated."""
    questions, problems = [], []
    defaults = source.get("defaults") or {}
    limits = source.get("limits") or {}
    own = source.get("options") or []
    from_inventory = source.get("inventory_options") or []
    for extra in sorted(set(defaults) - set(own)):
        why = (
            "a default would be sent and override the inventory"
            if extra in from_inventory
            else "which the source does not ask"
        )
        problems.append(f"{key}: `defaults` names {extra}, {why}")
    for option, inventory in [(name, False) for name in own] + [(name, True) for name in from_inventory]:
        if option not in options:
            problems.append(
                f"{key}: no option {option!r} in entry point {source.get('entry_point', 'main')} "
                f"(it has {sorted(options)})"
            )
            continue
        if option in asked:
            problems.append(f"{key}: {option} is already asked through {asked[option]}")
            continue
        if not inventory and option not in run_wide:
            problems.append(
                f"{key}: {option} would override the inventory on every host (AWX sends every answer, the default "
                f"too, as an extra var): ask it under inventory_options, as {INVENTORY_PREFIX}{option} whose blank "
                f"answer keeps the inventory's value, or declare it run-wide (gpuops_awx_run_wide_options)"
            )
            continue
        try:
            if inventory:
                questions.append(_inventory_question(option, options[option], key, limits.get(option)))
            else:
                questions.append(_question(option, options[option], key, defaults.get(option), limits.get(option)))
        except ValueError as error:
            problems.append(f"{key}: {option} cannot be a survey question: {error}")
            continue
        asked[option] = key
    return questions, problems


def awx_survey(sources, argument_specs, name, description="", run_wide=None):
    """AWX survey spec ({name, description, spec}) asking the options SOURCES select.

    SOURCES: a list of {from: KEY of ARGUMENT_SPECS, options: [NAME, ...], inventory_options: [NAME, ...],
    entry_point: (default main), defaults: {NAME: survey default}, limits: {NAME: {min, max}}}. ARGUMENT_SPECS:
    {KEY: a parsed meta/argument_specs.yml}. RUN_WIDE: the option names that may be asked as themselves (under
    `options`); every other is refused. `inventory_options` are asked as gpuops_awx_NAME, blank by default.
    Fails listing every option that cannot be asked and why.
    """
    problems = []
    questions = []
    asked = {}
    run_wide = set(run_wide or ())
    for index, source in enumerate(sources or []):
        key = (source or {}).get("from")
        entry_point = source.get("entry_point", "main") if isinstance(source, dict) else "main"
        document = (argument_specs or {}).get(key)
        if document is None:
            problems.append(f"source {index}: 'from: {key}' is not one of {sorted(argument_specs or {})}")
            continue
        points = (document or {}).get("argument_specs") or {}
        if entry_point not in points:
            problems.append(f"{key}: no entry point {entry_point!r} (it has {sorted(points)})")
            continue
        found, wrong = _source_questions(key, source, points[entry_point].get("options") or {}, run_wide, asked)
        questions += found
        problems += wrong
    survey = {"name": name, "description": description, "spec": questions}
    if not problems:
        problems = awx_survey_problems(survey)
    if problems:
        raise AnsibleFilterError(f"survey {name!r}: " + "; ".join(problems))
    return survey


class FilterModule:
    """AWX surveys from argument specs."""

    def filters(self):
        return {"awx_survey": awx_survey}
