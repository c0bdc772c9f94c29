# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plan_cluster over generated intents: it returns a plan whose numbers and labels the cluster can hold, or
raises the collection's own error naming a host and a variable, and never takes long.

The intents are shaped as the action passes them (JSON-shaped hostvars: string keys, lists, strings,
numbers, booleans, None), mixing the catalog's real products and configs with nonsense, huge, negative,
float, boolean and textual numbers and nested junk.
"""

from datetime import timedelta

from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import all_products
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_configs import builtin_mig_configs
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.mig_layout import compute_instance_names
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.bounds import INT64_MAX, label_value_problem
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.cluster import INTENT_VARIABLES, plan_cluster
from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentErrors, PlanError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOSTS = ("gpu-0", "gpu-1", "gpu-2")
DRIVER_VARIABLES = ("nvidia_driver_branch", "nvidia_driver_version")
PRODUCT_NAMES = sorted({name for p in all_products() for name in (p.name, *p.aliases)})
PROFILES = sorted(
    {name for p in all_products() if p.mig for gi in p.mig.profiles for name in compute_instance_names(gi)}
)
USER_CONFIG_NAMES = ("custom-a", "custom b", "all-1g.10gb")
CONFIG_NAMES = sorted({name for p in all_products() for name in builtin_mig_configs(p)} | set(USER_CONFIG_NAMES))
RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb", "gpu", "nvidia.com/gpu.shared")

text = st.text(max_size=12)
# Numbers as an inventory may give them: small and plausible, the bounds' edges, far beyond, and not numbers.
numbers = st.one_of(
    st.integers(min_value=-3, max_value=40),
    st.sampled_from([0, 1, 2, 7, 8, 32, 33, 48, 49, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 10**7, 10**29, 10**30]),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.001, 0.5, 1.0, 1.5, 1.0e308, -1.0, 1e-300]),
    st.booleans(),
    st.none(),
    st.from_regex(r"[0-9]{1,45}", fullmatch=True),
    st.sampled_from(["4", "4\n", " 4", "1e3", "0x10", "\u00b2", "-4", "", "9" * 5000]),
    text,
)
scalars = st.one_of(st.none(), st.booleans(), numbers, text)
junk = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)


def chance(tenths):
    """True about TENTHS times in ten. Hypothesis draws small and edge integers more often than others, so the
    remainder of a wide range decides, not the integer itself."""
    return st.integers(0, 999).map(lambda drawn: (drawn * 7919) % 10 < tenths)


def mostly(good, bad=junk):
    """GOOD nine times in ten, else BAD: plausible clusters get planned, and the junk still reaches every check."""
    return chance(9).flatmap(lambda plausible: good if plausible else bad)


# Profile names of the catalog, and some that are not: text, a compute-instance count too long for int(), digits
# other than ASCII, a trailing newline.
bad_profiles = text | st.sampled_from(["9" * 5000 + "c.3g.40gb", "\u0663g.40gb", "1g.10gb\n", "12c.3g.40gb"])
mig_devices = st.dictionaries(
    mostly(st.sampled_from(PROFILES), bad_profiles), mostly(st.integers(0, 7), numbers), max_size=3
)
mig_entry = st.fixed_dictionaries(
    {"devices": mostly(st.just("all") | st.lists(st.integers(0, 7), max_size=3)), "mig-enabled": mostly(st.booleans())},
    optional={
        "mig-devices": mostly(mig_devices),
        "device-filter": mostly(st.sampled_from(["0x20B210DE", "0x233010DE"])),
    },
)
mig_configs = st.fixed_dictionaries(
    {
        "version": mostly(st.just("v1")),
        "mig-configs": mostly(
            st.dictionaries(
                mostly(st.sampled_from(USER_CONFIG_NAMES), text),
                mostly(st.lists(mig_entry, min_size=1, max_size=2)),
                min_size=1,
                max_size=2,
            )
        ),
    }
)
# Plausible values, and valid ones up to the bounds, whose plans must still hold within an int64.
replicas = mostly(st.integers(2, 16) | st.integers(2, 2**62), numbers)
per_resource = st.dictionaries(mostly(st.sampled_from(RESOURCES), text), replicas, min_size=1, max_size=2)
time_slicing = st.fixed_dictionaries(
    {"replicas": replicas},
    optional={
        "resources": mostly(per_resource),
        "rename_by_default": mostly(st.booleans()),
        "fail_requests_greater_than_one": mostly(st.booleans()),
    },
)
mps = st.fixed_dictionaries({"replicas": replicas}, optional={"rename_by_default": mostly(st.booleans())}) | (
    st.fixed_dictionaries({"resources": per_resource})
)
scaling = mostly(st.floats(min_value=0.25, max_value=4) | st.floats(min_value=0.01, max_value=2.2e7), numbers)
memory_sharing = st.fixed_dictionaries(
    {"backend": mostly(st.sampled_from(["hami", "gpushare"]))},
    optional={
        "split": mostly(st.integers(1, 20) | st.integers(1, 2**31), numbers),
        "memory_scaling": scaling,
        "core_scaling": scaling,
    },
)
catalog_extra = st.lists(
    mostly(
        st.fixed_dictionaries(
            {
                "name": mostly(st.sampled_from(["NVIDIA L40G", "NVIDIA RTX 4090", "NVIDIA TITAN X (Pascal)"]), text),
                "memory_mib": mostly(st.integers(1024, 200_000), numbers),
                "compute_capability": mostly(st.sampled_from(["8.9", "9.0", "12.0"])),
            },
            optional={"pci_device_id": mostly(st.sampled_from(["0x2B8510DE", "2684", "0x27B810DE"]))},
        )
    ),
    max_size=2,
)
products = mostly(st.sampled_from(PRODUCT_NAMES), st.sampled_from(["NVIDIA L40G", "NVIDIA RTX 4090"]) | text | junk)
# The cluster-wide variables, as group_vars/all sets them once for every host.
CLUSTER_WIDE = {
    "gpuops_mig_strategy": mostly(st.sampled_from(["none", "single", "mixed"])),
    "gpuops_mig_manager": mostly(st.sampled_from(["host", "operator"])),
    "gpuops_mig_configs": mostly(mig_configs),
    "gpuops_cdi": mostly(st.booleans()),
}
# At most one way of sharing per host, mostly: combining them is one error among many.
SHARING = {"gpuops_time_slicing": time_slicing, "gpuops_mps": mps, "gpuops_memory_sharing": memory_sharing}
HOST_OWN = {
    "gpuops_mig_config": mostly(st.sampled_from(CONFIG_NAMES)),
    "gpuops_gpu_catalog_extra": mostly(catalog_extra),
}
DRIVERS = st.sampled_from([(535, "535.247.01"), ("580", "580.105.08"), (470, ""), ("580", None), (535, "580.105.08")])
drivers = mostly(DRIVERS, st.tuples(junk, junk))


def _some(draw, strategies, tenths):
    """Each variable of STRATEGIES set about TENTHS times in ten."""
    return {name: draw(strategy) for name, strategy in strategies.items() if draw(chance(tenths))}


@st.composite
def host_intent(draw):
    intent = {"gpuops_gpu_product": draw(products), "gpuops_gpu_count": draw(mostly(st.integers(1, 8), numbers))}
    intent.update(_some(draw, HOST_OWN, 3))
    if draw(chance(2)):
        intent["nvidia_driver_branch"], intent["nvidia_driver_version"] = draw(drivers)
    # One way of sharing, or none; now and then two.
    names = draw(st.lists(st.sampled_from(sorted(SHARING)), max_size=2, unique=True))
    for name in names if draw(chance(1)) else names[:1]:
        intent[name] = draw(mostly(SHARING[name]))
    # Now and then a host sets a cluster-wide variable of its own.
    if draw(chance(1)):
        name = draw(st.sampled_from(sorted(CLUSTER_WIDE)))
        intent[name] = draw(CLUSTER_WIDE[name])
    return intent


@st.composite
def clusters(draw):
    """{host: intent} of one to three hosts: the cluster-wide variables shared, each host's own drawn."""
    shared = _some(draw, CLUSTER_WIDE, 4)
    hosts = draw(st.lists(st.sampled_from(HOSTS), min_size=1, max_size=3, unique=True))
    return {host: {**shared, **draw(host_intent())} for host in hosts}


