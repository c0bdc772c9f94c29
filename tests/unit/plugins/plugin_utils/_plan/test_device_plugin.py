# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Device plugin config: gpuops_time_slicing rules, the config built from it, the strict linter.

The seed fixtures under tests/fixtures/seeds/device-plugin/ are configs and `kubectl describe
node` outputs recorded in time-slicing tutorials; each names its seed document on line 1.
"""

import copy
import re

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.device_plugin import (
    build_device_plugin_config,
    lint_device_plugin_config,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.shared_resources import (
    advertised_resource,
    replicas_for,
)
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.time_slicing import (
    lint_time_slicing,
    lint_time_slicing_for_node,
)
from hypothesis import given
from hypothesis import strategies as st

SEEDS = "seeds/device-plugin/"
CONFIG_FILES = ("000-dp-example-config.yaml", "001-dp-example-config.yaml", "001-dp-example-config-replicas-2.yaml")
CONFIGMAP_FILES = (
    "000-time-slicing-config-a100-t4.yaml",
    "000-time-slicing-config-default.yaml",
    "003-time-slicing-config-all.yaml",
    "003-time-slicing-config-fine.yaml",
)


def time_slicing_from_config(doc):
    """The gpuops_time_slicing value that builds DOC's sharing.timeSlicing (None: not shared)."""
    section = (doc.get("sharing") or {}).get("timeSlicing")
    if not section:
        return None
    value = {"resources": {entry["name"]: entry["replicas"] for entry in section["resources"]}}
    if "renameByDefault" in section:
        value["rename_by_default"] = section["renameByDefault"]
    if "failRequestsGreaterThanOne" in section:
        value["fail_requests_greater_than_one"] = section["failRequestsGreaterThanOne"]
    return value


def seed_configs(read):
    """(label, config document) for every device plugin config recorded in the seeds."""
    configs = [(name, yaml.safe_load(read(SEEDS + name))) for name in CONFIG_FILES]
    for name in CONFIGMAP_FILES:
        configmap = yaml.safe_load(read(SEEDS + name))
        configs += [(f"{name}:{key}", yaml.safe_load(text)) for key, text in configmap["data"].items()]
    return configs


def describe_node(text):
    """Capacity and labels from a recorded `kubectl describe node`."""
    capacity_block = text.split("Capacity:", 1)[1].split("Allocatable:", 1)[0]
    capacity = {name: int(count) for name, count in re.findall(r"^\s+(\S+):\s+(\d+)\s*$", capacity_block, re.M)}
    labels = dict(re.findall(r"^\s+(nvidia\.com/[^=\s]+)=(\S+)\s*$", text, re.M))
    return capacity, labels


# --- the seeds -------------------------------------------------------------------------------


def test_every_seed_config_passes_the_strict_linter(seed_fixture):
    configs = seed_configs(seed_fixture)
    assert len(configs) == 9
    for label, doc in configs:
        assert lint_device_plugin_config(doc) == [], label


def test_seed_time_slicing_configs_are_rebuilt_from_gpuops_time_slicing(seed_fixture):
    rebuilt = 0
    for label, doc in seed_configs(seed_fixture):
        time_slicing = time_slicing_from_config(doc)
        if time_slicing is None:
            continue
        assert lint_time_slicing(time_slicing) == [], label
        names = [entry["name"] for entry in doc["sharing"]["timeSlicing"]["resources"]]
        mig_strategy = doc.get("flags", {}).get("migStrategy", "none")
        built = build_device_plugin_config(mig_strategy, time_slicing, names)
        expected = copy.deepcopy(doc["sharing"])
        expected["timeSlicing"]["resources"].sort(key=lambda entry: entry["name"])
        assert built["sharing"] == expected, label
        assert built["flags"] == {"migStrategy": mig_strategy}
        rebuilt += 1
    assert rebuilt == 8


