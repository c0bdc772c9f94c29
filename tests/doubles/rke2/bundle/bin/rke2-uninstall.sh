#!/bin/sh
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Removes RKE2 (the stand-in) as RKE2's rke2-uninstall.sh does for a tarball installation
# (rancher/rke2 bundle/bin/rke2-uninstall.sh, uninstall_remove_files): stops everything, removes the units,
# the binaries, /etc/rancher/rke2, the node's password in /etc/rancher/node, /var/lib/rancher/rke2, and what
# /var/lib/kubelet holds without leaving its file system (a folder mounted there stays, empty).
set -ex
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"
prefix=$(cd "$(dirname "$0")/.." && pwd)

"$prefix/bin/rke2-killall.sh"
systemctl disable rke2-server rke2-agent 2>/dev/null || true
systemctl reset-failed rke2-server rke2-agent 2>/dev/null || true
rm -f "$prefix"/lib/systemd/system/rke2-server.* "$prefix"/lib/systemd/system/rke2-agent.*
systemctl daemon-reload

rm -rf /etc/rancher/rke2 /etc/rancher/node /var/lib/rancher/rke2 /etc/cni/net.d/10-rke2-stand-in.conflist \
  /var/lib/cni /var/log/pods /var/log/containers "$prefix/share/rke2"
rm -d /etc/rancher || true
rm --one-file-system -rf /var/lib/kubelet || true
rm -f "$prefix/bin/rke2" "$prefix/bin/rke2-killall.sh" "$prefix/bin/rke2-uninstall.sh"
