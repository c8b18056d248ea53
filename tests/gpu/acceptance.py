#!/usr/bin/env python3
"""dltune's real-GPU acceptance run (project issue 23).

On a host with an NVIDIA GPU: runs `dltune env --json`, `dltune check --json --only gpu.*`,
`dltune top --once`, `dltune serve --once` and a 3 s `dltune record` (read back with
`dltune record --replay FILE --once` and, as docs/recording.md allows, with SQLite) and compares
every GPU fact they show with what `nvidia-smi -q -x` (and `nvidia-smi nvlink -s`) says about the
same GPUs. Prints one row per fact: source, GPU, fact, nvidia-smi's value, dltune's value, and
OK, MISMATCH or SKIP (nvidia-smi says N/A). Exit 0 when everything compared matches, 1 on a
mismatch or a command that failed, 77 when there is no nvidia-smi or no NVIDIA GPU.

Offline: `--fixture DIR` (or the single-file options) compares saved outputs instead, so the
comparison itself can be tested without a GPU (tests/gpu/fixtures/h100, `--self-test`).
tests/gpu/README.md says how to run it.

Python 3 standard library only.

Where nvidia-smi's XML element names come from (the DTD itself, nvsmi_device_v12.dtd, ships
with the driver; these are the public sources its names were read from):
  - nvidia-smi(1), NVIDIA's man page (https://manpages.ubuntu.com/manpages/plucky/man1/
    nvidia-smi.1.html, driver 535; https://man.archlinux.org/man/nvidia-smi.1.en, 565): the
    attributes of `nvidia-smi -q`, whose XML form is `-q -x`.
  - On drivers that print "GPU Power Readings" (<gpu_power_readings>), "Current Power Limit" is
    the enforced limit (NVML's nvmlDeviceGetEnforcedPowerLimit, "after taking into account all
    limiters") and "Requested Power Limit" the one set with -pl
    (nvmlDeviceGetPowerManagementLimit): published `nvidia-smi -q -d POWER` output of a
    platform-capped GPU shows the cap in Current while Requested keeps the -pl value. The older
    <power_readings> names them <enforced_power_limit> and <power_limit>.
  - NVIDIA's nvidia_smi.py sample in nvidia-ml-py (https://pypi.org/project/nvidia-ml-py/, "Sample
    code that attempts to reproduce the output of nvidia-smi -q -x", nvsmi_device_v4.dtd):
    <power_readings> with <power_limit>, <default_power_limit>, <enforced_power_limit>,
    <min_power_limit>, <max_power_limit>; <ecc_errors> <volatile>/<aggregate> <single_bit>/
    <double_bit> <total>; <retired_pages> <multiple_single_bit_retirement>/
    <double_bit_retirement> <retired_count>, <pending_retirement>; <persistence_mode>, <uuid>,
    <pci><pci_bus_id>; "N/A" for what NVML does not support.
  - Published `nvidia-smi -q -x` outputs of drivers 555.42.06 and 575.51.02 (DOCTYPE
    nvsmi_device_v12.dtd): <cuda_version>, <mig_mode><current_mig>/<pending_mig>,
    <mig_devices>, <pci_gpu_link_info> <pcie_gen> <max_link_gen>/<current_link_gen>/
    <max_device_link_gen>/<max_host_link_gen>, <link_widths> <max_link_width>/
    <current_link_width> ("16x"), <fb_memory_usage> <total>/<reserved>/<used> ("81559 MiB"),
    <ecc_mode> <current_ecc>/<pending_ecc>, <ecc_errors> <sram_correctable>,
    <sram_uncorrectable> (<sram_uncorrectable_parity> and <sram_uncorrectable_secded> from
    R550), <dram_correctable>, <dram_uncorrectable>, <remapped_rows> <remapped_row_corr>/
    <remapped_row_unc>/<remapped_row_pending>/<remapped_row_failure>, <gpu_power_readings>
    <current_power_limit>/<requested_power_limit>/<default_power_limit>/<min_power_limit>/
    <max_power_limit> ("700.00 W"), <processes> <process_info> <pid>/<type>/<used_memory>.
  - `nvidia-smi nvlink -s` (nvidia-smi(1), "nvlink --status"): "GPU 0: NAME (UUID: GPU-...)",
    then one "Link N: 26.562 GB/s" or "Link N: <inactive>" line per link.
dltune's side: docs/json.md (env, check), docs/metrics.md (serve), docs/recording.md (record),
src/monitor/top_view.cpp (the text of top and of a replay).
"""

import argparse
import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

EXIT_OK, EXIT_FAIL, EXIT_SKIP = 0, 1, 77
MIB = 1 << 20
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DLTUNE = os.path.join(REPO, "build", "release", "dltune")  # CMakePresets.json "release"
CHECK_IDS = "gpu.persistence,gpu.ecc,gpu.pcie_link,gpu.power_limit,gpu.mig,gpu.nvlink"
RECORD_SECONDS = 3

# The files of a fixture directory (also what --save writes).
FIXTURE_FILES = {
    "nvlink": "nvlink-status.txt",
    "env": "env.json",
    "check": "check.json",
    "top": "top.txt",
    "serve": "serve.prom",
    "replay": "replay.txt",
    "recording": ("recording.db", "recording.sql"),
}


class Failure(Exception):
    """A command or an input that could not be used: the run fails (exit 1)."""


class Skip(Exception):
    """No NVIDIA GPU or no nvidia-smi here: nothing to compare (exit 77)."""


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------

# What nvidia-smi writes where it has no value; a fact with one of these is skipped.
NOT_A_VALUE = {"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown error",
               "insufficient permissions", "requested functionality has been deprecated",
               "none", "not available"}


def norm_bus_id(text):
    """'00000000:17:00.0', '0000:17:00.0' or '17:00.0' -> '0000:17:00.0' (dltune's form)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])\s*",
                     text)
    if not m:
        return text.strip().lower()
    domain = int(m.group(1) or "0", 16)
    return "%04x:%02x:%02x.%d" % (domain, int(m.group(2), 16), int(m.group(3), 16),
                                  int(m.group(4)))


def compact_bytes(value):
    """dltune's compact size, as src/monitor/top_view.cpp compact_bytes writes it."""
    units = ["", "K", "M", "G", "T", "P"]
    if not value > 0:
        return "0"
    u = 0
    while value >= 1024 and u < 5:
        value /= 1024
        u += 1
    if u == 0:
        return "%.0f" % value
    return ("%.1f%s" if value < 10 else "%.0f%s") % (value, units[u])


def compact_interval(text):
    """The bytes a compact size stands for: '1.2G' -> [1.15 GiB, 1.25 GiB]."""
    m = re.fullmatch(r"(\d+(?:\.(\d+))?)([KMGTP]?)", text or "")
    if not m:
        return None
    half = 0.5 * 10 ** -len(m.group(2) or "")
    unit = 1024 ** ("KMGTP".index(m.group(3)) + 1) if m.group(3) else 1
    number = float(m.group(1))
    return ((number - half) * unit, (number + half) * unit)


def compact_matches_mib(mib, text, slack_mib=1):
    """Whether top's '80G' can be nvidia-smi's MiB (which it floors) give or take slack_mib."""
    interval = compact_interval(text)
    if interval is None or mib is None:
        return False
    lo, hi = (mib - slack_mib) * MIB, (mib + 1 + slack_mib) * MIB
    return interval[0] <= hi and lo <= interval[1]


