# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""driver_problems: which branches drive which catalog product, and the messages that say what would."""

import pathlib
import re

import pytest
import yaml
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu import driver_support
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    all_products,
    extra_products,
    find_product,
    unknown_product,
)
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.driver_support import (
    KNOWN_BRANCHES,
    LONG_TERM_BRANCHES,
    DriverRange,
    default_branch,
    driver_problems,
    driver_range,
)

B200 = find_product("NVIDIA B200")
RTX_PRO = find_product("NVIDIA RTX PRO 6000 Blackwell Server Edition")
V100 = find_product("Tesla V100-SXM2-16GB")
L4 = find_product("NVIDIA L4")
H200 = find_product("NVIDIA H200")


def test_every_catalog_product_has_a_driver_range_and_the_newest_long_term_branch_drives_it():
    # The default branch the docs recommend must drive the whole catalog.
    newest_lts = max(LONG_TERM_BRANCHES)
    for product in all_products():
        supported = driver_range(product)
        assert supported is not None, product.name
        assert newest_lts in supported.branches(), product.name
        assert supported.source


def test_the_role_default_is_the_newest_long_term_branch_that_drives_the_whole_catalog():
    defaults = pathlib.Path(__file__).resolve().parents[5] / "roles" / "nvidia_driver" / "defaults" / "main.yml"
    role_default = yaml.safe_load(defaults.read_text(encoding="utf-8"))["nvidia_driver_branch"]
    assert role_default == str(default_branch(all_products())) == "580"


def test_default_branch_steps_back_to_an_older_long_term_branch_for_a_retired_architecture(monkeypatch):
    # A product whose architecture NVIDIA retired after R470 (as it did Kepler) pulls the default down to 470.
    monkeypatch.setitem(driver_support._BY_ARCHITECTURE, "ampere", DriverRange(450, 470, "test"))
    a100 = find_product("NVIDIA A100-SXM4-40GB")
    assert default_branch([L4, H200]) == 580
    assert default_branch([a100, find_product("Tesla T4")]) == 470
    # No long-term branch drives both an L4 (R525 on) and a GPU retired after R470.
    assert default_branch([L4, a100]) is None


@pytest.mark.parametrize(
    ("product", "branch"),
    [(B200, "535"), (B200, "565"), (RTX_PRO, "570"), (H200, "535"), (L4, "515")],
)
def test_a_branch_older_than_the_product_is_refused_naming_the_branches_that_work(product, branch):
    [(variable, message)] = driver_problems(product, branch, "")
    assert variable == "nvidia_driver_branch"
    assert f"branch {branch} cannot drive {product.name}" in message
    assert "its first branch is" in message
    working = [b for b in KNOWN_BRANCHES if b >= driver_range(product).first]
    assert message.endswith("branches that would: " + ", ".join(map(str, working)))


def test_volta_is_refused_after_its_last_branch():
    [(variable, message)] = driver_problems(V100, "590", "")
    assert variable == "nvidia_driver_branch"
    assert "NVIDIA retired it after branch 580" in message
    assert message.endswith(", 570, 575, 580")
    assert driver_problems(V100, "580", "580.105.08") == []


@pytest.mark.parametrize(("product", "branch"), [(B200, "580"), (RTX_PRO, 595), (L4, "535"), (H200, "550")])
def test_a_branch_that_drives_the_product_passes(product, branch):
    assert driver_problems(product, branch, "") == []


@pytest.mark.parametrize("branch", ["999", "540", "600"])
def test_a_branch_nvidia_does_not_publish_is_refused(branch):
    [(variable, message)] = driver_problems(L4, branch, "")
    assert variable == "nvidia_driver_branch"
    assert message.startswith(f"{branch} is not a driver branch NVIDIA publishes; known branches: 450,")


@pytest.mark.parametrize("branch", ["58O", "R580", "580.95", "", None, True, ["580"], "0580", 58])
def test_a_malformed_branch_is_refused(branch):
    [(variable, message)] = driver_problems(L4, branch, "")
    assert variable == "nvidia_driver_branch"
    assert message.startswith("must be a driver branch, its three-digit major version such as 580, got ")


def test_the_first_version_within_the_first_branch_is_enforced():
    [(variable, message)] = driver_problems(B200, "570", "570.124.06")
    assert variable == "nvidia_driver_version"
    assert "570.124.06 cannot drive NVIDIA B200: it needs 570.133.20 or later in branch 570" in message
    assert driver_problems(B200, "570", "570.133.20") == []
    assert driver_problems(B200, "570", "570.195.03") == []
    assert driver_problems(B200, "580", "580.65.06") == []


@pytest.mark.parametrize("version", ["580.65.06", "590", "590.48.01.1", "590.x"])
def test_a_version_outside_the_branch_or_malformed_is_refused(version):
    [(variable, message)] = driver_problems(L4, "590", version)
    assert variable == "nvidia_driver_version"
    assert message.startswith("must be a version of branch 590 such as 590.105.08")


def test_an_unquoted_version_is_refused_as_yaml_reads_it_as_a_number():
    # YAML reads 570.170 as the float 570.17: the version would silently be another one.
    [(variable, message)] = driver_problems(L4, "570", 570.170)
    assert variable == "nvidia_driver_version"
    assert "quote it" in message


def test_products_the_catalog_does_not_describe_get_only_the_format_checks():
    [extra], problems = extra_products([{"name": "NVIDIA Future GPU", "memory_mib": 1024, "compute_capability": "9.0"}])
    assert problems == []
    for product in (extra, unknown_product("NVIDIA GeForce RTX 3080 Ti Laptop GPU")):
        assert driver_range(product) is None
        assert driver_problems(product, "450", "") == []
        assert driver_problems(product, "999", "") != []


def test_every_recorded_nvidia_smi_output_shows_a_driver_inside_its_products_range(published_nvsmi_dir):
    # Real machines ran these drivers on these GPUs: a range that refused one of them would be wrong.
    checked = {}
    for path in sorted(published_nvsmi_dir.rglob("*.txt")):
        text = path.read_text(errors="replace")
        version = re.search(r"Driver Version\s*:\s*([0-9]{3}\.[0-9.]+)", text)
        name = re.search(r"Product Name\s*:\s*(.+)", text)
        if not version or not name or find_product(name.group(1).strip()) is None:
            continue
        product = find_product(name.group(1).strip())
        driver = version.group(1)
        assert driver_problems(product, driver.split(".")[0], driver) == [], (path, driver)
        checked[product.name] = driver
    assert len(checked) >= 8, checked
