# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPUs of one host as nvidia-smi shows them: commands, parsers, the runner, the state read, MIG reconcile.

Pure Python with no Ansible and no planning code: the facts and MIG modules and the boot-time MIG
restore (which copies this package and ``_gpu`` whole) run it on managed hosts (Python 3.9).
"""
