# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the CUDA sample vectorAdd (image nvcr.io/nvidia/k8s/cuda-sample:vectoradd), which
needs a GPU. It asks the nvidia-smi double what the container sees, as the CUDA runtime asks the
driver, and prints what the real sample prints:
- a GPU or MIG device visible: the recorded output of seed 002 (kubectl logs gpu-pod, line ~333)
  and seed 003 (kubectl logs deploy/time-slicing-verification, line ~262), exit 0;
- none: the sample's own error line for a failed cudaMalloc, "Failed to allocate device vector A
  (error code %s)!" (cuda-samples vectorAdd.cu), with cudaGetErrorString(cudaErrorNoDevice),
  "no CUDA-capable device is detected", exit 1. This output is NOT recorded in the seeds or
  fixtures: it is put together from the sample's source and the CUDA runtime's error string.
"""

import subprocess
import sys

PASSED = """[Vector addition of 50000 elements]
Copy input data from the host memory to the CUDA device
CUDA kernel launch with 196 blocks of 256 threads
Copy output data from the CUDA device to the host memory
Test PASSED
Done"""
NO_DEVICE = "Failed to allocate device vector A (error code no CUDA-capable device is detected)!"


def main() -> int:
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    print("[Vector addition of 50000 elements]", flush=True)
    if listing.returncode != 0 or not listing.stdout.strip():
        print(NO_DEVICE, file=sys.stderr)
        return 1
    print(PASSED.split("\n", 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
