#!/bin/sh
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Stops RKE2 (the stand-in) and everything it started, as RKE2's rke2-killall.sh does: the services,
# containerd and its shims with the pods' processes, then unmounts what the pods left mounted.
set -x
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"

for service in rke2-server.service rke2-agent.service; do
  systemctl stop "$service" 2>/dev/null
done

# The pids of PROCESSES' descendants (read from /proc: procps may be absent), then PROCESSES.
tree() {
  for parent in "$@"; do
    for stat in /proc/[0-9]*/stat; do
      child=${stat#/proc/}; child=${child%/stat}
      ppid=$(cut -d' ' -f4 "$stat" 2>/dev/null) || continue
      [ "$ppid" = "$parent" ] && tree "$child"
    done
    echo "$parent"
  done
}

# Shims of RKE2's containerd, the containerd itself, and the stand-in's components.
matching() {
  for cmdline in /proc/[0-9]*/cmdline; do
    pid=${cmdline#/proc/}; pid=${pid%/cmdline}
    tr '\0' ' ' < "$cmdline" 2>/dev/null | grep -qE "$1" && echo "$pid"
  done
}

{ set +x; } 2>/dev/null
roots=$(matching '^/var/lib/rancher/rke2/(bin|data/[^/]*/bin)/containerd-shim.* -address /run/k3s/containerd/containerd.sock'
  matching '^/var/lib/rancher/rke2/bin/containerd -c /var/lib/rancher/rke2/'
  matching '^/usr/local/share/rke2/stand-in/bin/')
for root in $roots; do
  for pid in $(tree "$root"); do kill -9 "$pid" 2>/dev/null; done
done
set -x

unmount() {
  awk -v path="$1" 'index($2, path) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n 1 umount -l
}
unmount_and_remove() {
  unmount "$1"
  rm -rf "$1"
}
unmount_and_remove /run/k3s
unmount_and_remove /var/lib/kubelet/pods
unmount /var/lib/rancher/rke2
# What the kubelet mounted below its folder; a file system mounted at /var/lib/kubelet itself stays mounted, as
# RKE2's rke2-killall.sh leaves it (it unmounts /run/k3s, /var/lib/kubelet/pods and /run/netns/cni- only).
unmount /var/lib/kubelet/
for netns in /run/netns/cni-*; do
  [ -e "$netns" ] && unmount_and_remove "$netns"
done
ip link delete cni0 2>/dev/null
exit 0
