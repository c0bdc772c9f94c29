# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""From the plan to the validation pods: which resource, which device kind, how many sharing pods."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation import checks
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.errors import ValidationInputError
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import expectation
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils._validation import plans


def one_node(plan, host="node-1", node_names=None):
    return checks.targets({"nodes": {host: plan}}, node_names)


def described(probes):
    return [(p.expect.resource, p.expect.kind, p.expect.mig_profile, p.expect.replicas) for p in probes]


def test_whole_gpus_one_smoke_pod_and_no_sharing():
    target_list = one_node(plans.whole_gpus())

    assert described(checks.smoke_probes(target_list)) == [("nvidia.com/gpu", "gpu", None, 1)]
    assert described(checks.cuda_probes(target_list)) == [("nvidia.com/gpu", "gpu", None, 1)]
    assert checks.sharing_groups(target_list, 32) == []


def test_mig_single_advertises_mig_devices_as_gpu():
    (probe,) = checks.smoke_probes(one_node(plans.mig_single()))

    assert (probe.expect.resource, probe.expect.kind, probe.expect.mig_profile) == ("nvidia.com/gpu", "mig", "1g.10gb")
    assert probe.expect.describe() == "one MIG 1g.10gb device of NVIDIA A100-SXM4-80GB"


def test_mig_mixed_one_pod_per_profile_and_cuda_on_the_first():
    target_list = one_node(plans.mig_mixed())

    assert described(checks.smoke_probes(target_list)) == [
        ("nvidia.com/mig-1g.10gb", "mig", "1g.10gb", 1),
        ("nvidia.com/mig-2g.20gb", "mig", "2g.20gb", 1),
        ("nvidia.com/mig-3g.40gb", "mig", "3g.40gb", 1),
    ]
    assert described(checks.cuda_probes(target_list)) == [("nvidia.com/mig-1g.10gb", "mig", "1g.10gb", 1)]


@pytest.mark.parametrize(("rename", "resource"), [(False, "nvidia.com/gpu"), (True, "nvidia.com/gpu.shared")])
def test_time_slicing_shares_every_unit(rename, resource):
    target_list = one_node(plans.time_sliced(rename=rename))

    (group,) = checks.sharing_groups(target_list, 32)

    assert (group.expect.resource, group.expect.kind, group.expect.replicas) == (resource, "gpu", 4)
    assert group.expect.sharing == "time-slicing"
    assert len(group.probes) == 16 and not group.capped
    assert len({probe.key for probe in group.probes}) == 16


def test_mps_is_shared_like_time_slicing():
    (group,) = checks.sharing_groups(one_node(plans.mps(replicas=3)), 32)

    assert (group.expect.replicas, group.expect.sharing, len(group.probes)) == (3, "mps", 6)


def test_a_time_sliced_mig_profile_is_shared_alone():
    plan = plans.node_plan(
        "NVIDIA A100-SXM4-80GB",
        1,
        "mixed",
        {"1g.10gb": 3, "3g.40gb": 1},
        time_slicing={"resources": {"nvidia.com/mig-1g.10gb": 2}},
    )

    (group,) = checks.sharing_groups(one_node(plan), 32)

    assert (group.expect.resource, group.expect.kind, group.expect.replicas, len(group.probes)) == (
        "nvidia.com/mig-1g.10gb",
        "mig",
        2,
        6,
    )


def test_the_cap_cuts_the_sharing_pods_and_says_so():
    (group,) = checks.sharing_groups(one_node(plans.time_sliced(replicas=8)), 10)

    assert len(group.probes) == 10 and group.wanted == 32 and group.capped
    assert "ran 10 of the 32 pods" in checks.capped_note(group)


def test_node_names_map_hosts_to_nodes():
    (target,) = one_node(plans.whole_gpus(), "gpu-1", {"gpu-1": "gpu-1.example.com"})

    assert (target.host, target.node) == ("gpu-1", "gpu-1.example.com")


def test_a_node_name_for_a_host_outside_the_plan_fails():
    with pytest.raises(
        ValidationInputError, match=r"node_names: gpu-9 are not GPU nodes of the plan; valid hosts: gpu-1"
    ):
        one_node(plans.whole_gpus(), "gpu-1", {"gpu-9": "x"})


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"totals": {}}, "plan: must be the content of capacity.json"),
        (
            {"nodes": {"gpu-1": {"gpu_product": "NVIDIA L4", "resources": {"nvidia.com/gpu": "4"}}}},
            "plan.nodes.gpu-1.resources",
        ),
        ({"nodes": {"gpu-1": {"resources": {}}}}, "plan.nodes.gpu-1.gpu_product: missing"),
        # Without the plan's dra.json, a DRA node would be checked against nothing.
        (
            {"nodes": {"gpu-1": {"gpu_product": "NVIDIA L4", "resources": {}, "gpu_allocation": "dra"}}},
            "plan.nodes.gpu-1.gpu_allocation: dra, but the DRA plan",
        ),
        (
            {"nodes": {"gpu-1": {"gpu_product": "NVIDIA L4", "resources": {}, "gpu_allocation": "hami"}}},
            "plan.nodes.gpu-1.gpu_allocation: must be one of device_plugin, dra, got 'hami'",
        ),
    ],
)
def test_a_bad_plan_fails_naming_the_host_and_key(plan, message):
    with pytest.raises(ValidationInputError, match=message):
        checks.targets(plan)


def test_the_expectation_reads_the_labels_of_the_resource_before_renaming():
    plan = plans.time_sliced(rename=True)

    assert expectation(plan, "nvidia.com/gpu.shared").replicas == 4
    assert expectation(plan, "nvidia.com/gpu.shared").advertised == 16
