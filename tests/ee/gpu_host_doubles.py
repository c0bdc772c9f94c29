# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a fresh test bed host needs to pass `site.yml --check` as a GPU node, as molecule/site's prepare gives it:
the nvidia-smi double (tests/doubles/nvidia_smi) with its GPUs, and the nvidia-container-runtime stand-in
(tests/doubles/nvidia_container_runtime.py) that RKE2's preflight looks for. Check mode installs no driver package,
so the diversion of Debian's nvidia-smi that molecule/site's converge needs is left out.
"""

import io
import pathlib
import tarfile

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DOUBLE_DIR = "/opt/nvidia-smi-double"
STATE_DIR = "/var/lib/nvidia-smi-double"


def double_archive():
    """The double's files and the GPU package it reads, laid out as the double looks for them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in ("nvidia-smi", "nvsmi_double.py", "nvsmi_double_render.py"):
            archive.add(REPO_ROOT / "tests" / "doubles" / "nvidia_smi" / name, arcname=name)
        archive.add(
            REPO_ROOT / "plugins" / "module_utils" / "_gpu",
            arcname="ansible_collections/gpuops/cluster/plugins/module_utils/_gpu",
            filter=lambda member: None if "__pycache__" in member.name else member,
        )
    return buffer.getvalue()


def give_gpus(hosts, name, folder, product, count):
    """Install the nvidia-smi double on host NAME of HOSTS (an SshHosts) with COUNT GPUs PRODUCT, and the
    nvidia-container-runtime stand-in. FOLDER: a scratch folder on the test's side."""
    archive = pathlib.Path(folder) / "nvidia-smi-double.tar.gz"
    archive.write_bytes(double_archive())
    hosts.copy_to(name, archive, "/tmp/nvidia-smi-double.tar.gz")
    runtime = pathlib.Path(folder) / "nvidia-container-runtime"
    source = (REPO_ROOT / "tests" / "doubles" / "nvidia_container_runtime.py").read_text(encoding="utf-8")
    runtime.write_text("#!/usr/bin/python3\n" + source, encoding="utf-8")
    hosts.copy_to(name, runtime, "/usr/bin/nvidia-container-runtime")
    hosts.exec(
        name,
        f"set -e; mkdir -p {DOUBLE_DIR}; tar -xzf /tmp/nvidia-smi-double.tar.gz -C {DOUBLE_DIR};"
        f" rm /tmp/nvidia-smi-double.tar.gz; ln -sfn {DOUBLE_DIR}/nvidia-smi /usr/bin/nvidia-smi;"
        " chmod 0755 /usr/bin/nvidia-container-runtime;"
        f" nvidia-smi --double-init '{product}' {count};"
        # The SSH user runs nvidia-smi without sudo, as on a real host; the double logs every call beside its state.
        f" chmod 0777 {STATE_DIR}; touch {STATE_DIR}/calls.log; chmod 0666 {STATE_DIR}/calls.log",
    )
