# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rke2_scheduler_extenders: the entries checked before any host changes, and the files the role writes."""

import copy
import pathlib

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.filter.rke2_scheduler import (
    FilterModule,
    rke2_scheduler_check,
    rke2_scheduler_config,
    rke2_scheduler_settings,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils import rke2_scheduler
from ansible_collections.gpuops.cluster.tests.unit.gpushare_upstream import GPUSHARE_EXTENDER

REPO_ROOT = pathlib.Path(__file__).resolve().parents[4]
GPUSHARE_POLICY = (
    REPO_ROOT.parent / "shared" / "manifests" / "gpushare" / "scheduler-extender-scheduler-policy-config.yaml"
)
GPUSHARE = GPUSHARE_EXTENDER


def _server(host, extenders, **changes):
    return {"host": host, "role": "server", "state": "present", "scheduler_extenders": extenders, **changes}


def test_the_gpushare_entry_is_valid_and_written_with_rke2s_scheduler_kubeconfig():
    assert rke2_scheduler.extenders_problems([GPUSHARE]) == []
    document = rke2_scheduler_config([GPUSHARE])
    assert document == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": "/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig"},
        "leaderElection": {"leaderElect": True},
        "extenders": [GPUSHARE],
    }


@pytest.mark.skipif(not GPUSHARE_POLICY.exists(), reason=f"{GPUSHARE_POLICY} is not on this machine")
def test_the_entry_equals_gpushares_own_file_but_the_kubeconfig_is_rke2s():
    upstream = yaml.safe_load(GPUSHARE_POLICY.read_text())
    assert upstream["extenders"] == [GPUSHARE]
    assert upstream["clientConnection"]["kubeconfig"] == "/etc/kubernetes/scheduler.conf"
    assert (
        rke2_scheduler_config(upstream["extenders"])["clientConnection"]["kubeconfig"]
        != "/etc/kubernetes/scheduler.conf"
    )


def test_the_settings_append_the_config_flag_and_mount_its_folder_read_only():
    assert rke2_scheduler_settings("/etc/rancher/rke2/kube-scheduler/config.yaml") == {
        "kube-scheduler-arg+": ["config=/etc/rancher/rke2/kube-scheduler/config.yaml"],
        "kube-scheduler-extra-mount+": ["/etc/rancher/rke2/kube-scheduler:/etc/rancher/rke2/kube-scheduler:ro"],
    }


def test_the_role_writes_where_the_filters_point():
    variables = yaml.safe_load((REPO_ROOT / "roles/rke2/vars/main.yml").read_text())
    assert variables["__rke2_scheduler_config_file"] == rke2_scheduler.CONFIG_FILE
    assert variables["__rke2_scheduler_settings_file"].startswith("/etc/rancher/rke2/config.yaml.d/")


def _bad(**changes):
    entry = copy.deepcopy(GPUSHARE)
    for key, value in changes.items():
        if value is None:
            entry.pop(key)
        else:
            entry[key] = value
    return entry