def bytes_match_mib(mib, value, slack_mib=1):
    """nvidia-smi floors bytes to MiB: value in [mib, mib + 1) MiB, give or take slack_mib."""
    return (mib - slack_mib) * MIB <= value < (mib + 1 + slack_mib) * MIB


def show(value):
    if value is None:
        return "N/A"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return ("%.2f" % value).rstrip("0").rstrip(".")
    if isinstance(value, (list, tuple, set)):
        return "[" + ", ".join(show(v) for v in sorted(value)) + "]"
    return str(value)


# --------------------------------------------------------------------------------------------
# nvidia-smi
# --------------------------------------------------------------------------------------------

def smi_text(node, path):
    """The text at path below node, or None when absent or N/A."""
    if node is None:
        return None
    child = node.find(path)
    if child is None or child.text is None:
        return None
    text = child.text.strip()
    return None if text.lower() in NOT_A_VALUE else text


def first_text(node, *paths):
    """The first of paths that is present at all (N/A included): old and new element names."""
    for path in paths:
        if node is not None and node.find(path) is not None:
            return smi_text(node, path)
    return None


def smi_int(text):
    m = re.match(r"\s*(-?\d+)", text) if text else None
    return int(m.group(1)) if m else None


def smi_float(text):
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", text) if text else None
    return float(m.group(1)) if m else None


def smi_bool(text):
    if text is None:
        return None
    word = text.strip().lower()
    if word in ("enabled", "yes", "on", "active", "true"):
        return True
    if word in ("disabled", "no", "off", "not active", "false"):
        return False
    return None


def ecc_count(gpu, scope, corrected):
    """Total ECC errors of one kind, as nvmlDeviceGetTotalEccErrors sums them over memories.

    R450+ (v12): sram_ and dram_ (un)correctable, the SRAM uncorrectable count split into
    _parity and _secded from R550; older drivers: single_bit/double_bit <total>."""
    node = gpu.find("ecc_errors/" + scope)
    if node is None:
        return None
    if corrected:
        names = ["sram_correctable", "dram_correctable"]
    elif node.find("sram_uncorrectable_parity") is not None:
        names = ["sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable"]
    else:
        names = ["sram_uncorrectable", "dram_uncorrectable"]
    present = [n for n in names if node.find(n) is not None]
    if present:
        values = [smi_int(smi_text(node, n)) for n in present]
        return None if any(v is None for v in values) else sum(values)
    return smi_int(smi_text(node, ("single_bit" if corrected else "double_bit") + "/total"))


def parse_smi_gpu(gpu, position):
    """One <gpu> of nvidia-smi -q -x as a dict of facts (None: N/A)."""
    link = gpu.find("pci/pci_gpu_link_info")
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")  # before R530 (nvsmi_device_v11 and older)
    fb = gpu.find("fb_memory_usage")
    d = {
        "index": position,  # nvidia-smi lists the GPUs in NVML's index order
        "name": smi_text(gpu, "product_name"),
        "uuid": smi_text(gpu, "uuid"),
        "pci_bus_id": norm_bus_id(smi_text(gpu, "pci/pci_bus_id") or gpu.get("id")),
        "memory_total_mib": smi_int(smi_text(fb, "total")),
        "memory_used_mib": smi_int(smi_text(fb, "used")),
        "memory_reserved_mib": smi_int(smi_text(fb, "reserved")),
        "persistence_mode": smi_bool(smi_text(gpu, "persistence_mode")),
        "ecc_enabled": smi_bool(smi_text(gpu, "ecc_mode/current_ecc")),
        "ecc_pending_enabled": smi_bool(smi_text(gpu, "ecc_mode/pending_ecc")),
        "ecc_volatile_uncorrected": ecc_count(gpu, "volatile", False),
        "ecc_aggregate_uncorrected": ecc_count(gpu, "aggregate", False),
        "ecc_volatile_corrected": ecc_count(gpu, "volatile", True),
        "ecc_aggregate_corrected": ecc_count(gpu, "aggregate", True),
        "row_remap_corrected": smi_int(smi_text(gpu, "remapped_rows/remapped_row_corr")),
        "row_remap_uncorrected": smi_int(smi_text(gpu, "remapped_rows/remapped_row_unc")),
        "row_remap_pending": smi_bool(smi_text(gpu, "remapped_rows/remapped_row_pending")),
        "row_remap_failure": smi_bool(smi_text(gpu, "remapped_rows/remapped_row_failure")),
        "retired_pages_sbe": smi_int(smi_text(
            gpu, "retired_pages/multiple_single_bit_retirement/retired_count")),
        "retired_pages_dbe": smi_int(smi_text(
            gpu, "retired_pages/double_bit_retirement/retired_count")),
        "retired_pages_pending": smi_bool(smi_text(gpu, "retired_pages/pending_retirement")),
        "pcie_generation": smi_int(smi_text(link, "pcie_gen/current_link_gen")),
        "pcie_max_generation": smi_int(smi_text(link, "pcie_gen/max_link_gen")),
        # The GPU's own maximum (its LnkCap, sysfs max_link_speed); older drivers: max_link_gen.
        "pcie_max_device_generation": smi_int(
            first_text(link, "pcie_gen/max_device_link_gen", "pcie_gen/max_link_gen")),
        "pcie_width": smi_int(smi_text(link, "link_widths/current_link_width")),
        "pcie_max_width": smi_int(smi_text(link, "link_widths/max_link_width")),
        # Old form: <power_limit> is the limit set, <enforced_power_limit> the enforced one;
        # new form: <requested_power_limit> is set, <current_power_limit> enforced.
        "power_enforced_w": smi_float(first_text(power, "enforced_power_limit",
                                                 "current_power_limit")),
        "power_set_w": smi_float(first_text(power, "requested_power_limit", "power_limit")),
        "power_default_w": smi_float(smi_text(power, "default_power_limit")),
        "power_min_w": smi_float(smi_text(power, "min_power_limit")),
        "power_max_w": smi_float(smi_text(power, "max_power_limit")),
        "mig_enabled": smi_bool(smi_text(gpu, "mig_mode/current_mig")),
        "mig_pending_enabled": smi_bool(smi_text(gpu, "mig_mode/pending_mig")),
        "mig_devices": len(gpu.findall("mig_devices/mig_device")),
        "processes": [],
    }
    for p in gpu.findall("processes/process_info"):
        kind = smi_text(p, "type") or ""
        if "C" not in kind:  # compute processes (C, C+G, M+C), as NVML's compute list
            continue
        d["processes"].append((smi_int(smi_text(p, "pid")),
                               smi_int(smi_text(p, "used_memory"))))
    return d


def parse_smi_xml(text):
    """nvidia-smi -q -x as {driver_version, cuda_version, gpus: [dict]}."""
    root = ET.fromstring(text)
    gpus = [parse_smi_gpu(g, i) for i, g in enumerate(root.findall("gpu"))]
    return {"driver_version": smi_text(root, "driver_version"),
            "cuda_version": smi_text(root, "cuda_version"),
            "attached_gpus": smi_int(smi_text(root, "attached_gpus")),
            "gpus": gpus}


def parse_nvlink_status(text):
    """nvidia-smi nvlink -s as {uuid: (links listed, links up)}."""
    out, uuid = {}, None
    for line in text.splitlines():
        m = re.match(r"^GPU (\d+): .*\(UUID: (GPU-[^)]+)\)", line)
        if m:
            uuid = m.group(2)
            out[uuid] = (0, 0)
            continue
        m = re.match(r"^\s*Link (\d+): (.*)$", line)
        if m and uuid:
            total, up = out[uuid]
            out[uuid] = (total + 1, up + (1 if re.search(r"\d GB/s", m.group(2)) else 0))
    return out


