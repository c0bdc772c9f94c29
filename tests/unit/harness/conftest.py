# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The control plane of the harness tests that need one of their own (tests/harness/control_plane.py)."""

import pytest


@pytest.fixture(scope="module")
def own_control_plane(tmp_path_factory, test_kubernetes):
    """etcd, kube-apiserver, kube-controller-manager and kube-scheduler on free ports, for one test module:
    its folder, its certificates (control_plane.ensure_pki) and the API server's URL."""
    # Here, not at collection: importing it puts tests/testbed, which holds a folder named kubernetes, on sys.path.
    from ansible_collections.gpuops.cluster.tests.harness import control_plane

    directory = tmp_path_factory.mktemp("control-plane")
    control_plane.API_PORT, control_plane.ETCD_PORT = control_plane.free_port(), control_plane.free_port()
    try:
        control_plane.start(directory)
    except SystemExit as error:
        pytest.fail(str(error))
    try:
        files = control_plane.ensure_pki(directory)
        yield {"dir": directory, "files": files, "url": f"https://127.0.0.1:{control_plane.API_PORT}"}
    finally:
        control_plane.stop(directory)