def test_001_one_gpu_with_replicas_2_advertises_2(seed_fixture):
    doc = yaml.safe_load(seed_fixture(SEEDS + "001-dp-example-config-replicas-2.yaml"))
    capacity, _labels = describe_node(seed_fixture(SEEDS + "001-describe-node-1gpu-replicas-2.txt"))
    time_slicing = time_slicing_from_config(doc)
    physical_gpus = 1  # the seed: "As the node only has a single physical GPU"
    gpu_capacity = {name: count for name, count in capacity.items() if name.startswith("nvidia.com/")}
    resource = advertised_resource("nvidia.com/gpu", time_slicing)
    assert gpu_capacity == {resource: physical_gpus * replicas_for("nvidia.com/gpu", time_slicing)} == {resource: 2}


def test_003_four_t4_with_replicas_4_advertise_16_and_label_the_replicas(seed_fixture):
    configmap = yaml.safe_load(seed_fixture(SEEDS + "003-time-slicing-config-all.yaml"))
    time_slicing = time_slicing_from_config(yaml.safe_load(configmap["data"]["any"]))
    capacity, labels = describe_node(seed_fixture(SEEDS + "003-describe-node-t4-replicas-4.txt"))
    resource = advertised_resource("nvidia.com/gpu", time_slicing)
    assert resource == "nvidia.com/gpu"  # renameByDefault: false keeps the name
    assert capacity == {resource: int(labels["nvidia.com/gpu.count"]) * replicas_for("nvidia.com/gpu", time_slicing)}
    assert capacity[resource] == 16
    assert int(labels["nvidia.com/gpu.replicas"]) == replicas_for("nvidia.com/gpu", time_slicing)


def test_003_one_gpu_before_and_after_replicas_10(seed_fixture):
    before, _labels = describe_node(seed_fixture(SEEDS + "003-describe-node-1gpu.txt"))
    after, _labels = describe_node(seed_fixture(SEEDS + "003-describe-node-1gpu-x10.txt"))
    assert before["nvidia.com/gpu"] == replicas_for("nvidia.com/gpu", None) == 1
    assert after["nvidia.com/gpu"] == before["nvidia.com/gpu"] * replicas_for("nvidia.com/gpu", {"replicas": 10})


def test_001_eight_gpus_replicas_5_is_40_gpus_or_40_shared():
    # Seed 001 (lines 245): 8 GPUs x replicas 5 -> 40 nvidia.com/gpu, or nvidia.com/gpu.shared renamed.
    assert 8 * replicas_for("nvidia.com/gpu", {"replicas": 5}) == 40
    assert advertised_resource("nvidia.com/gpu", {"replicas": 5}) == "nvidia.com/gpu"
    assert advertised_resource("nvidia.com/gpu", {"replicas": 5, "rename_by_default": True}) == "nvidia.com/gpu.shared"


# --- lint_time_slicing -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        None,
        {"replicas": 2},
        {"replicas": 4, "rename_by_default": True, "fail_requests_greater_than_one": False},
        {"resources": {"nvidia.com/mig-1g.5gb": 3}},
        {"replicas": 4, "resources": {"nvidia.com/mig-1g.10gb": 7, "nvidia.com/gpu": 2}},
        {"replicas": 2, "resources": {"nvidia.com/mig-1c.3g.20gb": 3, "nvidia.com/mig-1g.10gb.me": 2}},
    ],
)
def test_valid_time_slicing(value):
    assert lint_time_slicing(value) == []