# --------------------------------------------------------------------------------------------
# dltune's outputs, each as {"host": {...}, "gpus": [{...}]} with the same fact names
# --------------------------------------------------------------------------------------------

def env_sources(env, prefix):
    """dltune env --json: gpu.nvml (per NVML device) and gpu.devices (PCI sysfs)."""
    gpu = env.get("gpu", {})
    nvml = gpu.get("nvml", {})
    host = {"nvml_loaded": nvml.get("loaded"),
            "driver_version": nvml.get("driver_version"),
            "cuda_version": nvml.get("cuda_driver_version"),
            "gpu_count": nvml.get("device_count")}
    gpus = []
    for d in nvml.get("devices", []):
        ecc, rr, pages = d.get("ecc", {}), d.get("row_remap"), d.get("retired_pages", {})
        pcie, mig = d.get("pcie", {}), d.get("mig")
        links = d.get("nvlinks", [])
        g = {
            "index": d.get("index"), "name": d.get("name"), "uuid": d.get("uuid"),
            "pci_bus_id": d.get("pci_bus_id"),
            "memory_total_bytes": d.get("memory_total_bytes"),
            "memory_used_bytes": d.get("memory_used_bytes"),
            "persistence_mode": d.get("persistence_mode"),
            "ecc_enabled": ecc.get("enabled"), "ecc_pending_enabled": ecc.get("pending_enabled"),
            "ecc_volatile_uncorrected": ecc.get("volatile_uncorrected"),
            "ecc_aggregate_uncorrected": ecc.get("aggregate_uncorrected"),
            "ecc_volatile_corrected": ecc.get("volatile_corrected"),
            "ecc_aggregate_corrected": ecc.get("aggregate_corrected"),
            "pcie_generation": pcie.get("generation"), "pcie_width": pcie.get("width"),
            "pcie_max_generation": pcie.get("max_generation"),
            "pcie_max_width": pcie.get("max_width"),
            "power_enforced_w": d.get("power_limit_watts"),
            "power_set_w": d.get("power_management_limit_watts"),
            "power_default_w": d.get("power_default_limit_watts"),
            "power_min_w": d.get("power_min_limit_watts"),
            "power_max_w": d.get("power_max_limit_watts"),
            "mig_enabled": mig.get("enabled") if mig else None,
            "mig_pending_enabled": mig.get("pending_enabled") if mig else None,
            "nvlinks_total": len(links),
            "nvlinks_active": sum(1 for link in links if link.get("active")),
        }
        if mig and mig.get("enabled"):
            g["mig_devices"] = len(mig.get("devices", []))
        if rr is not None or not pages:
            g.update({"row_remap_corrected": (rr or {}).get("corrected_rows"),
                      "row_remap_uncorrected": (rr or {}).get("uncorrected_rows"),
                      "row_remap_pending": (rr or {}).get("pending"),
                      "row_remap_failure": (rr or {}).get("failure")})
        if rr is None:  # dltune asks for retired pages only on GPUs without row remapping
            g.update({"retired_pages_sbe": pages.get("multiple_single_bit"),
                      "retired_pages_dbe": pages.get("double_bit"),
                      "retired_pages_pending": pages.get("pending")})
        gpus.append(g)
    sysfs = []
    for d in gpu.get("devices", []):
        if d.get("vendor") != "nvidia" or not d.get("compute"):
            continue
        pcie = d.get("pcie", {})
        sysfs.append({"index": d.get("nvml_index"), "pci_bus_id": d.get("pci_address"),
                      "pcie_generation": pcie.get("generation"), "pcie_width": pcie.get("width"),
                      "pcie_max_device_generation": pcie.get("max_generation"),
                      "pcie_max_width": pcie.get("max_width")})
    return [(prefix + " (NVML)", {"host": host, "gpus": gpus, "match": "pci_bus_id"}),
            (prefix + " (PCI sysfs)", {"host": {}, "gpus": sysfs, "match": "pci_bus_id"})]


GPU_LABEL = re.compile(r"^GPU (\d+) \(([0-9a-fA-F:.]+)\)")


def check_source(check):
    """dltune check --json --only gpu.*: each finding's actual value and NVML evidence."""
    by_bus = {}
    host = {}

    def gpu_of(finding):
        m = GPU_LABEL.match(finding.get("summary", ""))
        if not m:
            return None
        return by_bus.setdefault(norm_bus_id(m.group(2)),
                                 {"index": int(m.group(1)), "pci_bus_id": norm_bus_id(m.group(2)),
                                  "power_tolerance_w": 0.5})  # check rounds watts to units

    def evidence(finding, pattern):
        for e in finding.get("evidence", []):
            m = re.search(pattern, e.get("value", ""))
            if m:
                return m
        return None

    def count(text):
        return None if text in (None, "?") else int(text)

    for f in check.get("findings", []):
        fid, summary, actual = f.get("id"), f.get("summary", ""), f.get("actual", "")
        if "cannot be checked without NVML" in summary:
            host["nvml_loaded"] = False
            continue
        if fid == "gpu.nvlink" and summary.startswith("no NVLink on these GPUs"):
            host["nvlinks_none"] = True
            continue
        g = gpu_of(f)
        if g is None:
            continue
        if fid == "gpu.persistence":
            g["persistence_mode"] = {"on": True, "off": False}.get(actual)
        elif fid == "gpu.ecc":
            on = evidence(f, r"ECC on; uncorrected volatile (\S+), aggregate (\S+); "
                             r"corrected volatile (\S+), aggregate (\S+)")
            g["ecc_enabled"] = True if on else (False if actual == "ECC off" else None)
            if on:
                g["ecc_volatile_uncorrected"] = count(on.group(1))
                g["ecc_aggregate_uncorrected"] = count(on.group(2))
                g["ecc_volatile_corrected"] = count(on.group(3))
                g["ecc_aggregate_corrected"] = count(on.group(4).rstrip(";,"))
                rr = evidence(f, r"remapped rows (\d+) for corrected, (\d+) for uncorrected "
                                 r"errors; pending (yes|no), failure (yes|no)")
                g["row_remap_corrected"] = int(rr.group(1)) if rr else None
                g["row_remap_uncorrected"] = int(rr.group(2)) if rr else None
                g["row_remap_pending"] = (rr.group(3) == "yes") if rr else None
                g["row_remap_failure"] = (rr.group(4) == "yes") if rr else None
                rp = evidence(f, r"retired pages (\S+) for repeated corrected, (\S+) for "
                                 r"uncorrected errors; pending (yes|no|\?)")
                if rp:  # older GPUs, without row remapping
                    g["retired_pages_sbe"] = count(rp.group(1))
                    g["retired_pages_dbe"] = count(rp.group(2))
                    g["retired_pages_pending"] = {"yes": True, "no": False}.get(rp.group(3))
        elif fid == "gpu.pcie_link":
            cur = re.match(r"(?:Gen(\d+))? ?(?:x(\d+))?", actual)
            top = re.search(r"\(max (?:Gen(\d+))? ?(?:x(\d+))?\)", actual)
            g["pcie_generation"] = count(cur.group(1)) if cur else None
            g["pcie_width"] = count(cur.group(2)) if cur else None
            g["pcie_max_width"] = count(top.group(2)) if top else None
            from_sysfs = any(e.get("path", "").endswith("/max_link_speed")
                             for e in f.get("evidence", []))
            key = "pcie_max_device_generation" if from_sysfs else "pcie_max_generation"
            g[key] = count(top.group(1)) if top else None
        elif fid == "gpu.power_limit":
            m = evidence(f, r"power limit (\d+|\?) W? ?enforced(?:, (\d+) W set)?"
                            r"(?:, (\d+) W default)?(?: \(settable (\d+)-(\d+) W\))?")
            values = [count(m.group(i)) if m else None for i in range(1, 6)]
            for key, v in zip(["power_enforced_w", "power_set_w", "power_default_w",
                               "power_min_w", "power_max_w"], values):
                g[key] = float(v) if v is not None else None
        elif fid == "gpu.mig":
            m = evidence(f, r"MIG (on|off), (on|off) after a reset(?:; (\d+) MIG device)?")
            g["mig_enabled"] = (m.group(1) == "on") if m else None
            g["mig_pending_enabled"] = (m.group(2) == "on") if m else None
            if m and m.group(1) == "on":
                g["mig_devices"] = int(m.group(3) or 0)
        elif fid == "gpu.nvlink":
            m = re.match(r"(\d+) of (\d+) up", actual)
            g["nvlinks_active"] = int(m.group(1)) if m else None
            g["nvlinks_total"] = int(m.group(2)) if m else None
    if host.get("nvlinks_none"):
        for g in by_bus.values():
            g.setdefault("nvlinks_total", 0)
            g.setdefault("nvlinks_active", 0)
    host.pop("nvlinks_none", None)
    return {"host": host, "gpus": list(by_bus.values()), "match": "pci_bus_id"}


