# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host preflight: the GPUs a host carries (nvidia-smi, or the PCI bus) against the inventory."""

import re

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._gpu.catalog import all_products, find_product
from ansible_collections.gpuops.cluster.plugins.plugin_utils._preflight.gpus import check_gpus, model_group, os_problem

# Every recorded `nvidia-smi -q` / `-a` text output: (Product Name, Device Id) per GPU.
RECORDED_Q = (
    "a10/nvidia-smi-a-gls.txt",
    "a100-sxm4-80gb/nvidia-smi-a-gls.txt",
    "gh200-480gb/nvidia-smi-a-gls.txt",
    "h100-80gb-hbm3/nvidia-smi-q-mig.txt",
    "h100-80gb-hbm3/nvidia-smi-q-nomig.txt",
    "h100-nvl/nvidia-smi-a-gls.txt",
    "h200/nvidia-smi-q-nomig.txt",
    "l4/nvidia-smi-a-gls.txt",
    "l40s/nvidia-smi-q.txt",
    "tesla-t4/nvidia-smi-q.txt",
    "v100-sxm2-16gb/nvidia-smi-a-gls.txt",
)


def recorded_gpus(text):
    """[(name, device id)] of a `nvidia-smi -q` text output, one per GPU."""
    names = re.findall(r"^\s*Product Name\s*:\s*(.+?)\s*$", text, re.MULTILINE)
    ids = re.findall(r"^\s*Device Id\s*:\s*(0x[0-9A-Fa-f]{8})\s*$", text, re.MULTILINE)
    assert len(names) == len(ids) and names, "the output lists a Product Name and a Device Id per GPU"
    return list(zip(names, ids, strict=True))


def smi_facts(gpus):
    """nvidia_gpu_info facts of GPUS [(name, device id)] as the module returns them."""
    return {
        "nvidia_gpu_detected": True,
        "nvidia_gpu_reason": "",
        "nvidia_gpus": [{"index": i, "name": name, "pci_device_id": device} for i, (name, device) in enumerate(gpus)],
    }


def pci(gpus):
    """The PCI bus of a host carrying GPUS, as /sys/bus/pci/devices/*/device prints their ids ("0x20b2")."""
    return [
        {"address": f"0000:{i + 1:02x}:00.0", "device_id": "0x" + device[2:6].lower()}
        for i, (_n, device) in enumerate(gpus)
    ]


NO_DRIVER = {
    "gpu_detected": False,
    "reason": "nvidia-smi was not found in PATH (is the NVIDIA driver installed?)",
    "gpus": [],
}


@pytest.mark.parametrize("recording", RECORDED_Q)
def test_a_recorded_host_passes_against_its_own_inventory_before_and_after_the_driver(published_nvsmi_dir, recording):
    gpus = recorded_gpus((published_nvsmi_dir / recording).read_text(encoding="utf-8"))
    name = gpus[0][0]
    with_driver = check_gpus("gpu-1", name, len(gpus), smi_facts(gpus))
    assert with_driver["problems"] == [] and with_driver["source"] == "nvidia-smi"
    assert with_driver["found_count"] == len(gpus)
    bare = check_gpus("gpu-1", name, str(len(gpus)), NO_DRIVER, pci(gpus))
    assert bare["problems"] == [] and bare["source"] == "PCI bus", bare
    # The same host lands in the same model group whether the driver answers or not.
    assert with_driver["model_group"] == bare["model_group"] == model_group(find_product(name).name)


@pytest.mark.parametrize("recording", RECORDED_Q)
def test_a_recorded_host_fails_against_another_model_naming_host_expected_and_found(published_nvsmi_dir, recording):
    gpus = recorded_gpus((published_nvsmi_dir / recording).read_text(encoding="utf-8"))
    found = find_product(gpus[0][0]).name
    other = "NVIDIA L4" if found != "NVIDIA L4" else "Tesla T4"
    for result, source in (
        (check_gpus("gpu-1", other, len(gpus), smi_facts(gpus)), "nvidia-smi"),
        (check_gpus("gpu-1", other, len(gpus), NO_DRIVER, pci(gpus)), "PCI bus"),
    ):
        assert result["problems"] == [f"gpu-1: gpuops_gpu_product: expected {other}, found {found} ({source})"]


def test_count_differs_names_expected_and_found(seed_fixture):
    # seed 001: `nvidia-smi -L` on a host with one Tesla T4.
    names = re.findall(r"^GPU \d+: (.+?) \(UUID", seed_fixture("nvidia-smi/tesla-t4-seed001-L.txt"), re.MULTILINE)
    facts = smi_facts([(name, "0x1EB810DE") for name in names])
    result = check_gpus("gpu-t4-1", "Tesla T4", 4, facts)
    assert result["problems"] == ["gpu-t4-1: gpuops_gpu_count: expected 4, found 1 (nvidia-smi: 1x Tesla T4)"]
    assert result["model_group"] == "gpu_model_tesla_t4"


def test_printed_forms_of_a_name_are_the_same_product():
    # r450 drivers print "A100-SXM4-40GB", GFD writes dashes; the inventory may use either.
    facts = smi_facts([("A100-SXM4-40GB", "0x20B010DE")] * 8)
    assert check_gpus("dgx-1", "NVIDIA-A100-SXM4-40GB", 8, facts)["problems"] == []
    assert check_gpus("dgx-1", "NVIDIA-A100-SXM4-40GB", 8, facts)["model_group"] == "gpu_model_nvidia_a100_sxm4_40gb"


