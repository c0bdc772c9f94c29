# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The RKE2 stand-in builds kube-scheduler's command line from kube-scheduler-arg as RKE2 does."""

import pathlib
import sys

from ansible.plugins.filter.core import to_nice_yaml
from ansible_collections.gpuops.cluster.plugins.filter.rke2_scheduler import rke2_scheduler_settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "doubles/rke2"))
from stand_in import component_args, config, server


def test_get_args_overrides_appends_prepends_and_sorts_as_k3s():
    # Semantics of k3s pkg/util/args.go, GetArgs: replace, `+` appends, `-` prepends, sorted by name.
    defaults = {"bind-address": "127.0.0.1", "secure-port": "10259", "feature-gates": "A=true"}
    assert component_args.get_args(defaults, []) == [
        "--bind-address=127.0.0.1",
        "--feature-gates=A=true",
        "--secure-port=10259",
    ]
    assert component_args.get_args(defaults, ["secure-port=0", "feature-gates+=B=true", "config=/c.yaml"]) == [
        "--bind-address=127.0.0.1",
        "--config=/c.yaml",
        "--feature-gates=A=true",
        "--feature-gates=B=true",
        "--secure-port=0",
    ]
    assert component_args.get_args(defaults, ["feature-gates-=B=true", "--profiling"])[1:4] == [
        "--feature-gates=B=true",
        "--feature-gates=A=true",
        "--profiling=true",
    ]


def test_the_roles_drop_in_appends_the_config_flag_to_config_yaml(tmp_path):
    drop_in = "# header\n" + to_nice_yaml(rke2_scheduler_settings("/etc/rancher/rke2/kube-scheduler/config.yaml"))
    settings = config.merge(config.parse("kube-scheduler-arg:\n  - v=2\n"), config.parse(drop_in))
    assert settings["kube-scheduler-arg"] == ["v=2", "config=/etc/rancher/rke2/kube-scheduler/config.yaml"]
    argv = server.scheduler_argv("/kube-multi", settings)
    assert argv[:2] == ["/kube-multi", "kube-scheduler"]
    assert "--config=/etc/rancher/rke2/kube-scheduler/config.yaml" in argv
    assert "--kubeconfig=/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig" in argv
    assert "--v=2" in argv


def test_without_the_drop_in_the_scheduler_runs_without_config():
    argv = server.scheduler_argv("/kube-multi", config.parse("cni: canal\n"))
    assert not [arg for arg in argv if arg.startswith("--config")]
    assert "--leader-elect=false" in argv and "--secure-port=0" in argv


def test_the_roles_feature_gates_drop_in_adds_flags_beside_rke2s_and_the_users():
    from ansible_collections.gpuops.cluster.plugins.filter.rke2_feature_gates import rke2_feature_gate_settings

    gates = {"kube-apiserver": {"DRAConsumableCapacity": True}, "kubelet": {"KubeletTracing": False}}
    drop_in = "# header\n" + to_nice_yaml(rke2_feature_gate_settings(gates, "server"))
    user = "kube-apiserver-arg:\n  - feature-gates=UserGate=true\nkubelet-arg:\n  - max-pods=50\n"
    settings = config.merge(config.parse(user), config.parse(drop_in))

    apiserver = component_args.get_args(
        {"feature-gates": "RKE2Default=true", "secure-port": 6443}, config.as_list(settings, "kube-apiserver-arg")
    )
    # The user's flag replaced RKE2's default (GetArgs); the role's `+` kept it and added its own.
    assert apiserver == [
        "--feature-gates=UserGate=true",
        "--feature-gates=DRAConsumableCapacity=true",
        "--secure-port=6443",
    ]
    kubelet = component_args.get_args({"root-dir": "/var/lib/kubelet"}, config.as_list(settings, "kubelet-arg"))
    assert kubelet == ["--feature-gates=KubeletTracing=false", "--max-pods=50", "--root-dir=/var/lib/kubelet"]