def test_ascii_digit_strings_from_ini_or_extra_vars_are_replicas():
    value = {"replicas": "4", "resources": {"nvidia.com/mig-1g.10gb": "3"}}
    assert lint_time_slicing(value) == []
    config = build_device_plugin_config("mixed", value, ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"])
    assert config["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 4},
        {"name": "nvidia.com/mig-1g.10gb", "replicas": 3},
    ]
    # The plugin's own YAML stays int-only: the config the collection writes passes the strict linter.
    assert lint_device_plugin_config(config) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (4, "gpuops_time_slicing: must be a mapping such as {replicas: 4}, got int; omit gpuops_time_slicing"),
        ([{"replicas": 4}], "gpuops_time_slicing: must be a mapping"),
        ({}, "gpuops_time_slicing: give 'replicas' (for every resource) and/or 'resources' (per resource)"),
        (
            {"replica": 4, "resources": {"nvidia.com/gpu": 2}},
            "gpuops_time_slicing.replica: unknown key; did you mean 'replicas'? valid keys: replicas,",
        ),
        (
            {"replicas": 4, "rename_by_defualt": True},
            "gpuops_time_slicing.rename_by_defualt: unknown key; did you mean",
        ),
        ({"replicas": 4, "colour": 1}, "gpuops_time_slicing.colour: unknown key; valid keys: replicas, resources,"),
        ({"replicas": "x"}, "gpuops_time_slicing.replicas: must be a whole number such as 4 or \"4\", not 'x'"),
        ({"replicas": "4.0"}, "gpuops_time_slicing.replicas: must be a whole number such as 4 or \"4\", not '4.0'"),
        ({"replicas": "\u00b2"}, "gpuops_time_slicing.replicas: must be a whole number"),
        ({"replicas": "-4"}, "gpuops_time_slicing.replicas: must be a whole number"),
        ({"replicas": -4}, "gpuops_time_slicing.replicas: number of replicas must be >= 2, got -4"),
        ({"replicas": "1"}, "number of replicas must be >= 2, got 1; 1 replica means no time-slicing"),
        ({"replicas": True}, "gpuops_time_slicing.replicas: must be a whole number"),
        ({"replicas": 4.0}, "gpuops_time_slicing.replicas: must be a whole number"),
        ({"replicas": 0}, "gpuops_time_slicing.replicas: number of replicas must be >= 2, got 0"),
        ({"replicas": 1}, "number of replicas must be >= 2, got 1; 1 replica means no time-slicing: omit gpuops_time"),
        ({"replicas": 2, "rename_by_default": "yes"}, "gpuops_time_slicing.rename_by_default: must be true or false"),
        ({"replicas": 2, "fail_requests_greater_than_one": 1}, "fail_requests_greater_than_one: must be true or false"),
        ({"resources": []}, "gpuops_time_slicing.resources: must be a non-empty mapping of resource name to replicas"),
        ({"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}, "resources: must be a non-empty mapping"),
        ({"resources": {"gpu": 4}}, 'gpuops_time_slicing.resources["gpu"]: resource name must start with \'nvidia.'),
        ({"resources": {"nvidia.com/GPU": 4}}, "resources[\"nvidia.com/GPU\"]: 'GPU' is not a DNS subdomain"),
        ({"resources": {"nvidia.com/mig-" + "1" * 50 + "g.5gb": 2}}, "must be 63 characters or less (70)"),
        ({"resources": {"nvidia.com/gpu.shared": 4}}, "name the resource as the plugin detects it ('nvidia.com/gpu')"),
        ({"resources": {"nvidia.com/tpu": 4}}, "not a resource the device plugin advertises"),
        ({"resources": {"nvidia.com/gpu": 1}}, "number of replicas must be >= 2, got 1; to leave a resource unshared"),
        ({"resources": {"nvidia.com/gpu": "three"}}, 'resources["nvidia.com/gpu"]: must be a whole number'),
    ],
)
def test_invalid_time_slicing(value, expected):
    problems = lint_time_slicing(value)
    assert len(problems) == 1, problems
    assert problems[0].startswith(expected) or expected in problems[0], problems


@pytest.mark.parametrize(
    ("key", "advice"),
    [
        ("renameByDefault", "use 'rename_by_default'"),
        ("failRequestsGreaterThanOne", "use 'fail_requests_greater_than_one'"),
        ("timeSlicing", "write 'replicas' and 'resources' directly under gpuops_time_slicing"),
        ("sharing", "write 'replicas' and 'resources' directly under gpuops_time_slicing"),
        ("flags", "the MIG strategy comes from gpuops_mig_strategy"),
        ("migStrategy", "set gpuops_mig_strategy"),
        ("version", "the collection writes version: v1"),
        ("mps", "time-slicing only"),
    ],
)
def test_device_plugin_keys_name_the_gpuops_key_to_use(key, advice):
    problems = lint_time_slicing({"replicas": 4, key: True})
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"gpuops_time_slicing.{key}: device plugin key in the wrong place; "), problems
    assert advice in problems[0]


