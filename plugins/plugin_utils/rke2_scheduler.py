# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kube-scheduler extenders on RKE2 servers: the entries checked, the KubeSchedulerConfiguration written.

RKE2 runs kube-scheduler as a static pod with `--kubeconfig` set to its own scheduler kubeconfig
(k3s pkg/daemons/control/server.go, scheduler(): runtime.KubeConfigScheduler, which
pkg/daemons/control/deps/deps.go places at <data-dir>/server/cred/scheduler.kubeconfig). Given
`--config`, kube-scheduler ignores `--kubeconfig` and takes clientConnection.kubeconfig from the file
(kubernetes cmd/kube-scheduler/app/options/options.go, ApplyTo: the deprecated flags apply only
without --config; the leader election flags still do), so the file must name RKE2's kubeconfig,
not kubeadm's /etc/kubernetes/scheduler.conf, which an RKE2 server does not have.
"""

from __future__ import annotations

import difflib
import json
import re

from ansible_collections.gpuops.cluster.plugins.plugin_utils._plan.errors import IntentError

VARIABLE = "rke2_scheduler_extenders"
API_VERSION = "kubescheduler.config.k8s.io/v1"
# RKE2's data dir /var/lib/rancher/rke2, server/cred/scheduler.kubeconfig below it (see above).
SCHEDULER_KUBECONFIG = "/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig"
CONFIG_DIR = "/etc/rancher/rke2/kube-scheduler"
CONFIG_FILE = f"{CONFIG_DIR}/config.yaml"
# The extender fields of kubescheduler.config.k8s.io/v1 (k8s.io/kube-scheduler/config/v1 Extender).
VERBS = ("filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb")
BOOLEANS = ("enableHTTPS", "nodeCacheCapable", "ignorable")
FIELDS = ("urlPrefix", *VERBS, "weight", *BOOLEANS, "tlsConfig", "httpTimeout", "managedResources")
RESOURCE_FIELDS = ("name", "ignoredByScheduler")
_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$")
# metav1.Duration as Go's time.ParseDuration reads it: 30s, 1m30s, 500ms.
_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")
# An extended resource: domain-prefixed, outside kubernetes.io (validateExtendedResourceName).
_QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
VALID_ENTRY = (
    "a list of KubeSchedulerConfiguration extenders, each a mapping with urlPrefix (an http(s) URL) and "
    f"optional {', '.join(FIELDS[1:])}"
)


def _did_you_mean(key, known):
    text = str(key).lower()
    close = [name for name in known if text and name.lower().startswith(text)]
    close = close or difflib.get_close_matches(str(key), known, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def resource_name_problem(name):
    """Why NAME is not an extended resource name kube-scheduler accepts, or ""."""
    if not isinstance(name, str) or "/" not in name:
        return "not a domain-prefixed extended resource name such as aliyun.com/gpu-mem"
    prefix, short = name.split("/", 1)
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        return "in the kubernetes.io domain, which is for native resources"
    if not _DNS_SUBDOMAIN.match(prefix) or not _QUALIFIED_NAME.match(short) or len(short) > 63:
        return "not a domain-prefixed extended resource name such as aliyun.com/gpu-mem"
    return ""


def _resources_problems(where, resources):
    if not isinstance(resources, list):
        return [f"{where}.managedResources: {resources!r} is not a list; valid: a list of {{name, ignoredByScheduler}}"]
    found = []
    for index, resource in enumerate(resources):
        at = f"{where}.managedResources[{index}]"
        if not isinstance(resource, dict):
            found.append(f"{at}: {resource!r} is not a mapping; valid: {{name, ignoredByScheduler}}")
            continue
        for key in sorted(set(resource) - set(RESOURCE_FIELDS), key=str):
            found.append(
                f"{at}: unknown key {key!r}{_did_you_mean(key, RESOURCE_FIELDS)}; valid: name, ignoredByScheduler"
            )
        why = resource_name_problem(resource.get("name"))
        if why:
            found.append(f"{at}.name: {resource.get('name')!r} is {why}")
        if "ignoredByScheduler" in resource and not isinstance(resource["ignoredByScheduler"], bool):
            found.append(f"{at}.ignoredByScheduler: {resource['ignoredByScheduler']!r} is not true or false")
    return found


def _entry_problems(where, entry):
    if not isinstance(entry, dict):
        return [f"{where}: {entry!r} is not a mapping; valid: {VALID_ENTRY}"]
    found = [
        f"{where}: unknown key {key!r}{_did_you_mean(key, FIELDS)}; valid: {', '.join(FIELDS)}"
        for key in sorted(set(entry) - set(FIELDS), key=str)
    ]
    url = entry.get("urlPrefix")
    if not isinstance(url, str) or not _URL.match(url):
        found.append(
            f"{where}.urlPrefix: {url!r} is not an http(s) URL; valid: the extender's address, "
            "e.g. http://127.0.0.1:32766/gpushare-scheduler"
        )
    for verb in VERBS:
        if verb in entry and (not isinstance(entry[verb], str) or not entry[verb] or "/" in entry[verb]):
            found.append(f"{where}.{verb}: {entry[verb]!r} is not a verb; valid: a path segment such as filter or bind")
    for key in BOOLEANS:
        if key in entry and not isinstance(entry[key], bool):
            found.append(f"{where}.{key}: {entry[key]!r} is not true or false")
    weight = entry.get("weight")
    if "weight" in entry and (not _is_int(weight) or weight < 0):
        found.append(f"{where}.weight: {weight!r} is not a whole number >= 0")
    # kubernetes pkg/scheduler/apis/config/validation/validation.go, validateExtenders.
    if entry.get("prioritizeVerb") and not (_is_int(weight) and weight > 0):
        found.append(
            f"{where}.weight: {weight!r} with prioritizeVerb; valid: a positive weight (kube-scheduler refuses 0)"
        )
    timeout = entry.get("httpTimeout")
    if "httpTimeout" in entry and (not isinstance(timeout, str) or not _DURATION.match(timeout)):
        found.append(f"{where}.httpTimeout: {timeout!r} is not a duration; valid: e.g. 30s or 1m")
    if "tlsConfig" in entry and not isinstance(entry["tlsConfig"], dict):
        found.append(f"{where}.tlsConfig: {entry['tlsConfig']!r} is not a mapping (insecure, caFile, certFile, ...)")
    if "managedResources" in entry:
        found += _resources_problems(where, entry["managedResources"])
    return found


def extenders_problems(extenders):
    """Why the list EXTENDERS would be refused by kube-scheduler or the role: one line per problem."""
    if not isinstance(extenders, list):
        return [f"{extenders!r} is not a list; valid: {VALID_ENTRY}, or [] for none"]
    found = []
    for index, entry in enumerate(extenders):
        found += _entry_problems(f"[{index}]", entry)
    entries = [entry for entry in extenders if isinstance(entry, dict)]
    binders = [index for index, entry in enumerate(extenders) if isinstance(entry, dict) and entry.get("bindVerb")]
    if len(binders) > 1:
        found.append(f"bindVerb set on entries {binders}; valid: at most one extender binds pods")
    names = [
        resource.get("name")
        for entry in entries
        if isinstance(entry.get("managedResources"), list)
        for resource in entry["managedResources"]
        if isinstance(resource, dict)
    ]
    for name in sorted({name for name in names if names.count(name) > 1}, key=str):
        found.append(f"managedResources: {name!r} is managed twice; valid: each resource name in one extender only")
    return found


def check_servers(views):
    """Problems of rke2_scheduler_extenders on the servers among VIEWS (the hosts' preflight views).

    Each server runs its own kube-scheduler and the one holding the lease schedules, so the servers must
    agree: otherwise which extenders are asked would depend on which server leads.
    """
    servers = [view for view in views if view.get("role") == "server" and view.get("state") == "present"]
    problems = []
    for view in servers:
        problems += [
            IntentError(view["host"], VARIABLE, line) for line in extenders_problems(view.get("scheduler_extenders"))
        ]
    if not problems:
        variants = {json.dumps(view.get("scheduler_extenders"), sort_keys=True) for view in servers}
        if len(variants) > 1:
            problems += [
                IntentError(
                    view["host"],
                    VARIABLE,
                    "differs between servers; valid: one list for every server (group_vars/rke2_servers), "
                    "since the scheduler holding the lease is the one that calls the extenders",
                )
                for view in servers
            ]
    return [str(problem) for problem in problems]


def scheduler_configuration(extenders, kubeconfig=SCHEDULER_KUBECONFIG):
    """The KubeSchedulerConfiguration document (a mapping) that makes kube-scheduler call EXTENDERS."""
    return {
        "apiVersion": API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": kubeconfig},
        # RKE2 runs its schedulers with leader election (it passes leader-elect=false only when told to,
        # and that flag still applies over the file).
        "leaderElection": {"leaderElect": True},
        "extenders": [dict(entry) for entry in extenders],
    }


def config_settings(config_file=CONFIG_FILE, config_dir=CONFIG_DIR):
    """The RKE2 config.yaml.d settings that pass CONFIG_FILE to kube-scheduler and mount its folder.

    `key+` appends to what config.yaml already gives (RKE2 reads config.yaml.d after config.yaml: k3s
    pkg/configfilearg/parser.go, readConfigFile, appends the values of a key ending in `+`); the mount is
    read-only (`:ro`, RKE2's docs/advanced.md, Extra Control Plane Component Volume Mounts).
    """
    return {
        "kube-scheduler-arg+": [f"config={config_file}"],
        "kube-scheduler-extra-mount+": [f"{config_dir}:{config_dir}:ro"],
    }
