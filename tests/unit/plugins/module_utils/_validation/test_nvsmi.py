# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`nvidia-smi -L` as recorded on real machines (tests/fixtures/nvidia-smi/*-L*.txt, sources beside them)."""

import pytest
from ansible_collections.gpuops.cluster.plugins.module_utils._validation.nvsmi import parse_listing


@pytest.mark.parametrize(
    ("fixture", "gpus", "migs"),
    [
        ("tesla-t4-seed001-L.txt", [("Tesla T4", "GPU-491287c9-bc95-b926-a488-9503064e72a1")], []),
        (
            "gtx-1080ti-1060-seed002-L-2gpus.txt",
            [
                ("NVIDIA GeForce GTX 1080 Ti", "GPU-5ba4538b-234f-2c18-6a7a-458d0a7fb348"),
                ("NVIDIA GeForce GTX 1060", "GPU-c6dc4e3b-7f0d-4e22-ac41-479ae1c6fbdc"),
            ],
            [],
        ),
        (
            "rtx-3080ti-laptop-seed002-L.txt",
            [("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "GPU-1b17e588-c712-9244-37de-93a8a77ebe6d")],
            [],
        ),
        (
            "a100-80gb-pcie-seed004-L-mig-mixed.txt",
            [("NVIDIA A100 80GB PCIe", "GPU-9f0cc172-1db7-8b47-7302-fa9b2ade0c7b")],
            [
                ("3g.40gb", "MIG-40ed9496-24f9-5b8b-95ca-648bfea46a9c"),
                ("2g.20gb", "MIG-46602d72-bafb-513e-a79c-03cd078519b4"),
                ("1g.10gb", "MIG-ab3c9061-ac9b-5f7c-801a-8d35188a6422"),
            ],
        ),
    ],
)
def test_recorded_listings(seed_fixture, fixture, gpus, migs):
    listing = parse_listing(seed_fixture(f"nvidia-smi/{fixture}"))

    assert [(gpu.name, gpu.uuid) for gpu in listing.gpus] == gpus
    assert [(mig.profile, mig.uuid) for mig in listing.mig_devices] == migs
    assert all(mig.gpu_uuid == gpus[0][1] for mig in listing.mig_devices)
    assert listing.other_lines == ()


def test_seven_mig_devices_under_one_gpu(seed_fixture):
    listing = parse_listing(seed_fixture("nvidia-smi/a100-80gb-pcie-seed004-L-mig-7x1g10gb.txt"))

    assert len(listing.gpus) == 1
    assert [mig.index for mig in listing.mig_devices] == list(range(7))
    assert {mig.profile for mig in listing.mig_devices} == {"1g.10gb"}


def test_published_listings_parse_without_leftover_lines(published_nvsmi_dir):
    files = sorted(published_nvsmi_dir.rglob("*-L*.txt"))
    files = [path for path in files if not path.name.endswith(".source.txt")]
    if not files:
        pytest.skip(f"no `nvidia-smi -L` outputs under {published_nvsmi_dir}")
    for path in files:
        listing = parse_listing(path.read_text(encoding="utf-8"))
        assert listing.gpus, path
        assert all(line.startswith("MIG ") is False for line in listing.other_lines), path


def test_error_output_is_kept_as_other_lines():
    text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"

    listing = parse_listing(text)

    assert listing.gpus == () and listing.mig_devices == ()
    assert listing.other_lines == (text.strip(),)