def test_all_problems_are_reported_at_once():
    problems = lint_time_slicing(
        {"replica": 4, "renameByDefault": True, "fail_requests_greater_than_one": "no", "resources": {"gpu": 1}}
    )
    assert [problem.split(":", 1)[0] for problem in problems] == [
        "gpuops_time_slicing.replica",
        "gpuops_time_slicing.renameByDefault",
        "gpuops_time_slicing.fail_requests_greater_than_one",
        'gpuops_time_slicing.resources["gpu"]',
        'gpuops_time_slicing.resources["gpu"]',
    ]


def test_overrides_for_resources_the_node_does_not_advertise():
    time_slicing = {"replicas": 4, "resources": {"nvidia.com/mig-1g.5gb": 3}}
    assert lint_time_slicing_for_node(time_slicing, ["nvidia.com/gpu"]) == [
        'gpuops_time_slicing.resources["nvidia.com/mig-1g.5gb"]: this node does not advertise it; '
        "it advertises: nvidia.com/gpu"
    ]
    assert lint_time_slicing_for_node(time_slicing, ["nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb"]) == []
    assert lint_time_slicing_for_node({"replicas": 4}, ["nvidia.com/gpu"]) == []


# --- replicas_for / advertised_resource / build_device_plugin_config -------------------------


def test_replicas_and_names_per_resource():
    time_slicing = {"replicas": 4, "rename_by_default": True, "resources": {"nvidia.com/mig-1g.10gb": 7}}
    assert replicas_for("nvidia.com/mig-1g.10gb", time_slicing) == 7
    assert replicas_for("nvidia.com/mig-3g.40gb", time_slicing) == 4
    assert advertised_resource("nvidia.com/mig-1g.10gb", time_slicing) == "nvidia.com/mig-1g.10gb.shared"
    only_listed = {"rename_by_default": True, "resources": {"nvidia.com/mig-1g.10gb": 7}}
    assert replicas_for("nvidia.com/mig-3g.40gb", only_listed) == 1
    assert advertised_resource("nvidia.com/mig-3g.40gb", only_listed) == "nvidia.com/mig-3g.40gb"
    assert replicas_for("nvidia.com/gpu", None) == 1
    assert advertised_resource("nvidia.com/gpu", None) == "nvidia.com/gpu"


def test_build_without_time_slicing_sets_only_the_mig_strategy():
    assert build_device_plugin_config("single", None, ["nvidia.com/gpu"]) == {
        "version": "v1",
        "flags": {"migStrategy": "single"},
    }


def test_build_mixed_mig_node_with_overrides_and_renaming():
    config = build_device_plugin_config(
        "mixed",
        {
            "replicas": 2,
            "rename_by_default": True,
            "fail_requests_greater_than_one": True,
            "resources": {"nvidia.com/mig-1g.10gb": 7},
        },
        ["nvidia.com/mig-3g.40gb", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb"],
    )
    assert config == {
        "version": "v1",
        "flags": {"migStrategy": "mixed"},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": True,
                "failRequestsGreaterThanOne": True,
                "resources": [
                    {"name": "nvidia.com/mig-1g.10gb", "replicas": 7},
                    {"name": "nvidia.com/mig-3g.40gb", "replicas": 2},
                ],
            }
        },
    }


