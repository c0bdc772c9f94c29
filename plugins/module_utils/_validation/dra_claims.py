# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a validation pod on a DRA node asks for its device: through a claim, not a resource limit.

A DRA node offers its devices by DeviceClass, as NVIDIA's driver chart defines them: gpu.nvidia.com for whole GPUs
and mig.nvidia.com for MIG devices, each selecting the driver's devices by their `type` attribute. A probe claims one
device of a class the plan's dra.json says the node offers, pinned by a CEL selector on the `uuid` attribute of one
device the node publishes (read from its ResourceSlices when the run starts), so that the pod must see exactly that
device: the real kube-scheduler allocates it and the driver's kubelet plugin has it injected.

- smoke and cuda: a ResourceClaimTemplate per pod (each pod gets its own claim);
- sharing: one ResourceClaim that SHARED_CLAIM_PODS pods all reference, which puts them on one GPU; the driver's
  default sharing of a GPU claim is time-slicing at the default interval (no GpuConfig is passed).
"""

from __future__ import annotations

from dataclasses import replace

from ansible_collections.gpuops.cluster.plugins.module_utils._validation.expectations import (
    KIND_GPU,
    KIND_MIG,
    DeviceExpectation,
)

# The DeviceClass of each device type the driver publishes (its chart's deviceclass templates).
DEVICE_CLASSES = {KIND_GPU: "gpu.nvidia.com", KIND_MIG: "mig.nvidia.com"}
# The claim's request and the pod's claim entry; one device each.
CLAIM_NAME = "gpu"
SHARED_CLAIM_PODS = 3
SHARED_SHARING = "time-slicing, one shared claim"


def _attribute(device, name):
    value = (device.get("attributes") or {}).get(name) or {}
    return value.get("string") if isinstance(value, dict) else None


def offered(target):
    """[(kind, MIG profile or None, device count)] of the devices the plan's dra.json gives TARGET, by kind: the
    MIG devices by profile, in the order of the plan."""
    found = {}
    for device in (target.dra or {}).get("devices") or ():
        kind = _attribute(device, "type")
        if kind not in DEVICE_CLASSES:
            continue
        key = (kind, _attribute(device, "profile") if kind == KIND_MIG else None)
        found[key] = found.get(key, 0) + 1
    return [(kind, profile, count) for (kind, profile), count in found.items()]


def expectation(target, kind, profile, count, replicas=1, sharing="none"):
    return DeviceExpectation(
        resource=DEVICE_CLASSES[kind],
        kind=kind,
        mig_profile=profile,
        product=str(target.plan.get("gpu_product") or ""),
        replicas=replicas,
        sharing=sharing,
        advertised=count,
        device_class=DEVICE_CLASSES[kind],
    )


def smoke_expectations(target):
    """One expectation per device kind (and MIG profile) the node offers."""
    return [expectation(target, kind, profile, count) for kind, profile, count in offered(target)]


def shared_expectation(target):
    """The sharing check's expectation: SHARED_CLAIM_PODS pods on one whole GPU; None without whole GPUs."""
    for kind, profile, count in offered(target):
        if kind == KIND_GPU:
            return expectation(target, kind, profile, count, SHARED_CLAIM_PODS, SHARED_SHARING)
    return None


def pinned(expect, published):
    """EXPECT pinned to the first device (by name) of PUBLISHED (the node's devices from its ResourceSlices) of its
    kind and MIG profile, or None when the node publishes none."""
    for device in sorted(published or (), key=lambda item: str(item.get("name"))):
        if _attribute(device, "type") != expect.kind:
            continue
        if expect.kind == KIND_MIG and _attribute(device, "profile") != expect.mig_profile:
            continue
        uuid = _attribute(device, "uuid")
        if uuid:
            return replace(expect, uuid=uuid)
    return None


def claim_spec(expect, driver):
    """A ResourceClaim's spec: one device of EXPECT's DeviceClass whose uuid is EXPECT's pinned one."""
    selector = f'device.attributes["{driver}"].uuid == "{expect.uuid}"'
    return {
        "devices": {
            "requests": [
                {
                    "name": CLAIM_NAME,
                    "exactly": {
                        "deviceClassName": expect.device_class,
                        "allocationMode": "ExactCount",
                        "count": 1,
                        "selectors": [{"cel": {"expression": selector}}],
                    },
                }
            ]
        }
    }


def claim_object(kind, name, namespace, object_labels, expect, driver):
    """A ResourceClaimTemplate (KIND "template") or ResourceClaim (KIND "claim") named NAME for EXPECT."""
    spec = claim_spec(expect, driver)
    metadata = {"name": name, "namespace": namespace, "labels": dict(object_labels)}
    if kind == "template":
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": metadata,
            "spec": {"spec": spec},
        }
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata, "spec": spec}


def pod_claim(kind, name):
    """The pod's resourceClaims entry: a claim made from template NAME, or the shared claim NAME."""
    source = "resourceClaimTemplateName" if kind == "template" else "resourceClaimName"
    return {"name": CLAIM_NAME, source: name}


def describe(expect):
    """What a DRA probe asks for, in check mode (before any device is pinned)."""
    return f"a claim for one device of DeviceClass {expect.device_class}"