# 300 examples of up to three hosts (about a fifth of them planned): 4 to 5 s on the project's 2-core machine.
# derandomize: the same examples on every run, so CI is reproducible; database=None: nothing written beside the
# tests. The deadline is each example's time bound: the slowest example takes about 0.4 s on an idle machine, and
# make test runs the units beside two molecule scenarios on two cores; a plan that loops per GPU took 22 s.
PROPERTY_SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=8),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _check_plan(plan):
    """What the cluster must be able to hold: int64 quantities (the kubelet's and the API server's) and
    label values the API server accepts."""
    for host, node in plan.capacity["nodes"].items():
        for resource, count in node["resources"].items():
            assert isinstance(count, int) and 0 <= count <= INT64_MAX, (host, resource, count)
        for label, value in node["labels"].items():
            assert label_value_problem(value) is None, (host, label, value)
        accounts = (node["memory_sharing"] or {}).get("scheduler_accounts", {})
        assert all(0 <= count <= INT64_MAX for count in accounts.values()), (host, accounts)


def _check_error(error, nodes):
    assert isinstance(error, IntentErrors), repr(error)
    variables = (*INTENT_VARIABLES, *DRIVER_VARIABLES)
    for item in error.errors:
        assert item.host in nodes, item
        assert item.variable.startswith(variables), item
    text_of_error = str(error)
    assert any(host in text_of_error for host in nodes)
    assert any(variable in text_of_error for variable in variables)


@PROPERTY_SETTINGS
@given(clusters())
def test_plan_returns_a_holdable_plan_or_names_host_and_variable(nodes):
    try:
        plan = plan_cluster(nodes)
    except PlanError as error:
        _check_error(error, nodes)
    else:
        _check_plan(plan)
