# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Offline bootstrap of pip for ansible-test's sanity virtual environments.

ansible-test fetches a get-pip script from a host that CI cannot reach. This script stands in
for it (it is placed in ansible-test's cache as get_pip_<version>.py): it installs pip from
the wheel bundled with Python (ensurepip), then the packages ansible-test asks for from PyPI.
"""

import subprocess
import sys

# get-pip's own switches; pip install does not know them.
GET_PIP_ONLY_OPTIONS = {"--no-setuptools", "--no-wheel"}

subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
pip_args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
subprocess.check_call([sys.executable, "-m", "pip", "install", *pip_args])