GPU_ROW = re.compile(r"^GPU(\d+) (?:(.*?) )?util (\S+)  mem (\S+)/(\S+)(.*)$")


def top_source(text):
    """The text of dltune top --once (or record --replay --once): GPU rows and the GPU column."""
    gpus, header, column = {}, None, None
    lines = text.splitlines()
    for line in lines:
        m = GPU_ROW.match(line)
        if m:
            procs = re.search(r"  procs (\d+)", m.group(6))
            gpus[int(m.group(1))] = {
                "index": int(m.group(1)), "name": m.group(2),
                "memory_used_compact": None if m.group(4) == "-" else m.group(4),
                "memory_total_compact": None if m.group(5) == "-" else m.group(5),
                # top writes "procs N" only when N > 0
                "compute_processes": int(procs.group(1)) if procs else 0}
        elif re.match(r"^\s*PID ROLE", line):
            header = line
            column = line.find("GPU MEM") if "GPU MEM" in line else None
    if header is not None and column is not None:
        rows = {}
        for line in lines[lines.index(header) + 1:]:
            m = re.match(r"^\s*(\d+) ", line)
            if not m:
                continue
            rows[int(m.group(1))] = line[column:column + 8].strip()
        for g in gpus.values():
            if rows:  # a recording of the host alone has no processes
                g["process_column"] = rows
    return {"host": {"gpu_count": len(gpus)}, "gpus": list(gpus.values()), "match": "index"}


