# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU sharing by memory (gpuops_memory_sharing): one object per backend, behind one interface and one registry.

The plan (_plan), the validation (_validation) and the gpu_memory_sharing role's plugins reach a backend only
through registry.py; a backend's whole knowledge is its own file (hami.py, gpushare.py).

A new backend is: a file here with its MemorySharingBackend subclass (base.py), one register() line in
registry.py, and in roles/gpu_memory_sharing the tasks <name>_present.yml and <name>_absent.yml and the variable
gpu_memory_sharing_<name>_state (defaults/main.yml, meta/argument_specs.yml). Pod options it declares are
options <name>_<option> of plugins/modules/gpu_validation.py.
"""
