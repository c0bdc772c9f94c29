# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Physical limits of NVIDIA GPUs, as their driver and NVML state them: the bounds of the numbers and names
an inventory gives about its GPUs (docs/plan.md, Bounds of the intent)."""

from __future__ import annotations

# NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/nvlimits.h NV_MAX_DEVICES: "the maximum number
# of GPUs supported in a single system" (the driver's GPU table; UVM_MAX_GPUS is the same). GPU indexes
# are below it.
MAX_GPUS_PER_NODE = 32
# NVIDIA/go-nvml pkg/nvml/nvml.h: the largest GPU-instance and compute-instance profiles take 8 slices
# (NVML_GPU_INSTANCE_PROFILE_8_SLICE, NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE), and every MIG device (a
# compute instance) takes at least one: no GPU holds more than 8 MIG devices.
MAX_MIG_DEVICES_PER_GPU = 8
# nvml.h NVML_DEVICE_NAME_V2_BUFFER_SIZE (96): "large enough for nvmlDeviceGetName", the name nvidia-smi
# prints, its terminating NUL included.
MAX_PRODUCT_NAME_LENGTH = 95
# nvml.h nvmlMemory_t.total: the GPU's memory in bytes, an unsigned long long; in MiB below 2**44.
MAX_MEMORY_MIB = 2**64 // 2**20 - 1
