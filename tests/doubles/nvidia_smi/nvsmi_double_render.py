# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Query outputs of the nvidia-smi double, laid out like the recorded real outputs (R515+ layout)."""

# ruff: noqa: UP031 -- printf formats (%2d, %-11s) mirror the fixed-width fields nvidia-smi prints
from __future__ import annotations

import hashlib
import uuid as uuidlib
from xml.sax.saxutils import escape

from nvsmi_double import Failure, free_placements, product_of

NAME_WIDTH = 17  # "MIG <profile>" column of -lgi/-lgip; wider GPUs' longest names widen it


def _box(title, header_lines, rows_blocks, width):
    """An nvidia-smi box table: title, header, '=' rule, blocks separated by '-' rules."""
    rule = "+" + "-" * (width - 2) + "+"
    lines = [rule, ("| " + title).ljust(width - 1) + "|"]
    lines += [line.ljust(width - 1) + "|" for line in header_lines]
    lines.append("|" + "=" * (width - 2) + "|")
    for block in rows_blocks:
        lines += [line.ljust(width - 1) + "|" for line in block]
        lines.append(rule)
    return "\n".join(lines)


def _name_width(gpus):
    longest = max((len("MIG " + p.name) for g in gpus for p in product_of(g).mig.profiles), default=0)
    return max(NAME_WIDTH, longest + 3)


def lgip(gpus):
    extra = _name_width(gpus) - NAME_WIDTH
    width = 79 + extra
    header = [
        "| GPU   Name" + " " * (13 + extra) + "ID    Instances   Memory     P2P    SM    DEC   ENC",
        "|" + " " * (30 + extra) + "Free/Total   GiB              CE    JPEG  OFA",
    ]
    blocks = []
    for gpu in gpus:
        mig = product_of(gpu).mig
        for p in mig.profiles:
            if p.memory_mib is None:
                continue  # no -lgip row was recorded for it, so no Memory column to print
            used = sum(1 for gi in gpu["gpu_instances"] if gi["profile_id"] == p.profile_id)
            free = min(p.max_instances - used, _disjoint(free_placements(mig, gpu, p), p.memory_slices))
            media = 1 if p.name.endswith("+me") else 0
            first = "|%4d  %-*s%3d     %-11s%-11sNo     %-7d%-6d%-4d" % (
                gpu["index"], NAME_WIDTH + extra, "MIG " + p.name, p.profile_id, "%d/%d" % (free, p.max_instances),
                "%.2f" % (p.memory_mib / 1024), 14 * p.compute_slices, media, 0,
            )  # fmt: skip
            second = "|" + " " * (61 + extra) + "%-6d%-6d%-4d" % (p.compute_slices, media, media)
            blocks.append([first, second])
    return _box("GPU instance profiles:", header, blocks, width)


def _disjoint(starts, size):
    """How many non-overlapping instances fit in the free placements (greedy from the left)."""
    count, end = 0, -1
    for start in sorted(starts):
        if start > end:
            count, end = count + 1, start + size - 1
    return count


def lgipp(gpus):
    lines = []
    for gpu in gpus:
        for p in product_of(gpu).mig.profiles:
            word = "Placements:" if len(p.placements) > 1 else "Placement :"
            starts = ",".join(str(s) for s in p.placements)
            lines.append(
                "GPU %2d Profile ID %2d %s {%s}:%d" % (gpu["index"], p.profile_id, word, starts, p.memory_slices)
            )
    return "\n".join(lines)


def lgi(gpus):
    instances = [(g, gi) for g in gpus for gi in sorted(g["gpu_instances"], key=lambda x: x["id"])]
    if not instances:
        raise Failure("No GPU instances found.", 6)
    extra = _name_width(gpus) - NAME_WIDTH
    header = [
        "| GPU   Name" + " " * (13 + extra) + "Profile  Instance   Placement",
        "|" + " " * (26 + extra) + "ID       ID       Start:Size",
    ]
    blocks = []
    for gpu, gi in instances:
        name = product_of(gpu).mig.profile_by_id(gi["profile_id"]).name
        placement = "%d:%d" % (gi["start"], gi["size"])
        blocks.append(
            [
                "|%4d  %-*s%5d%9d%13s"
                % (gpu["index"], NAME_WIDTH + extra, "MIG " + name, gi["profile_id"], gi["id"], placement)
            ]
        )
    return _box("GPU instances:", header, blocks, 57 + extra)


def lci(gpus):
    rows = [
        (g, gi, ci)
        for g in gpus
        for gi in sorted(g["gpu_instances"], key=lambda x: x["id"])
        for ci in gi["compute_instances"]
    ]
    if not rows:
        raise Failure("No compute instances found.", 6)
    header = [
        "| GPU     GPU       Name             Profile   Instance   Placement",
        "|       Instance                       ID        ID       Start:Size",
        "|         ID",
    ]
    blocks = [
        [
            "|%4d%7d       %-18s%4d%10d%13s"
            % (
                g["index"],
                gi["id"],
                "MIG " + ci["name"],
                ci["profile_id"],
                ci["id"],
                "%d:%d" % (ci["start"], ci["size"]),
            )
        ]
        for g, gi, ci in rows
    ]
    return _box("Compute instances:", header, blocks, 70)


def mig_uuid(gpu, gi, ci):
    digest = hashlib.sha256(("%s/%d/%d" % (gpu["uuid"], gi["id"], ci["id"])).encode()).hexdigest()
    return "MIG-" + str(uuidlib.UUID(digest[:32]))


