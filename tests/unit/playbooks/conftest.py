# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run the collection's playbooks with the real ansible-playbook, as a user would."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"


def _collections_path():
    """An installed or ansible-test copy sits in ansible_collections/gpuops/cluster; a checkout has
    `make collection`'s link under .build/collections."""
    if REPO.parent.parent.name == "ansible_collections":
        return REPO.parents[2]
    return REPO / ".build" / "collections"


def _ansible_playbook_binary():
    """The ansible-playbook beside this Python (a venv), else on PATH (ansible-test puts its own there)."""
    beside = pathlib.Path(sys.executable).parent / "ansible-playbook"
    return str(beside) if beside.exists() else shutil.which("ansible-playbook")


def ansible_playbook(playbook, inventory, *extra, cwd=REPO, env=None, wrap=None):
    """The CompletedProcess of `ansible-playbook playbooks/PLAYBOOK -i INVENTORY EXTRA...`.

    PLAYBOOK may also be a name such as gpuops.cluster.plan, as users of the installed collection run it.
    ENV adds to the environment (ANSIBLE_CONFIG, ...); WRAP prefixes the command (unshare ...).
    """
    command = [
        _ansible_playbook_binary(),
        playbook if playbook.startswith("gpuops.cluster.") else str(REPO / "playbooks" / playbook),
        "-i",
        str(inventory),
        *extra,
    ]
    environment = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(_collections_path()),
        "ANSIBLE_NOCOLOR": "1",
        **(env or {}),
    }
    return subprocess.run(
        [*(wrap or []), *command], cwd=cwd, env=environment, capture_output=True, text=True, check=False
    )


# Session-wide, so that a module's fixture may run a playbook once for all its tests.
@pytest.fixture(scope="session")
def run_playbook():
    return ansible_playbook


@pytest.fixture
def example_inventory(tmp_path):
    """A copy of the example inventory that a test may change, without the plan `make plan` left in it."""
    copy = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".gpuops-plan"))
    return copy
