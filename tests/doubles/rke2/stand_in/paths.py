# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where RKE2 keeps its files; the stand-in uses the same places."""

import sys
from pathlib import Path

CONFIG_DIR = Path("/etc/rancher/rke2")
CONFIG_FILE = CONFIG_DIR / "config.yaml"
ADMIN_KUBECONFIG = CONFIG_DIR / "rke2.yaml"
DATA_DIR = Path("/var/lib/rancher/rke2")
SERVER_DIR = DATA_DIR / "server"
TLS_DIR = SERVER_DIR / "tls"
NODE_TOKEN = SERVER_DIR / "node-token"
# The node's own password, sent when it asks for its kubelet certificates (k3s pkg/agent/config/config.go).
NODE_PASSWORD = Path("/etc/rancher/node/password")
SERVER_LOGS = SERVER_DIR / "logs"
AGENT_DIR = DATA_DIR / "agent"
# RKE2 unpacks its runtime image into data/<release>/bin and points bin/ at it: containerd, its shims and
# ctr (with the kubelet and runc, which the stand-in takes from kube-multi and Debian).
RKE2_BIN = DATA_DIR / "bin"
AGENT_IMAGES = AGENT_DIR / "images"
CONTAINERD_CONFIG = AGENT_DIR / "etc" / "containerd" / "config.toml"
CONTAINERD_ROOT = AGENT_DIR / "containerd"
CONTAINERD_STATE = Path("/run/k3s/containerd")
CONTAINERD_SOCKET = CONTAINERD_STATE / "containerd.sock"
KUBELET_CONFIG = AGENT_DIR / "etc" / "kubelet.conf.d" / "00-rke2-defaults.conf"
KUBELET_KUBECONFIG = AGENT_DIR / "kubelet.kubeconfig"
AGENT_LOGS = AGENT_DIR / "logs"
CNI_CONFIG = Path("/etc/cni/net.d/10-rke2-stand-in.conflist")
# Debian's containernetworking-plugins; RKE2 ships its own in /opt/cni/bin.
CNI_BIN_DIR = Path("/usr/lib/cni")

# bin/rke2 is a zip application installed as PREFIX/bin/rke2; kube-multi (etcd and the Kubernetes
# components) and containerd's binaries lie in share/rke2/stand-in/bin.
INSTALL_PREFIX = Path(sys.argv[0]).resolve().parent.parent
STAND_IN_SHARE = INSTALL_PREFIX / "share" / "rke2" / "stand-in"
STAND_IN_BIN = STAND_IN_SHARE / "bin"
KUBE_MULTI = STAND_IN_BIN / "kube-multi"
RELEASE = STAND_IN_SHARE / "release"

SUPERVISOR_PORT = 9345
API_PORT = 6443
SERVICE_CIDR = "10.43.0.0/16"
CLUSTER_DNS = "10.43.0.10"
# Pod addresses of a node: 10.42.N.0/24 (RKE2's default cluster CIDR is 10.42.0.0/16).
CLUSTER_CIDR_PREFIX = "10.42"
PAUSE_IMAGE = "localhost/pause:3.10"