@pytest.mark.parametrize(
    ("extenders", "expected"),
    [
        ({"urlPrefix": "http://x"}, "is not a list"),
        (["http://127.0.0.1:32766"], "is not a mapping"),
        ([_bad(urlPrefix=None)], "[0].urlPrefix: None is not an http(s) URL"),
        ([_bad(urlPrefix="127.0.0.1:32766/gpushare-scheduler")], "is not an http(s) URL"),
        ([_bad(urlPrefix="ftp://127.0.0.1/x")], "is not an http(s) URL"),
        ([_bad(filterVerb=3)], "[0].filterVerb: 3 is not a verb"),
        ([_bad(bindVerb="")], "[0].bindVerb: '' is not a verb"),
        ([_bad(enableHTTPS="no")], "[0].enableHTTPS: 'no' is not true or false"),
        ([_bad(urlprefix="http://x")], "unknown key 'urlprefix' (did you mean urlPrefix?)"),
        ([_bad(prioritizeVerb="prioritize")], "with prioritizeVerb; valid: a positive weight"),
        ([_bad(prioritizeVerb="prioritize", weight=0)], "[0].weight: 0 with prioritizeVerb"),
        ([_bad(httpTimeout="30 seconds")], "[0].httpTimeout: '30 seconds' is not a duration"),
        ([_bad(managedResources={"name": "aliyun.com/gpu-mem"})], "managedResources: {'name'"),
        ([_bad(managedResources=[{"name": "gpu-mem"}])], "[0].managedResources[0].name: 'gpu-mem' is not"),
        ([_bad(managedResources=[{"name": "kubernetes.io/gpu"}])], "in the kubernetes.io domain"),
        ([_bad(managedResources=[{"name": "a.com/x", "ignored": True}])], "(did you mean ignoredByScheduler?)"),
        ([_bad(managedResources=[{"name": "a.com/x", "ignoredByScheduler": "yes"}])], "is not true or false"),
        ([GPUSHARE, _bad(urlPrefix="http://other/x")], "bindVerb set on entries [0, 1]"),
        ([GPUSHARE, _bad(bindVerb=None)], "'aliyun.com/gpu-mem' is managed twice"),
    ],
)
def test_bad_entries_are_refused_saying_what_is_valid(extenders, expected):
    problems = rke2_scheduler.extenders_problems(extenders)
    assert any(expected in line for line in problems), problems


def test_problems_name_host_and_variable_and_agents_are_not_checked():
    views = [
        _server("server-1", [_bad(urlPrefix="nowhere")]),
        {"host": "gpu-1", "role": "agent", "state": "present", "scheduler_extenders": "junk"},
    ]
    problems = rke2_scheduler_check(views)
    assert len(problems) == 1
    assert problems[0].startswith("server-1: rke2_scheduler_extenders: [0].urlPrefix: 'nowhere' is not an http(s) URL")


def test_servers_must_agree():
    problems = rke2_scheduler_check([_server("server-1", [GPUSHARE]), _server("server-2", [])])
    assert [line.split(":")[0] for line in problems] == ["server-1", "server-2"]
    assert all("differs between servers" in line for line in problems)
    assert rke2_scheduler_check([_server("server-1", [GPUSHARE]), _server("server-2", [GPUSHARE])]) == []
    assert rke2_scheduler_check([_server("server-1", []), _server("server-2", [], state="absent")]) == []


def test_the_filters_are_registered():
    assert set(FilterModule().filters()) == {"rke2_scheduler_check", "rke2_scheduler_config", "rke2_scheduler_settings"}


def test_the_argument_spec_accepts_the_gpushare_entry_and_refuses_a_wrong_type():
    # The plan checks host roles' variables against meta/argument_specs.yml (RoleVariableChecker).
    from ansible_collections.gpuops.cluster.plugins.plugin_utils.role_variables import (
        RoleVariableChecker,
        load_role_options,
    )

    checker = RoleVariableChecker(load_role_options(roles=("rke2",)))
    assert checker.problem("rke2_scheduler_extenders", [GPUSHARE]) is None
    assert checker.problem("rke2_scheduler_extenders", []) is None
    assert "urlPrefix" in checker.problem("rke2_scheduler_extenders", [{"filterVerb": "filter"}])
    assert checker.problem("rke2_scheduler_extenders", [_bad(managedResources=[{"ignoredByScheduler": True}])])


def test_the_plans_gpushare_extender_passes_the_roles_check():
    # The default of rke2_scheduler_extenders is the plan's scheduler_extenders: the two must fit.
    memory_sharing = pytest.importorskip("ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.memory_sharing")
    planned = memory_sharing.scheduler_extenders([{"backend": "gpushare"}])
    assert planned == [GPUSHARE]
    assert rke2_scheduler.extenders_problems(planned) == []
    assert memory_sharing.scheduler_extenders([None, {"backend": "hami"}]) == []
