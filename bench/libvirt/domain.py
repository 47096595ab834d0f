"""libvirt domain XML for a cxl-ssd guest boot, and QMP through libvirt.

The QEMU command line comes from vm-images/boot-guest --print-args (the one
place that knows the CXL topology); this module maps what libvirt models
itself (machine, accelerator, memory, vCPUs, CPU model, kernel, serial
ports, lifecycle) to domain elements and passes everything else (firmware
-L, memdevs, pxb-cxl, root ports, cxl-ssd devices, the fixed memory window,
the fw_cfg job) through <qemu:commandline>.  DESIGN.md 3c lists what
libvirt 9.0 needs here: <acpi/>, an explicit pxb-cxl address, the CPUID
hypervisor bit disabled in <cpu>.

Monitor access: libvirt owns QEMU's monitor, so QMP goes through
`virsh qemu-monitor-command` (several commands in one virsh run).
"""

import json
import os
import shlex
import subprocess
import xml.etree.ElementTree as ET

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BOOT_GUEST = os.path.join(TOP, "vm-images", "boot-guest")
QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
PXB_ADDR = "0x10"       # libvirt's own devices take the low slots


class DomainError(Exception):
    pass


def boot_guest_args(boot_args, extra=()):
    """QEMU argv (binary first) that boot-guest would run."""
    cmd = [BOOT_GUEST, "--print-args"] + list(boot_args)
    if extra:
        cmd += ["--"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise DomainError(f"boot-guest --print-args failed: {r.stderr.strip()}")
    return r.stdout.rstrip("\n").split("\n")


def size_mib(text):
    units = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
    t = text.strip()
    if t[-1].upper() in units:
        return int(float(t[:-1]) * units[t[-1].upper()])
    return int(t) // (1 << 20)


def opts(text):
    """QEMU "a=b,c=d" option string (",," escapes) -> (first, {k: v})."""
    parts, cur, i = [], "", 0
    while i < len(text):
        if text[i] == "," and text[i + 1:i + 2] == ",":
            cur += ","
            i += 2
            continue
        if text[i] == ",":
            parts.append(cur)
            cur = ""
        else:
            cur += text[i]
        i += 1
    parts.append(cur)
    kv = {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        kv[k] = v
    return parts[0], kv


# QEMU options that set one setting of the domain, and the defaults
CONF_OPTIONS = {"-accel": "accel", "-m": "ram", "-smp": "smp", "-cpu": "cpu",
                "-kernel": "kernel", "-initrd": "initrd", "-append": "cmdline"}
CONF_DEFAULTS = {"accel": "tcg", "ram": "1G", "smp": "1", "cpu": "qemu64",
                 "kernel": None, "initrd": None, "cmdline": None}


def build_xml(argv, name, append_extra="cxlssd.finish=halt"):
    """Domain XML (string) equivalent to QEMU @argv (binary first)."""
    emulator, args = argv[0], argv[1:]
    machine = "q35"
    conf = dict(CONF_DEFAULTS)
    serials = {}            # chardev id -> path
    serial_order = []
    passthrough = []
    ram_memfd = False
    numa_cpus = None        # boot-guest's one guest-RAM node (system-ram)
    qmps = 0
    i = 0
    while i < len(args):
        a = args[i]
        v = args[i + 1] if i + 1 < len(args) else None
        if a in ("-nodefaults", "-nographic", "-no-reboot", "-no-shutdown",
                 "-S"):
            i += 1
            continue
        if a == "-M" or a == "-machine":
            first, kv = opts(v)
            if "=" not in first:            # "-M q35,cxl=on"
                machine = first
                rest = [f"{k}={val}" for k, val in kv.items()
                        if k != "memory-backend"]
                if rest:
                    passthrough += ["-M", ",".join(rest)]
            elif first.startswith("memory-backend="):
                pass                        # the guestram -object: below
            else:
                passthrough += ["-M", v]
        elif a in CONF_OPTIONS:
            conf[CONF_OPTIONS[a]] = v
        elif a == "-chardev":
            kind, kv = opts(v)
            if kind != "file":
                raise DomainError(f"unsupported chardev {v}")
            serials[kv["id"]] = kv["path"]
        elif a == "-serial":
            if not v.startswith("chardev:"):
                raise DomainError(f"unsupported -serial {v}")
            serial_order.append(v.split(":", 1)[1])
        elif a in ("-qmp", "-monitor"):
            # libvirt owns the monitor: boot-guest's own socket (the
            # first) is dropped; a caller's further ones (bench/workloads'
            # phase watcher) pass through as second monitors.
            qmps += 1
            if qmps > 1:
                passthrough += [a, v]
        elif a == "-object" and opts(v)[1].get("id") == "guestram":
            # guest RAM backend: libvirt makes its own (memoryBacking,
            # NUMA cell below)
            ram_memfd = v.startswith("memory-backend-memfd,")
        elif a == "-numa" and opts(v)[1].get("memdev") == "guestram":
            kind, kv = opts(v)
            if kind != "node" or kv.get("nodeid") != "0":
                raise DomainError(f"unsupported -numa {v}")
            numa_cpus = kv["cpus"]
        elif a == "-device" and v.startswith("pxb-cxl,") and "addr=" not in v:
            passthrough += ["-device", v + f",addr={PXB_ADDR}"]
        elif a.startswith("-") and v is not None and not v.startswith("-"):
            passthrough += [a, v]
        else:
            passthrough.append(a)
            i += 1
            continue
        i += 2

    accel, ram, smp, cpu, kernel, initrd, cmdline = (
        conf[k] for k in ("accel", "ram", "smp", "cpu", "kernel", "initrd",
                          "cmdline"))
    dom = ET.Element("domain", type="kvm" if accel == "kvm" else "qemu")
    dom.set("xmlns:qemu", QEMU_NS)
    ET.SubElement(dom, "name").text = name
    ET.SubElement(dom, "memory", unit="MiB").text = str(size_mib(ram))
    ET.SubElement(dom, "vcpu").text = str(int(smp.split(",")[0]))
    if ram_memfd:
        mb = ET.SubElement(dom, "memoryBacking")
        ET.SubElement(mb, "source", type="memfd")
        ET.SubElement(mb, "access", mode="shared")
    os_el = ET.SubElement(dom, "os")
    ET.SubElement(os_el, "type", arch="x86_64", machine=machine).text = "hvm"
    if kernel:
        ET.SubElement(os_el, "kernel").text = kernel
    if initrd:
        ET.SubElement(os_el, "initrd").text = initrd
    line = " ".join(x for x in (cmdline, append_extra) if x)
    if line:
        ET.SubElement(os_el, "cmdline").text = line
    feats = ET.SubElement(dom, "features")
    ET.SubElement(feats, "acpi")        # else libvirt 9.0 passes -no-acpi
    model, cpu_kv = opts(cpu)
    cpu_el = ET.SubElement(dom, "cpu", mode="custom", match="exact",
                           check="none")
    ET.SubElement(cpu_el, "model", fallback="forbid").text = model
    for feat, val in cpu_kv.items():
        policy = "disable" if val in ("off", "false", "no") else "require"
        ET.SubElement(cpu_el, "feature", policy=policy, name=feat)
    if numa_cpus is not None:   # guest RAM and vCPUs on node 0 (SRAT)
        numa = ET.SubElement(cpu_el, "numa")
        ET.SubElement(numa, "cell", id="0", cpus=numa_cpus,
                      memory=str(size_mib(ram)), unit="MiB")
    for ev, action in (("on_poweroff", "destroy"), ("on_reboot", "destroy"),
                       ("on_crash", "destroy")):
        ET.SubElement(dom, ev).text = action
    devs = ET.SubElement(dom, "devices")
    ET.SubElement(devs, "emulator").text = emulator
    for port, chid in enumerate(serial_order):
        if chid not in serials:
            raise DomainError(f"-serial chardev:{chid} without a -chardev")
        s = ET.SubElement(devs, "serial", type="file")
        ET.SubElement(s, "source", path=serials[chid], append="off")
        ET.SubElement(s, "target", port=str(port))
    ET.SubElement(devs, "controller", type="usb", model="none")
    ET.SubElement(devs, "memballoon", model="none")
    cl = ET.SubElement(dom, "qemu:commandline")
    for a in passthrough:
        ET.SubElement(cl, "qemu:arg", value=a)
    ET.indent(dom)
    return ET.tostring(dom, encoding="unicode") + "\n"


def virsh(uri, *args, timeout=60, check=True):
    r = subprocess.run(["virsh", "-q", "-c", uri] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise DomainError(f"virsh {' '.join(args[:1])} on {uri}: "
                          f"{(r.stderr or r.stdout).strip()}")
    return r


def qmp_batch(uri, domain, commands, timeout=120):
    """Run QMP @commands ([(execute, arguments)]) through one virsh run.
    Returns one entry per command: the "return" value or an Exception."""
    script = " ; ".join(
        "qemu-monitor-command " + shlex.quote(domain) + " " +
        shlex.quote(json.dumps({"execute": c, "arguments": a} if a else
                               {"execute": c}))
        for c, a in commands)
    # One argument: virsh parses it like its own shell (quotes, ";").
    r = subprocess.run(["virsh", "-q", "-c", uri, script],
                       capture_output=True, text=True, timeout=timeout)
    replies = [l for l in r.stdout.split("\n") if l.startswith("{")]
    if len(replies) != len(commands):
        raise DomainError(f"QMP through virsh: {len(replies)} replies to "
                          f"{len(commands)} commands: {r.stderr.strip()}")
    out = []
    for line in replies:
        reply = json.loads(line)
        if "error" in reply:
            out.append(DomainError(reply["error"].get("desc", "error")))
        else:
            out.append(reply.get("return"))
    return out


def qom_properties(uri, domain, path):
    """Every readable, non-link property of the QOM object at @path (same
    result as bench/lib/qmp.py device_properties)."""
    listing = qmp_batch(uri, domain, [("qom-list", {"path": path})])[0]
    if isinstance(listing, Exception):
        raise listing
    names = [p["name"] for p in listing
             if not p["type"].startswith(("link<", "child<"))]
    values = qmp_batch(uri, domain, [("qom-get", {"path": path, "property": n})
                                     for n in names])
    return {n: v for n, v in zip(names, values) if not isinstance(v, Exception)}
