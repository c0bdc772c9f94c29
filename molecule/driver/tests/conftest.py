"""Run testinfra's commands through `podman exec` (fast) rather than one Ansible task per command."""

import pytest
import testinfra


@pytest.fixture
def host(host):
    return testinfra.get_host(f"podman://{host.backend.get_hostname()}")