def parse_exposition(text):
    """Prometheus text format 0.0.4 as {family: [(labels, value)]}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$", line)
        if not m:
            continue
        labels = {}
        for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""):
            labels[k] = re.sub(r"\\(.)", lambda x: "\n" if x.group(1) == "n" else x.group(1), v)
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def serve_source(text):
    """dltune serve --once: dltune_gpu_* series by their uuid label (docs/metrics.md)."""
    metrics = parse_exposition(text)
    by_uuid = {}
    for labels, _ in metrics.get("dltune_gpu_info", []):
        by_uuid[labels.get("uuid")] = {
            "index": int(labels["gpu"]) if labels.get("gpu", "").isdigit() else None,
            "uuid": labels.get("uuid"), "name": labels.get("name"),
            "pci_bus_id": labels.get("pci_bus_id")}
    families = {"dltune_gpu_memory_total_bytes": "memory_total_bytes",
                "dltune_gpu_memory_used_bytes": "memory_used_bytes",
                "dltune_gpu_compute_processes": "compute_processes"}
    for family, key in families.items():
        for g in by_uuid.values():
            g[key] = None
        for labels, value in metrics.get(family, []):
            if labels.get("uuid") in by_uuid:
                by_uuid[labels["uuid"]][key] = int(value)
    up = metrics.get("dltune_nvml_up", [])
    host = {"nvml_loaded": bool(up and up[0][1] == 1), "gpu_count": len(by_uuid)}
    return {"host": host, "gpus": list(by_uuid.values()), "match": "uuid"}


def open_recording(path):
    """A recording (SQLite), or the SQL text of one (a fixture) loaded into memory."""
    if path.endswith(".sql"):
        conn = sqlite3.connect(":memory:")
        with open(path) as f:
            conn.executescript(f.read())
        return conn
    return sqlite3.connect("file:%s?mode=ro" % path, uri=True)


def recording_sources(conn):
    """dltune record: the gpu and gpu_process rows of the last sample, and the env document."""
    last = conn.execute("SELECT max(sample_id) FROM gpu").fetchone()[0]
    if last is None:
        raise Failure("the recording has no gpu rows (NVML was not read while recording)")
    gpus = {}
    for row in conn.execute("SELECT gpu, uuid, name, pci_bus_id, memory_total_bytes, "
                            "memory_used_bytes FROM gpu WHERE sample_id = ?", (last,)):
        gpus[row[0]] = {"index": row[0], "uuid": row[1], "name": row[2],
                        "pci_bus_id": row[3], "memory_total_bytes": row[4],
                        "memory_used_bytes": row[5], "compute_processes": 0,
                        "process_pids": set(), "process_memory_bytes": {}}
    for gpu, pid, used in conn.execute("SELECT gpu, pid, used_memory_bytes FROM gpu_process "
                                       "WHERE sample_id = ?", (last,)):
        if gpu in gpus:
            gpus[gpu]["compute_processes"] += 1
            gpus[gpu]["process_pids"].add(pid)
            gpus[gpu]["process_memory_bytes"][pid] = used
    sources = [("record: gpu table (sample %d)" % last,
                {"host": {"gpu_count": len(gpus)}, "gpus": list(gpus.values()),
                 "match": "pci_bus_id"})]
    row = conn.execute("SELECT json FROM document WHERE key = 'env'").fetchone()
    if row is None:
        raise Failure("the recording has no env document")
    sources += env_sources(json.loads(row[0]), "record: env document")[:1]
    return sources


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------

class Comparison:
    """The rows: (source, gpu, fact, nvidia-smi, dltune, status, note)."""

    def __init__(self, snapshots, nvlinks):
        self.snapshots = snapshots  # nvidia-smi -q -x, parsed; the first is the reference
        self.nvlinks = nvlinks      # nvidia-smi nvlink -s, parsed, or None
        self.rows, self.skipped, self.notes = [], [], []

    def add(self, source, gpu, fact, smi, dl, status, note=""):
        self.rows.append({"source": source, "gpu": gpu, "fact": fact, "nvidia_smi": smi,
                          "dltune": dl, "status": status, "note": note})

    def compare(self, source, gpu, fact, smi_values, dl, match=None, shown=None, note=""):
        """OK when dl matches one of smi_values (one per snapshot for facts that change
        between reads, else just the reference); SKIP when nvidia-smi has none of them."""
        match = match or (lambda a, b: a == b)
        known = [v for v in smi_values if v is not None]
        distinct = []
        for v in known:
            if v not in distinct:
                distinct.append(v)
        smi_shown = " | ".join((shown or show)(v) for v in distinct) if distinct else "N/A"
        if not known:
            self.add(source, gpu, fact, smi_shown, show(dl), "SKIP", note or "nvidia-smi: N/A")
        elif dl is None:
            self.add(source, gpu, fact, smi_shown, "(absent)", "MISMATCH", note)
        elif any(match(v, dl) for v in known):
            self.add(source, gpu, fact, smi_shown, show(dl), "OK", note)
        else:
            self.add(source, gpu, fact, smi_shown, show(dl), "MISMATCH", note)

    def values(self, bus_id, key, volatile=False):
        """A fact of one GPU in the reference snapshot, or in every snapshot."""
        snaps = self.snapshots if volatile else self.snapshots[:1]
        out = []
        for s in snaps:
            g = next((g for g in s["gpus"] if g["pci_bus_id"] == bus_id), None)
            out.append(g.get(key) if g else None)
        return out

    def mismatches(self):
        return [r for r in self.rows if r["status"] == "MISMATCH"]


def group_host(cmp, src, host):
    ref = cmp.snapshots[0]
    if "nvml_loaded" in host:
        cmp.compare(src, "-", "NVML loaded", [True], host["nvml_loaded"])
    if "driver_version" in host:
        cmp.compare(src, "-", "driver version", [ref["driver_version"]], host["driver_version"])
    if "cuda_version" in host:
        cmp.compare(src, "-", "CUDA driver version", [ref["cuda_version"]], host["cuda_version"])
    if "gpu_count" in host:
        cmp.compare(src, "-", "GPU count", [len(ref["gpus"])], host["gpu_count"])


def group_identity(cmp, src, label, bus, dl):
    for key, fact in [("index", "index"), ("name", "name"), ("uuid", "UUID"),
                      ("pci_bus_id", "PCI bus id")]:
        if key in dl:
            value = norm_bus_id(dl[key]) if key == "pci_bus_id" else dl[key]
            cmp.compare(src, label, fact, cmp.values(bus, key), value)


def group_memory(cmp, src, label, bus, dl):
    if "memory_total_bytes" in dl:
        cmp.compare(src, label, "memory total (MiB / bytes)", cmp.values(bus, "memory_total_mib"),
                    dl["memory_total_bytes"], bytes_match_mib)
    if "memory_total_compact" in dl:
        cmp.compare(src, label, "memory total (MiB / top's size)",
                    cmp.values(bus, "memory_total_mib"), dl["memory_total_compact"],
                    compact_matches_mib)
    # Used memory changes between reads: any snapshot, +-8 MiB. NVML's v1 `used` includes the
    # reserved memory that nvidia-smi (and NVML's v2) leave out: used + reserved matches too.
    used = [(u, r or 0) if u is not None else None
            for u, r in zip(cmp.values(bus, "memory_used_mib", True),
                            cmp.values(bus, "memory_reserved_mib", True))]

    def shown(v):
        return show(v[0])

    if "memory_used_bytes" in dl:
        cmp.compare(src, label, "memory used (MiB / bytes)", used, dl["memory_used_bytes"],
                    lambda v, b: bytes_match_mib(v[0], b, 8) or bytes_match_mib(sum(v), b, 8),
                    shown)
    if "memory_used_compact" in dl:
        cmp.compare(src, label, "memory used (MiB / top's size)", used,
                    dl["memory_used_compact"],
                    lambda v, t: compact_matches_mib(v[0], t, 8) or
                    compact_matches_mib(sum(v), t, 8), shown)


def group_persistence(cmp, src, label, bus, dl):
    if "persistence_mode" in dl:
        cmp.compare(src, label, "persistence mode", cmp.values(bus, "persistence_mode"),
                    dl["persistence_mode"])


def group_ecc(cmp, src, label, bus, dl):
    ecc_off = cmp.values(bus, "ecc_enabled")[0] is False
    for key, fact, is_count in [
            ("ecc_enabled", "ECC mode (current)", False),
            ("ecc_pending_enabled", "ECC mode (pending)", False),
            ("ecc_volatile_uncorrected", "ECC uncorrected, volatile", True),
            ("ecc_aggregate_uncorrected", "ECC uncorrected, aggregate", True),
            ("ecc_volatile_corrected", "ECC corrected, volatile", True),
            ("ecc_aggregate_corrected", "ECC corrected, aggregate", True)]:
        if key not in dl or (is_count and ecc_off):
            continue  # dltune has no counts with ECC off (docs/json.md: "only when ECC is on")
        # A count may grow while the run goes on: any read.
        cmp.compare(src, label, fact, cmp.values(bus, key, is_count), dl[key])


def group_row_remap(cmp, src, label, bus, dl):
    for key, fact in [("row_remap_corrected", "rows remapped (corrected errors)"),
                      ("row_remap_uncorrected", "rows remapped (uncorrected errors)"),
                      ("row_remap_pending", "row remap pending"),
                      ("row_remap_failure", "row remap failure")]:
        if key in dl:
            cmp.compare(src, label, fact, cmp.values(bus, key, True), dl[key])


def group_retired_pages(cmp, src, label, bus, dl):
    for key, fact in [("retired_pages_sbe", "pages retired (multiple single-bit)"),
                      ("retired_pages_dbe", "pages retired (double-bit)"),
                      ("retired_pages_pending", "page retirement pending")]:
        if key in dl:
            cmp.compare(src, label, fact, cmp.values(bus, key, True), dl[key])


def group_pcie(cmp, src, label, bus, dl):
    # The current generation drops at idle to save power: any snapshot.
    for key, fact, volatile in [
            ("pcie_generation", "PCIe generation (current)", True),
            ("pcie_width", "PCIe width (current)", True),
            ("pcie_max_generation", "PCIe generation (max, GPU and host)", False),
            ("pcie_max_device_generation", "PCIe generation (max, GPU's own)", False),
            ("pcie_max_width", "PCIe width (max)", False)]:
        if key in dl:
            cmp.compare(src, label, fact, cmp.values(bus, key, volatile), dl[key])


def group_power(cmp, src, label, bus, dl):
    tolerance = dl.get("power_tolerance_w", 0.01)
    for key, fact in [("power_enforced_w", "power limit, enforced (W)"),
                      ("power_set_w", "power limit, set (W)"),
                      ("power_default_w", "power limit, default (W)"),
                      ("power_min_w", "power limit, min (W)"),
                      ("power_max_w", "power limit, max (W)")]:
        if key in dl:
            cmp.compare(src, label, fact, cmp.values(bus, key), dl[key],
                        lambda a, b: abs(a - b) <= tolerance)


def group_mig(cmp, src, label, bus, dl):
    for key, fact in [("mig_enabled", "MIG mode (current)"),
                      ("mig_pending_enabled", "MIG mode (pending)"),
                      ("mig_devices", "MIG devices")]:
        if key in dl:
            cmp.compare(src, label, fact, cmp.values(bus, key), dl[key])


def group_nvlink(cmp, src, label, bus, dl):
    if "nvlinks_active" not in dl:
        return
    uuid = cmp.values(bus, "uuid")[0]
    if cmp.nvlinks is None:
        cmp.add(src, label, "NVLinks up", "N/A", show(dl["nvlinks_active"]), "SKIP",
                "no nvidia-smi nvlink -s output")
        return
    total, up = cmp.nvlinks.get(uuid, (0, 0))
    cmp.compare(src, label, "NVLinks up", [up], dl["nvlinks_active"])
    # nvidia-smi may list links NVML says do not exist as <inactive> (a PCIe card).
    cmp.compare(src, label, "NVLinks listed", [total], dl.get("nvlinks_total"),
                lambda a, b: a == b or (up == 0 and b == 0))


def group_processes(cmp, src, label, bus, dl):
    procs = cmp.values(bus, "processes", True)  # [(pid, MiB)] per snapshot
    if "compute_processes" in dl:
        cmp.compare(src, label, "compute processes", [len(p) for p in procs],
                    dl["compute_processes"])
    if "process_pids" in dl:
        cmp.compare(src, label, "compute process pids", [{pid for pid, _ in p} for p in procs],
                    dl["process_pids"])
    for pid, used in sorted(dl.get("process_memory_bytes", {}).items()):
        mib = [m for p in procs for q, m in p if q == pid]
        cmp.compare(src, label, "process %d memory (MiB / bytes)" % pid, mib or [None], used,
                    bytes_match_mib, note="" if mib else "nvidia-smi does not list it")
    column = dl.get("process_column")
    if column is None:
        return
    index = cmp.values(bus, "index")[0]
    for pid in sorted({pid for p in procs for pid, _ in p}):
        fact = "process %d in top's GPU MEM column" % pid
        if pid not in column:
            cmp.add(src, label, fact, "listed", "(not in top's process list)", "SKIP",
                    "another PID namespace, or it exited")
            continue
        cell = column[pid]
        m = re.fullmatch(r"([\d,-]+)(?: (\S+))?", cell)
        gpus = set()
        for part in (m.group(1).split(",") if m else []):
            lo, _, hi = part.partition("-")
            gpus.update(range(int(lo), int(hi or lo) + 1))
        mib = [m2 for p in procs for q, m2 in p if q == pid]
        if index not in gpus:
            cmp.add(src, label, fact, "GPU %d" % index, cell, "MISMATCH")
        elif m.group(2) and len(gpus) == 1:
            cmp.compare(src, label, fact, mib or [None], m.group(2),
                        lambda a, t: compact_matches_mib(a, t, 1))
        else:
            cmp.add(src, label, fact, "GPU %d" % index, cell, "OK")


FACT_GROUPS = [group_identity, group_memory, group_persistence, group_ecc, group_row_remap,
               group_retired_pages, group_pcie, group_power, group_mig, group_nvlink,
               group_processes]


def compare_source(cmp, src, data):
    """One dltune source against the snapshots: host facts, then each GPU's fact groups."""
    group_host(cmp, src, data["host"])
    ref = cmp.snapshots[0]["gpus"]
    key = data["match"]
    seen = set()
    for dl in data["gpus"]:
        if key == "pci_bus_id":
            smi = next((g for g in ref if g["pci_bus_id"] == norm_bus_id(dl.get(key))), None)
        else:
            smi = next((g for g in ref if g[key] == dl.get(key)), None)
        if smi is None:
            cmp.add(src, "?", "GPU %s %s" % (key, show(dl.get(key))), "(absent)", "present",
                    "MISMATCH", "dltune shows a GPU that nvidia-smi does not")
            continue
        seen.add(smi["pci_bus_id"])
        label = "GPU%d" % smi["index"]
        for group in FACT_GROUPS:
            group(cmp, src, label, smi["pci_bus_id"], dl)
    for g in ref:
        if g["pci_bus_id"] not in seen:
            cmp.add(src, "GPU%d" % g["index"], "GPU present", g["pci_bus_id"], "(absent)",
                    "MISMATCH", "nvidia-smi shows a GPU that dltune does not")


