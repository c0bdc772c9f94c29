#!/bin/sh
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Prints, as JSON, what the nvidia_driver role needs to know about the host and changes nothing:
# NVIDIA PCI functions (GPUs and NVSwitches), Secure Boot state, loaded kernel modules, the driver version each GPU
# reports to nvidia-smi, and the machine id (which tells whether the host is the controller, that the role never
# reboots).
set -u

gpus=""
nvswitches=0
for dev in /sys/bus/pci/devices/*; do
  [ -r "$dev/vendor" ] || continue
  [ "$(cat "$dev/vendor")" = "0x10de" ] || continue
  class="$(cat "$dev/class")"
  case "$class" in
    0x0300*|0x0302*)
      gpus="${gpus}${gpus:+,}{\"address\": \"${dev##*/}\", \"device_id\": \"$(cat "$dev/device")\"}" ;;
    0x0680*)
      nvswitches=$((nvswitches + 1)) ;;
  esac
done

# The SecureBoot EFI variable: 4 bytes of attributes, then 1 when Secure Boot is on.
secure_boot=false
for var in /sys/firmware/efi/efivars/SecureBoot-*; do
  [ -r "$var" ] || continue
  [ "$(od -An -t u1 -j 4 -N 1 "$var" | tr -d ' ')" = "1" ] && secure_boot=true
done

loaded_version=""
[ -r /sys/module/nvidia/version ] && loaded_version="$(cat /sys/module/nvidia/version)"
nouveau_loaded=false
[ -d /sys/module/nouveau ] && nouveau_loaded=true

# The version nvidia-smi reports for each GPU (digits and dots only; none where it fails): a driver that answers at
# the installed version needs no load and no check in activate.yml.
smi_versions=""
if command -v nvidia-smi >/dev/null 2>&1 && answer="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null)"; then
  for version in $(printf '%s\n' "$answer" | grep -E '^[0-9][0-9.]*$'); do
    smi_versions="${smi_versions}${smi_versions:+,}\"${version}\""
  done
fi

# Hexadecimal only (machine-id(5)), so that the JSON below stays valid whatever the file holds.
machine_id="$(tr -cd '0-9a-f' < /etc/machine-id 2>/dev/null)"

printf '{"gpus": [%s], "nvswitch_count": %s, "secure_boot": %s, "loaded_module_version": "%s", "nouveau_loaded": %s, "smi_driver_versions": [%s], "machine_id": "%s"}\n' \
  "$gpus" "$nvswitches" "$secure_boot" "$loaded_version" "$nouveau_loaded" "$smi_versions" "$machine_id"