def list_devices(gpus):
    lines = []
    for gpu in gpus:
        lines.append("GPU %d: %s (UUID: %s)" % (gpu["index"], gpu["product"], gpu["uuid"]))
        devices = [
            (gi, ci) for gi in sorted(gpu["gpu_instances"], key=lambda x: x["id"]) for ci in gi["compute_instances"]
        ]
        for number, (gi, ci) in enumerate(devices):
            lines.append("  MIG %-12sDevice %2d: (UUID: %s)" % (ci["name"], number, mig_uuid(gpu, gi, ci)))
    return "\n".join(lines)


def _recorded_product(gpu):
    """The GPU's catalog product; the double records nothing but the name of a product outside the catalog."""
    product = product_of(gpu)
    if not product.pci_device_ids:
        raise Failure(f"nvidia-smi double: {gpu['product']} is not in the GPU catalog; only -L is played for it", 2)
    return product


def _gpu_field(state, gpu, name, units):
    product = _recorded_product(gpu)
    mode = {True: "Enabled", False: "Disabled"}
    values = {
        "index": str(gpu["index"]),
        "uuid": gpu["uuid"],
        "name": gpu["product"],
        "gpu_name": gpu["product"],
        "pci.bus_id": gpu["pci_bus_id"],
        "pci.device_id": product.pci_device_ids[0],
        "pci.sub_device_id": gpu.get("pci_sub_system_id") or "[N/A]",
        "memory.total": "%d%s" % (product.memory_mib, " MiB" if units else ""),
        "driver_version": state["driver_version"],
        "mig.mode.current": mode[gpu["mig_current"]] if product.mig else "[N/A]",
        "mig.mode.pending": mode[gpu["mig_pending"]] if product.mig else "[N/A]",
    }
    if name not in values:
        raise Failure(f'Field "{name}" is not a valid field to query.', 2)
    return values[name]


def query(args, state, gpus, flag):
    option = next(a for a in args if a.startswith(flag))
    fields = option.split("=", 1)[1].split(",")
    fmt = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), "csv").split(",")
    units = "nounits" not in fmt
    unit_of = {"memory.total": " [MiB]", "used_memory": " [MiB]"}
    lines = [] if "noheader" in fmt else [", ".join(f + (unit_of.get(f, "") if units else "") for f in fields)]
    if flag == "--query-gpu=":
        lines += [", ".join(_gpu_field(state, gpu, f, units) for f in fields) for gpu in gpus]
    else:
        for process in state["processes"]:
            gpu = state["gpus"][process["gpu"]]
            values = {
                "gpu_uuid": gpu["uuid"],
                "pid": str(process["pid"]),
                "process_name": process["name"],
                "used_memory": "%d%s" % (process["used_memory_mib"], " MiB" if units else ""),
            }
            lines.append(", ".join(values[f] for f in fields))
    return "\n".join(lines)


def _xml_id(pci_id):
    """-q -x prints PCI ids without "0x" (147F10DE) and N/A when there is none."""
    return pci_id[2:] if pci_id else "N/A"


def query_xml(state, gpus):
    """The subset of ``-q -x`` the collection reads, with the real element names."""
    out = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>"]
    out += [
        "\t<driver_version>{}</driver_version>".format(state["driver_version"]),
        "\t<cuda_version>{}</cuda_version>".format(state["cuda_version"]),
    ]
    out.append("\t<attached_gpus>%d</attached_gpus>" % len(gpus))
    for gpu in gpus:
        product = _recorded_product(gpu)
        mode = {True: "Enabled", False: "Disabled"}
        current = mode[gpu["mig_current"]] if product.mig else "N/A"
        pending = mode[gpu["mig_pending"]] if product.mig else "N/A"
        out += [
            '\t<gpu id="{}">'.format(gpu["pci_bus_id"]),
            "\t\t<product_name>{}</product_name>".format(escape(gpu["product"])),
            f"\t\t<mig_mode>\n\t\t\t<current_mig>{current}</current_mig>\n\t\t\t<pending_mig>{pending}</pending_mig>\n\t\t</mig_mode>",
            "\t\t<uuid>{}</uuid>".format(gpu["uuid"]),
            "\t\t<minor_number>%d</minor_number>" % gpu["index"],
            "\t\t<pci>\n\t\t\t<pci_device_id>{}</pci_device_id>\n\t\t\t<pci_bus_id>{}</pci_bus_id>\n"
            "\t\t\t<pci_sub_system_id>{}</pci_sub_system_id>\n\t\t</pci>".format(
                product.pci_device_ids[0][2:], gpu["pci_bus_id"], _xml_id(gpu.get("pci_sub_system_id"))
            ),
            "\t\t<fb_memory_usage>\n\t\t\t<total>%d MiB</total>\n\t\t</fb_memory_usage>" % product.memory_mib,
            "\t\t<fabric>\n\t\t\t<state>N/A</state>\n\t\t\t<status>N/A</status>\n\t\t</fabric>",
            "\t</gpu>",
        ]
    out.append("</nvidia_smi_log>")
    return "\n".join(out)


def render(args, state, gpus):
    """(stdout, rc) of a read-only query."""
    if args and args[0] == "mig":
        for flag, table in (("-lgipp", lgipp), ("-lgip", lgip), ("-lgi", lgi), ("-lci", lci)):
            if flag in args:
                return table(gpus), 0
    elif "-L" in args:
        return list_devices(gpus), 0
    elif any(a.startswith("--query-gpu=") for a in args):
        return query(args, state, gpus, "--query-gpu="), 0
    elif any(a.startswith("--query-compute-apps=") for a in args):
        return query(args, state, gpus, "--query-compute-apps="), 0
    elif "-q" in args and "-x" in args:
        return query_xml(state, gpus), 0
    raise Failure("nvidia-smi double: unsupported arguments {}".format(" ".join(args)), 2)