# --------------------------------------------------------------------------------------------
# Inputs: saved files, or the live host
# --------------------------------------------------------------------------------------------

def read(path):
    with open(path) as f:
        return f.read()


def sources_from_files(files, cmp):
    """The dltune sources from saved outputs: {kind: path}; a kind not given is skipped."""
    sources = []
    loaders = [
        ("env", lambda p: env_sources(json.loads(read(p)), "env --json")),
        ("check", lambda p: [("check --json --only gpu.*", check_source(json.loads(read(p))))]),
        ("top", lambda p: [("top --once", top_source(read(p)))]),
        ("serve", lambda p: [("serve --once", serve_source(read(p)))]),
        ("replay", lambda p: [("record --replay --once", top_source(read(p)))]),
        ("recording", lambda p: recording_sources(open_recording(p))),
    ]
    for kind, load in loaders:
        path = files.get(kind)
        if not path:
            cmp.skipped.append({"what": kind,
                                "reason": "no output (not given, or its command failed)"})
            continue
        try:
            sources += load(path)
        except (OSError, ValueError, KeyError, sqlite3.Error, Failure) as e:
            cmp.add(kind, "-", "readable output", "-", "%s: %s" % (path, e), "MISMATCH")
    return sources


def fixture_files(directory):
    files = {}
    for kind, names in FIXTURE_FILES.items():
        for name in (names if isinstance(names, tuple) else (names,)):
            if os.path.exists(os.path.join(directory, name)):
                files[kind] = os.path.join(directory, name)
                break
    snaps = sorted(n for n in os.listdir(directory) if re.fullmatch(r"nvidia-smi(\.\d+)?\.xml", n))
    snaps.sort(key=lambda n: 0 if n == "nvidia-smi.xml" else int(n.split(".")[1]))
    return files, [os.path.join(directory, n) for n in snaps]


