# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the collection knows about NVIDIA GPUs: products, MIG geometry, placements, mig-parted configs.

Pure Python with no Ansible and no planning code: it runs on the controller and, copied whole, on
managed hosts (Python 3.9) for the boot-time MIG restore.
"""
