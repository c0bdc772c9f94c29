# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The "did you mean" of a misspelt product: the catalog names nearest it, the model first."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import (
    find_product,
    product_hint,
    suggest_names,
    suggest_products,
)


@pytest.mark.parametrize(
    ("typo", "first"),
    [
        # A model split by punctuation is still that model, not the shorter one it starts with.
        ("NVIDIA L40-S 48GB", "NVIDIA L40S"),
        ("NVIDIA L40S-48GB", "NVIDIA L40S"),
        ("NVIDIA A10-G", "NVIDIA A10G"),
        # The form factor a vendor sheet prints (SXM5) is not in the name nvidia-smi prints.
        ("NVIDIA H100 SXM5 80GB", "NVIDIA H100 80GB HBM3"),
        ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA H200 SXM 141GB", "NVIDIA H200"),
        ("NVIDIA A100 40GB PCIe", "NVIDIA A100-PCIE-40GB"),
        ("NVIDIA A100-SXM-80GB", "NVIDIA A100-SXM4-80GB"),
        ("NVIDIA H100 NVL 94GB", "NVIDIA H100 NVL"),
        ("Tesla T4 16GB", "Tesla T4"),
        ("NVIDIA RTX 6000 Ada", "NVIDIA RTX 6000 Ada Generation"),
        ("NVIDIA RTX PRO 6000 Blackwell", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
        ("NVIDIA B200 SXM 180GB", "NVIDIA B200"),
        # A misspelt model number: the other words decide.
        ("NVIDIA H1OO 80GB HBM3", "NVIDIA H100 80GB HBM3"),
    ],
)
def test_the_model_the_typo_names_comes_first(typo, first):
    assert find_product(typo) is None
    assert suggest_products(typo)[0] == first


def test_a_model_of_the_same_family_ranks_above_another_model_of_the_same_memory():
    # H100 SXM5 80GB: every H100 before the A100 80GB, which only shares the memory size.
    near = suggest_products("NVIDIA H100 SXM5 80GB", limit=3)
    assert all("H100" in name for name in near), near


def test_l40_s_ranks_l40s_before_l40():
    near = suggest_products("NVIDIA L40-S 48GB")
    assert near.index("NVIDIA L40S") < near.index("NVIDIA L40")


def test_a_name_near_nothing_gets_no_suggestion():
    assert suggest_products("Radeon Instinct MI300X") == []
    assert product_hint("Radeon Instinct MI300X") == ""


def test_the_hint_names_at_most_three_products():
    assert product_hint("NVIDIA L40-S 48GB").startswith("did you mean NVIDIA L40S or ")
    assert product_hint("NVIDIA L40-S 48GB").count(" or ") <= 2


def test_mig_config_names_keep_their_suggestions():
    names = ["all-1g.10gb", "all-1g.20gb", "all-2g.20gb", "all-balanced", "all-disabled"]
    assert suggest_names("all-balance", names, 1) == ["all-balanced"]
    assert suggest_names("all-1g.10g", names, 1) == ["all-1g.10gb"]
    assert suggest_names("all-2g20gb", names, 1) == ["all-2g.20gb"]