def run(argv, timeout=120, env=None, ok=(0,)):
    """Runs a command; its stdout, or Failure with its stderr."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure("%s: %s" % (" ".join(argv), e))
    if p.returncode not in ok:
        raise Failure("%s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()[-800:]))
    return p.stdout


class CudaProcess:
    """A tiny CUDA process (torch, 256 MiB on cuda:0), so that there is a process to compare."""

    CODE = ("import time, torch\n"
            "x = torch.ones(1 << 26, device='cuda')\n"
            "torch.cuda.synchronize()\n"
            "print('ready', flush=True)\n"
            "time.sleep(600)\n")

    def __init__(self, python):
        self.python, self.proc, self.reason, self.errors = python, None, None, None

    def start(self):
        probe = [self.python, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() "
                                    "else 3)"]
        try:
            p = subprocess.run(probe, capture_output=True, text=True, timeout=180)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.reason = "%s: %s" % (self.python, e)
            return False
        if p.returncode != 0:
            self.reason = ("%s has torch but CUDA is not available" % self.python
                           if p.returncode == 3 else "%s cannot import torch" % self.python)
            return False
        self.errors = tempfile.TemporaryFile(mode="w+")  # a file: a full pipe would block it
        self.proc = subprocess.Popen([self.python, "-c", self.CODE], stdout=subprocess.PIPE,
                                     stderr=self.errors, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 180)
        if not ready or self.proc.stdout.readline().strip() != "ready":
            self.stop()
            self.errors.seek(0)
            self.reason = "the CUDA process did not get ready within 180 s: %s" % (
                self.errors.read().strip()[-400:] or "no error output")
            self.proc = None
            return False
        return True

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def smi_snapshot(saved):
    text = run(["nvidia-smi", "-q", "-x"], timeout=120)
    saved.append(text)
    return parse_smi_xml(text)


def live(args, cmp_notes):
    """Runs nvidia-smi and dltune on this host. Returns the nvidia-smi -q -x texts, the
    nvidia-smi nvlink -s text, the dltune outputs ({kind: file}, written to args.save or a
    temporary directory) and the dltune commands that failed ([(kind, error)])."""
    if shutil.which("nvidia-smi") is None:
        raise Skip("no nvidia-smi on PATH: not an NVIDIA GPU host")
    snaps = []
    try:
        first = smi_snapshot(snaps)
    except (Failure, ET.ParseError) as e:
        raise Skip("nvidia-smi -q -x failed, no usable NVIDIA GPU: %s" % e)
    if not first["gpus"]:
        raise Skip("nvidia-smi lists no NVIDIA GPU")
    if args.build:
        for argv in (["cmake", "--preset", "release"],
                     ["cmake", "--build", "--preset", "release", "-j", "--target", "dltune"]):
            print("$ " + " ".join(argv), file=sys.stderr, flush=True)
            # The build's output goes to stderr: stdout is the comparison (--json).
            if subprocess.run(argv, cwd=REPO, stdout=sys.stderr).returncode != 0:
                raise Failure("the build failed: " + " ".join(argv))
    dltune = args.dltune
    if not (os.path.isfile(dltune) and os.access(dltune, os.X_OK)):
        raise Failure("no dltune binary at %s (build it with --build, or give --dltune PATH)"
                      % dltune)
    cmp_notes.append(run([dltune, "--version"]).strip())
    cmp_notes.append("nvidia-smi: driver %s, CUDA %s, %d GPU(s)"
                     % (first["driver_version"], first["cuda_version"], len(first["gpus"])))
    out = args.save or tempfile.mkdtemp(prefix="dltune-gpu-acceptance-")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):  # an earlier run's reads must not join this one's
        if re.fullmatch(r"nvidia-smi(\.\d+)?\.xml|recording\.(db|sql)", name):
            os.remove(os.path.join(out, name))
    files, failed = {}, []
    cuda = CudaProcess(args.python)
    try:
        if cuda.start():
            cmp_notes.append("CUDA test process: pid %d (256 MiB on cuda:0)" % cuda.proc.pid)
            for _ in range(20):  # NVML lists a new process within a moment
                snaps.clear()
                listed = smi_snapshot(snaps)
                if any(pid == cuda.proc.pid for g in listed["gpus"] for pid, _ in g["processes"]):
                    break
                time.sleep(0.5)
            else:
                cmp_notes.append("nvidia-smi does not list pid %d (another PID namespace?)"
                                 % cuda.proc.pid)
        else:
            cmp_notes.append("no CUDA test process, its part is not exercised: " + cuda.reason)
        wide = dict(os.environ, COLUMNS="400")  # top's lines are cut at the width
        steps = [
            ("env", [dltune, "env", "--json"], (0,), None),
            ("check", [dltune, "check", "--json", "--only", CHECK_IDS], (0, 1, 2), None),
            ("top", [dltune, "top", "--once"], (0,), wide),
            ("serve", [dltune, "serve", "--once"], (0,), None),
        ]
        for kind, argv, ok, env in steps:
            try:
                text = run(argv, ok=ok, env=env)
            except Failure as e:  # the others still run
                failed.append((kind, str(e)))
                continue
            files[kind] = os.path.join(out, FIXTURE_FILES[kind])
            with open(files[kind], "w") as f:
                f.write(text)
            smi_snapshot(snaps)
        db = os.path.join(out, "recording.db")
        scope = ["--pid", str(cuda.proc.pid)] if cuda.proc else []
        try:
            run([dltune, "record", "-o", db, "--duration", "%ds" % RECORD_SECONDS, "--quiet"]
                + scope, timeout=60)
            files["recording"] = db
            smi_snapshot(snaps)
            text = run([dltune, "record", "--replay", db, "--once", "--at",
                        "%ds" % (RECORD_SECONDS - 1)], env=wide)
            files["replay"] = os.path.join(out, FIXTURE_FILES["replay"])
            with open(files["replay"], "w") as f:
                f.write(text)
        except Failure as e:
            failed.append(("record", str(e)))
    finally:
        cuda.stop()
    try:
        nvlink = run(["nvidia-smi", "nvlink", "-s"], timeout=60)
    except Failure as e:
        nvlink = None
        cmp_notes.append("nvidia-smi nvlink -s gave nothing, NVLink facts skipped: %s" % e)
    for i, text in enumerate(snaps):
        with open(os.path.join(out, "nvidia-smi.xml" if i == 0 else "nvidia-smi.%d.xml" % i),
                  "w") as f:
            f.write(text)
    if nvlink is not None:
        with open(os.path.join(out, FIXTURE_FILES["nvlink"]), "w") as f:
            f.write(nvlink)
    cmp_notes.append("outputs kept in %s (usable as --fixture)" % out)
    return snaps, nvlink, files, failed


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

def skip(reason, args):
    if args.json:
        print(json.dumps({"schema": "dltune.gpu-acceptance/1", "result": "skip",
                          "exit_code": EXIT_SKIP, "reason": reason}, indent=2))
    else:
        print("SKIP: %s (exit 77)" % reason)
    return EXIT_SKIP


def print_table(cmp, only_mismatches):
    rows = [r for r in cmp.rows if not only_mismatches or r["status"] == "MISMATCH"]
    head = ("source", "gpu", "fact", "nvidia-smi", "dltune", "status")
    keys = ("source", "gpu", "fact", "nvidia_smi", "dltune", "status")
    width = [max([len(h)] + [len(str(r[k])) for r in rows]) for h, k in zip(head, keys)]
    width = [min(w, 48) for w in width]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(width, head))
    print(line)
    print("-" * len(line))
    for r in rows:
        cells = [str(r[k]) for k in keys]
        cells = [c if len(c) <= w else c[:w - 1] + "~" for c, w in zip(cells, width)]
        text = "  ".join("%-*s" % (w, c) for w, c in zip(width, cells))
        print(text + ("  (" + r["note"] + ")" if r["note"] else ""))


def report(cmp, args):
    counts = {s: sum(1 for r in cmp.rows if r["status"] == s) for s in ("OK", "MISMATCH", "SKIP")}
    compared = counts["OK"] + counts["MISMATCH"]
    code = EXIT_FAIL if counts["MISMATCH"] or compared == 0 else EXIT_OK
    if args.json:
        print(json.dumps({"schema": "dltune.gpu-acceptance/1",
                          "result": "pass" if code == EXIT_OK else "fail", "exit_code": code,
                          "counts": counts, "notes": cmp.notes, "skipped": cmp.skipped,
                          "rows": cmp.rows}, indent=2, default=sorted))
        return code
    for n in cmp.notes:
        print("note: " + n)
    for s in cmp.skipped:
        print("skipped: %s: %s" % (s["what"], s["reason"]))
    print()
    print_table(cmp, args.mismatches_only)
    print()
    print("%d OK, %d MISMATCH, %d SKIP (nothing to compare with)%s" % (
        counts["OK"], counts["MISMATCH"], counts["SKIP"],
        "; nothing was compared" if compared == 0 else ""))
    print("PASS" if code == EXIT_OK else "FAIL")
    return code


# --------------------------------------------------------------------------------------------
# Self-test on the fixture (no GPU needed)
# --------------------------------------------------------------------------------------------

def self_test(fixture):
    """The fixture passes; a changed value is caught; the old <power_readings> form reads."""
    def outcome(directory):
        files, snaps = fixture_files(directory)
        cmp = Comparison([parse_smi_xml(read(s)) for s in snaps],
                         parse_nvlink_status(read(files["nvlink"])) if "nvlink" in files else None)
        for src, data in sources_from_files(files, cmp):
            compare_source(cmp, src, data)
        return cmp

    failures = []
    base = outcome(fixture)
    if base.mismatches() or not base.rows:
        failures.append("the fixture itself: %s" % base.mismatches()[:3])
    edits = [  # (files, old, new, the fact that must then mismatch); nvidia-smi: every read
        ("nvidia-smi", "<total>81559 MiB</total>", "<total>81920 MiB</total>",
         "memory total (MiB / bytes)"),
        ("nvidia-smi", "<persistence_mode>Enabled", "<persistence_mode>Disabled",
         "persistence mode"),
        ("nvidia-smi", "<remapped_row_pending>No", "<remapped_row_pending>Yes",
         "row remap pending"),
        ("nvidia-smi", "<pid>41873</pid>", "<pid>41874</pid>", "compute process pids"),
        ("env.json", '"power_default_limit_watts": 700.0', '"power_default_limit_watts": 650.0',
         "power limit, default (W)"),
        ("serve.prom", 'pci_bus_id="00000000:19:00.0"', 'pci_bus_id="00000000:1A:00.0"',
         "PCI bus id"),
        ("check.json", "MIG off, off after a reset", "MIG off, on after a reset",
         "MIG mode (pending)"),
        ("top.txt", "mem 783M/80G", "mem 783M/64G", "memory total (MiB / top's size)"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, old, new, fact in edits:
            work = os.path.join(tmp, "edit")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(fixture, work)
            for file in sorted(os.listdir(work)):
                if not file.startswith(name):
                    continue
                path = os.path.join(work, file)
                text = read(path)
                if old not in text:
                    failures.append("%s has no %r" % (file, old))
                with open(path, "w") as f:
                    f.write(text.replace(old, new))
            caught = {r["fact"] for r in outcome(work).mismatches()}
            if fact not in caught:
                failures.append("%s: %r -> %r not caught (mismatches: %s)"
                                % (name, old, new, sorted(caught)))
        # The old form (before R530): <power_readings>, <power_limit>, <enforced_power_limit>.
        work = os.path.join(tmp, "old")
        shutil.copytree(fixture, work)
        path = os.path.join(work, "nvidia-smi.xml")
        text = read(path)
        for old, new in [("gpu_power_readings>", "power_readings>"),
                         ("current_power_limit>", "enforced_power_limit>"),
                         ("requested_power_limit>", "power_limit>")]:
            text = text.replace(old, new)
        with open(path, "w") as f:
            f.write(text)
        old_form = outcome(work)
        powered = [r for r in old_form.rows if r["fact"].startswith("power limit")]
        if old_form.mismatches() or not powered or any(r["status"] != "OK" for r in powered):
            failures.append("old <power_readings> form: %s" % old_form.mismatches()[:3])
    for f in failures:
        print("self-test FAILED: " + f)
    print("self-test: %d rows compared on the fixture, %d edits caught, old power form read"
          % (len(base.rows), len(edits)) if not failures else "self-test: FAIL")
    return EXIT_FAIL if failures else EXIT_OK


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        description="Compare dltune's GPU facts with nvidia-smi's on this host (exit 0 all "
                    "match, 1 a mismatch or failure, 77 no NVIDIA GPU or no nvidia-smi).")
    ap.add_argument("--dltune", default=DEFAULT_DLTUNE,
                    help="the dltune binary (default: %(default)s)")
    ap.add_argument("--build", action="store_true",
                    help="cmake --preset release && cmake --build --preset release -j "
                         "--target dltune first")
    ap.add_argument("--python", default="python3",
                    help="the interpreter with torch for the CUDA test process")
    ap.add_argument("--save", metavar="DIR", help="keep every output here (a fixture layout)")
    ap.add_argument("--json", action="store_true", help="print the comparison as JSON")
    ap.add_argument("--mismatches-only", action="store_true", help="print only mismatching rows")
    off = ap.add_argument_group("offline: compare saved outputs instead of running anything")
    off.add_argument("--fixture", metavar="DIR",
                     help="a directory with nvidia-smi.xml (and nvidia-smi.N.xml), "
                          "nvlink-status.txt, env.json, check.json, top.txt, serve.prom, "
                          "replay.txt, recording.db or recording.sql")
    off.add_argument("--nvidia-smi-xml", metavar="FILE", action="append",
                     help="nvidia-smi -q -x output (repeat: later reads of volatile facts)")
    off.add_argument("--nvlink-status", metavar="FILE", help="nvidia-smi nvlink -s output")
    off.add_argument("--dltune-env-json", metavar="FILE")
    off.add_argument("--dltune-check-json", metavar="FILE")
    off.add_argument("--dltune-top", metavar="FILE", help="dltune top --once output")
    off.add_argument("--dltune-serve", metavar="FILE", help="dltune serve --once output")
    off.add_argument("--dltune-replay", metavar="FILE", help="record --replay --once output")
    off.add_argument("--dltune-recording", metavar="FILE", help="a recording (.db) or its .sql")
    off.add_argument("--self-test", action="store_true",
                     help="check the comparison on tests/gpu/fixtures/h100 (no GPU needed)")
    args = ap.parse_args()

    if args.self_test:
        return self_test(args.fixture or os.path.join(os.path.dirname(__file__), "fixtures",
                                                      "h100"))
    notes = []
    try:
        if args.fixture or args.nvidia_smi_xml:
            files, snap_paths = fixture_files(args.fixture) if args.fixture else ({}, [])
            snap_paths = args.nvidia_smi_xml or snap_paths
            for kind, value in [("nvlink", args.nvlink_status), ("env", args.dltune_env_json),
                                ("check", args.dltune_check_json), ("top", args.dltune_top),
                                ("serve", args.dltune_serve), ("replay", args.dltune_replay),
                                ("recording", args.dltune_recording)]:
                if value:
                    files[kind] = value
            if not snap_paths:
                raise Failure("no nvidia-smi -q -x output (nvidia-smi.xml) given")
            snaps = [read(p) for p in snap_paths]
            nvlink = read(files["nvlink"]) if "nvlink" in files else None
            notes.append("offline: %s" % (args.fixture or ", ".join(snap_paths)))
            failed = []
        else:
            snaps, nvlink, files, failed = live(args, notes)
        parsed = [parse_smi_xml(s) for s in snaps]
        if not parsed[0]["gpus"]:
            raise Failure("the nvidia-smi output lists no GPU")
        cmp = Comparison(parsed, parse_nvlink_status(nvlink) if nvlink is not None else None)
        cmp.notes = notes
        if nvlink is None:
            cmp.skipped.append({"what": "NVLink", "reason": "no nvidia-smi nvlink -s output"})
        for kind, error in failed:
            cmp.add(kind, "-", "command ran", "-", "failed", "MISMATCH", error)
        for src, data in sources_from_files(files, cmp):
            compare_source(cmp, src, data)
    except Skip as e:
        return skip(str(e), args)
    except (Failure, OSError, ET.ParseError) as e:
        print("FAIL: %s" % e)
        return EXIT_FAIL
    return report(cmp, args)


if __name__ == "__main__":
    sys.exit(main())