def test_an_alias_sharing_the_device_id_is_the_same_product_on_the_pci_bus():
    # "NVIDIA GH200 96GB HBM3" and "NVIDIA GH200 480GB" are one catalog product with one PCI id (0x2342).
    bare = check_gpus(
        "gh-1", "NVIDIA GH200 96GB HBM3", 1, NO_DRIVER, [{"address": "0009:01:00.0", "device_id": "0x2342"}]
    )
    assert bare["problems"] == [] and bare["model_group"] == "gpu_model_nvidia_gh200_480gb"


def test_a_device_id_the_catalog_lacks_checks_the_count_only_and_says_so():
    # A16 and A2 share 0x25B6 and differ by subsystem id only: the catalog gives them no PCI id.
    bus = [{"address": "0000:01:00.0", "device_id": "0x25b6"}]
    result = check_gpus("gpu-a2-1", "NVIDIA A2", 1, NO_DRIVER, bus)
    assert result["problems"] == []
    assert result["model_group"] == "gpu_model_nvidia_a2"
    assert any("PCI device 0x25B610DE is not in the GPU catalog" in note for note in result["notes"])
    assert check_gpus("gpu-a2-1", "NVIDIA A2", 2, NO_DRIVER, bus)["problems"] == [
        "gpu-a2-1: gpuops_gpu_count: expected 2, found 1 (PCI bus: 1x PCI device 0x25B610DE)"
    ]


def test_catalog_pci_ids_are_unique_so_an_id_names_one_product():
    ids = [device for product in all_products() for device in product.pci_device_ids]
    assert len(ids) == len(set(ids))


def test_no_gpu_anywhere_fails_saying_what_was_read():
    result = check_gpus("gpu-a100-1", "NVIDIA A100-SXM4-80GB", 8, NO_DRIVER, [])
    assert result["problems"] == [
        "gpu-a100-1: no NVIDIA GPU found (nvidia-smi: nvidia-smi was not found in PATH (is the NVIDIA driver "
        "installed?); the PCI bus has no NVIDIA display or 3D controller (vendor 0x10de, class 0x0300/0x0302)); "
        "the inventory expects 8x NVIDIA A100-SXM4-80GB (gpuops_gpu_count, gpuops_gpu_product)"
    ]
    assert result["model_group"] == ""


def test_mixed_models_on_one_host_are_refused():
    facts = smi_facts([("NVIDIA L4", "0x27B810DE"), ("Tesla T4", "0x1EB810DE")])
    result = check_gpus("gpu-mixed", "NVIDIA L4", 2, facts)
    assert result["problems"] == [
        "gpu-mixed: found different GPU models (nvidia-smi: 1x NVIDIA L4, 1x Tesla T4); a node carries one model "
        "(gpuops_gpu_product)"
    ]
    assert result["model_group"] == ""


def test_products_of_the_inventorys_catalog_extra_are_matched():
    extra = [{"name": "NVIDIA L20 48GB", "memory_mib": 49140, "compute_capability": "8.9", "pci_device_id": "0x26BB"}]
    bus = [{"address": "0000:01:00.0", "device_id": "0x26bb"}]
    result = check_gpus("gpu-1", "NVIDIA L20 48GB", 1, NO_DRIVER, bus, extra)
    assert result["problems"] == [] and result["model_group"] == "gpu_model_nvidia_l20_48gb"


def test_an_unknown_product_compares_printed_names():
    facts = smi_facts([("NVIDIA Future GPU", "0xFFFF10DE")])
    assert check_gpus("gpu-1", "NVIDIA-Future-GPU", 1, facts)["problems"] == []
    assert check_gpus("gpu-1", "NVIDIA Other GPU", 1, facts)["problems"] == [
        "gpu-1: gpuops_gpu_product: expected NVIDIA Other GPU, found NVIDIA Future GPU (nvidia-smi)"
    ]


@pytest.mark.parametrize("count", [None, 0, "eight", True, 8.0])
def test_a_count_that_is_not_a_whole_number_is_named(count):
    facts = smi_facts([("NVIDIA L4", "0x27B810DE")])
    assert check_gpus("gpu-1", "NVIDIA L4", count, facts)["problems"][0] == (
        f"gpu-1: gpuops_gpu_count: must be the number of GPUs of the host, got {count!r}"
    )


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("NVIDIA A100-SXM4-80GB", "gpu_model_nvidia_a100_sxm4_80gb"),
        ("NVIDIA H100 80GB HBM3", "gpu_model_nvidia_h100_80gb_hbm3"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "gpu_model_nvidia_rtx_pro_6000_blackwell_server_edition"),
        ("Tesla V100-SXM2-16GB", "gpu_model_tesla_v100_sxm2_16gb"),
    ],
)
def test_model_group_names(name, group):
    assert model_group(name) == group


def test_every_catalog_product_has_its_own_group():
    groups = [model_group(product.name) for product in all_products()]
    assert len(groups) == len(set(groups))


SUPPORTED = ["Debian 12", "Ubuntu 22.04", "Ubuntu 24.04", "RedHat 9"]


@pytest.mark.parametrize(
    ("facts", "ok"),
    [
        (("Debian", "12.7", "12", "Debian"), True),
        (("Ubuntu", "22.04", "22", "Debian"), True),
        (("Ubuntu", "22.10", "22", "Debian"), False),
        (("Rocky", "9.4", "9", "RedHat"), True),
        (("CentOS", "8.5", "8", "RedHat"), False),
        (("Debian", "11.9", "11", "Debian"), False),
    ],
)
def test_supported_os(facts, ok):
    problem = os_problem("gpu-1", *facts, SUPPORTED)
    assert (problem == "") is ok
    if not ok:
        assert problem.startswith(f"gpu-1: {facts[0]} {facts[1]} ({facts[3]} family) is not a supported OS; supported:")