def test_build_shares_only_listed_resources_and_omits_sharing_when_none_match():
    listed = {"resources": {"nvidia.com/mig-1g.10gb": 3}}
    config = build_device_plugin_config("mixed", listed, ["nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"])
    assert config["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/mig-1g.10gb", "replicas": 3}]
    assert "sharing" not in build_device_plugin_config("none", listed, ["nvidia.com/gpu"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("hybrid", None, ["nvidia.com/gpu"]), "mig_strategy must be one of none, single, mixed, got 'hybrid'"),
        (("none", {"replicas": 1}, ["nvidia.com/gpu"]), "gpuops_time_slicing.replicas: number of replicas must be"),
        (("none", {"replicas": 2}, ["gpu"]), "resources: 'gpu': resource name must start with 'nvidia.com/'"),
    ],
)
def test_build_refuses_bad_input(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        build_device_plugin_config(*args)


RESOURCE_POOL = ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"]


@given(
    mig_strategy=st.sampled_from(["none", "single", "mixed"]),
    replicas=st.none() | st.integers(min_value=2, max_value=64),
    overrides=st.dictionaries(st.sampled_from(RESOURCE_POOL), st.integers(min_value=2, max_value=64)),
    flags=st.fixed_dictionaries(
        {}, optional={"rename_by_default": st.booleans(), "fail_requests_greater_than_one": st.booleans()}
    ),
    resources=st.lists(st.sampled_from(RESOURCE_POOL), min_size=1),
)
def test_every_built_config_passes_the_strict_linter(mig_strategy, replicas, overrides, flags, resources):
    time_slicing = dict(flags)
    if replicas is not None:
        time_slicing["replicas"] = replicas
    if overrides:
        time_slicing["resources"] = overrides
    if "replicas" not in time_slicing and "resources" not in time_slicing:
        time_slicing = None
    config = build_device_plugin_config(mig_strategy, time_slicing, resources)
    assert lint_device_plugin_config(config) == []
    entries = config.get("sharing", {}).get("timeSlicing", {}).get("resources", [])
    assert {entry["name"]: entry["replicas"] for entry in entries} == {
        name: replicas_for(name, time_slicing) for name in resources if replicas_for(name, time_slicing) > 1
    }
    assert [entry["name"] for entry in entries] == sorted(entry["name"] for entry in entries)


# --- lint_device_plugin_config ---------------------------------------------------------------


def time_sliced(**overrides):
    doc = {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    }
    doc.update(overrides)
    return doc


def with_entry(**entry):
    return time_sliced(sharing={"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4, **entry}]}})


def mps(replicas, mig_strategy="none"):
    return time_sliced(
        flags={"migStrategy": mig_strategy},
        sharing={"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}},
    )


@pytest.mark.parametrize(
    "doc",
    [
        time_sliced(),
        time_sliced(flags={"migStrategy": "single", "plugin": {"deviceListStrategy": ["cdi-annotations", "envvar"]}}),
        time_sliced(flags={"plugin": {"deviceIDStrategy": "index"}, "gfd": {"sleepInterval": "1m30s"}}),
        time_sliced(imex={"channelIDs": [0], "required": True}),
        with_entry(devices="all"),
        with_entry(rename="nvidia.com/gpu.shared"),
        mps(48),
        mps(10, "single"),
        {"version": "v1", "flags": {"migStrategy": "mixed", "failOnInitError": True}},
    ],
)
def test_valid_device_plugin_configs(doc):
    assert lint_device_plugin_config(doc) == []


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("version: v1", "config: must be a mapping (the device plugin config v1), got str"),
        (time_sliced(sharng={}), "sharng: unknown key (the plugin ignores it); did you mean 'sharing'?"),
        (
            time_sliced(migStrategy="none"),
            "migStrategy: misplaced key (the plugin ignores it here); it belongs under flags",
        ),
        (
            time_sliced(flags={"migStrategy": "none", "renameByDefault": True}),
            "flags.renameByDefault: misplaced key (the plugin ignores it here); it belongs under sharing.timeSlicing",
        ),
        (time_sliced(flags={"plugin": {"deviceIdStrategy": "uuid"}}), "flags.plugin.deviceIdStrategy: unknown key"),
        (time_sliced(version="v2"), "version: must be 'v1', got 'v2'"),
        ({"flags": {"migStrategy": "none"}}, "version: must be 'v1', got None"),
        (
            time_sliced(flags={"migStrategy": "mixd"}),
            "flags.migStrategy: must be one of none, single, mixed, got 'mixd'",
        ),
        (time_sliced(flags="none"), "flags: must be a mapping, got str"),
        (time_sliced(flags={"failOnInitError": "true"}), "flags.failOnInitError: must be true or false, got 'true'"),
        (time_sliced(flags={"nvidiaDriverRoot": 1}), "flags.nvidiaDriverRoot: must be a string, got 1"),
        (time_sliced(flags={"plugin": {"deviceListStrategy": "envar"}}), "flags.plugin.deviceListStrategy: must be"),
        (time_sliced(flags={"plugin": {"deviceListStrategy": []}}), "flags.plugin.deviceListStrategy: must be"),
        (time_sliced(flags={"plugin": {"deviceIDStrategy": "serial"}}), "flags.plugin.deviceIDStrategy: must be one"),
        (time_sliced(flags={"gfd": {"sleepInterval": 60}}), "flags.gfd.sleepInterval: must be a duration such as 60s"),
        (time_sliced(resources={"gpus": []}), "resources: the plugin ignores custom resource patterns"),
        (time_sliced(imex={"channelIDs": [1]}), "imex.channelIDs: must be [] or [0], got [1]"),
        (time_sliced(sharing={"timeSlicing": {}}), "sharing.timeSlicing.resources: must be a non-empty list"),
        (time_sliced(sharing={"timeSlicing": {"resources": []}}), "sharing.timeSlicing.resources: must be a non-empty"),
        (time_sliced(sharing={"timeSlicing": {"resources": ["nvidia.com/gpu"]}}), "resources[0]: must be a mapping"),
        (
            time_sliced(
                sharing={
                    "timeSlicing": {"renameByDefault": "yes", "resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}
                }
            ),
            "sharing.timeSlicing.renameByDefault: must be true or false, got 'yes'",
        ),
        (with_entry(replica=4), "resources[0].replica: unknown key (the plugin ignores it); did you mean 'replicas'?"),
        (with_entry(replicas=1), "sharing.timeSlicing.resources[0].replicas: number of replicas must be >= 2, got 1"),
        (with_entry(replicas="4"), "sharing.timeSlicing.resources[0].replicas: must be a whole number"),
        (with_entry(name="example.com/gpu"), "resources[0].name: 'example.com/gpu' is not a DNS subdomain"),
        (with_entry(name="nvidia.com/gpu_0"), "sharing.timeSlicing.resources[0].name: 'gpu_0' is not a DNS subdomain"),
        (with_entry(name="nvidia.com/" + "a" * 53), "must be 63 characters or less (64)"),
        (with_entry(rename="nvidia.com/shared-gpu"), "resources[0].rename: the plugin ignores custom names"),
        (with_entry(devices=[0, 1]), "resources[0].devices: the plugin ignores device selection"),
        (
            time_sliced(sharing={"timeSlicing": {"resources": [{"name": "nvidia.com/gpu"}]}}),
            "sharing.timeSlicing.resources[0].replicas: missing",
        ),
        (
            time_sliced(sharing={"timeSlicing": {"resources": [{"replicas": 2}]}}),
            "sharing.timeSlicing.resources[0].name: missing",
        ),
        (
            time_sliced(sharing={"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}] * 2}}),
            "sharing.timeSlicing.resources[1].name: nvidia.com/gpu is listed twice",
        ),
        (
            mps(49),
            "sharing.mps.resources[0].replicas: must be <= 48 (the most clients an MPS server serves per device)",
        ),
        (mps(4, "mixed"), "sharing.mps: the plugin refuses MPS with flags.migStrategy mixed; use none or single"),
        (
            time_sliced(
                sharing={
                    "mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
                    "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]},
                }
            ),
            "sharing: both mps and timeSlicing are set; the plugin uses mps only, keep one of them",
        ),
    ],
)
def test_invalid_device_plugin_configs(doc, expected):
    problems = lint_device_plugin_config(doc)
    assert len(problems) == 1, problems
    assert expected in problems[0], problems


def test_mps_limit_is_16_below_compute_capability_7_5():
    """NVIDIA/k8s-device-plugin cmd/mps-control-daemon/mps/device.go: maxClients is 48 when
    isAtLeastVolta, which compares the compute capability with "v7.5" (so a V100, 7.0, gets 16)."""
    assert lint_device_plugin_config(mps(16), compute_capability="6.1") == []
    assert lint_device_plugin_config(mps(17), compute_capability="6.1") == [
        "sharing.mps.resources[0].replicas: must be <= 16 (the most clients an MPS server serves per device), got 17"
    ]
    assert lint_device_plugin_config(mps(16), compute_capability="7.0") == []
    assert len(lint_device_plugin_config(mps(17), compute_capability="7.0")) == 1
    assert lint_device_plugin_config(mps(48), compute_capability="7.5") == []
    assert len(lint_device_plugin_config(mps(49), compute_capability="7.5")) == 1


@pytest.mark.parametrize(
    "doc",
    [
        time_sliced(flags={"plugin": {"sharedDevicesAllocationPolicy": "packed"}}),
        time_sliced(flags={"plugin": {"sharedDevicesAllocationPolicy": "distributed"}}),
        with_entry(name="gpu"),
        with_entry(name="gpu", rename="gpu.shared"),
        time_sliced(sharing={"mps": {"resources": [{"name": "gpu", "replicas": 4}]}}),
    ],
)
def test_linter_accepts_what_plugin_v0_20_accepts(doc):
    """NVIDIA/k8s-device-plugin v0.20: api/config/v1/flags.go PluginCommandLineFlags has
    sharedDevicesAllocationPolicy (distributed | packed, checked by cmd/nvidia-device-plugin/main.go
    validateFlags), and api/config/v1/resources.go NewResourceName reads a name without the
    nvidia.com/ prefix ("gpu") as nvidia.com/gpu."""
    assert lint_device_plugin_config(doc) == []


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            time_sliced(flags={"plugin": {"sharedDevicesAllocationPolicy": "spread"}}),
            "flags.plugin.sharedDevicesAllocationPolicy: must be one of distributed, packed, got 'spread'",
        ),
        (
            time_sliced(flags={"sharedDevicesAllocationPolicy": "packed"}),
            "flags.sharedDevicesAllocationPolicy: misplaced key (the plugin ignores it here); it belongs under "
            "flags.plugin",
        ),
        (
            time_sliced(flags={"restartOnDeviceUnhealthy": True}),
            "flags.restartOnDeviceUnhealthy: unknown key (the plugin ignores it)",
        ),
        (
            time_sliced(
                sharing={
                    "timeSlicing": {
                        "resources": [{"name": "gpu", "replicas": 2}, {"name": "nvidia.com/gpu", "replicas": 3}]
                    }
                }
            ),
            "sharing.timeSlicing.resources[1].name: nvidia.com/gpu is listed twice",
        ),
        (
            time_sliced(
                sharing={
                    "timeSlicing": {
                        "resources": [{"name": "nvidia.com/gpu", "replicas": 2}, {"name": "gpu", "replicas": 3}]
                    }
                }
            ),
            "sharing.timeSlicing.resources[1].name: gpu (nvidia.com/gpu) is listed twice",
        ),
        (with_entry(name="g" * 53), "must be 63 characters or less (64)"),
    ],
)
def test_linter_refuses_what_plugin_v0_20_ignores_or_refuses(doc, expected):
    """NVIDIA/k8s-device-plugin v0.20: api/config/v1/flags.go (the keys of CommandLineFlags and
    PluginCommandLineFlags), cmd/nvidia-device-plugin/main.go validateFlags ("invalid
    --shared-devices-allocation-policy option"), api/config/v1/resources.go NewResourceName (the
    63-character limit applies to the prefixed name)."""
    problems = lint_device_plugin_config(doc)
    assert len(problems) == 1, problems
    assert expected in problems[0], problems
