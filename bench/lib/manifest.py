"""A point's manifest.json: what ran, where and how it went (device
properties read back over QMP, QEMU version, guest kernel, accelerator,
host CPU and kernel, git commit, the spec's parameters, status)."""

import os
import platform
import subprocess
import time

import tables

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
DEVICE_ID = "cxl-vmem0"


def read(pdir):
    """The manifest of the point in @pdir, None if missing or unreadable."""
    try:
        return tables.read_json(os.path.join(pdir, "manifest.json"))
    except (OSError, ValueError):
        return None


def is_ok(pdir):
    """True if the point in @pdir completed."""
    man = read(pdir)
    return bool(man) and man.get("status") == "ok"


def git_commit():
    try:
        rev = subprocess.run(["git", "-C", TOP, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev.stdout.strip() + ("-dirty" if dirty else "")
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def host_cpu():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def accel_used(outdir):
    """The accelerator boot-guest used, and its KVM probe's verdict (with
    --accel auto), from the "accel" file it writes."""
    info = tables.read_kv(os.path.join(outdir, "accel"))
    return info.get("accelerator", "unknown"), info.get("kvm_probe")


def qemu_version():
    path = os.path.join(BUILD, "qemu", "VERSION")
    return open(path).read().strip() if os.path.exists(path) else "unknown"


def of_point(point_name, point, outdir, spec_path, device, run):
    """The manifest of a point run into @outdir.  @device: (driver,
    -device string); @run: (boot-guest status, elapsed s, libvirt URI or
    None)."""
    driver, devstr = device
    rc, elapsed, uri = run
    ginfo = tables.read_kv(os.path.join(outdir, "guest-info"))
    accel, kvm_probe = accel_used(outdir)
    return {
        "experiment_spec": os.path.relpath(spec_path, TOP) if spec_path else None,
        "point": point_name,
        "parameters": point,
        "device_driver": driver,
        "device_command_line": devstr,
        "device_properties": tables.read_json(
            os.path.join(outdir, f"device-{DEVICE_ID}.json")),
        "qemu_version": qemu_version(),
        "qemu_query_version": tables.read_json(
            os.path.join(outdir, "qemu-version.json")),
        "guest_kernel": ginfo.get("uname_r", "unknown"),
        "guest_cpu_model": ginfo.get("cpu_model"),
        "accelerator": accel,
        "accelerator_probe": kvm_probe,
        "host_cpu": host_cpu(),
        "host_kernel": platform.release(),
        "git_commit": git_commit(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                     time.gmtime(time.time() - elapsed)),
        "elapsed_s": round(elapsed, 1),
        "boot_guest_status": rc,
        "launched_via": "libvirt" if uri else "qemu",
        "libvirt_uri": uri,
        "status": "ok" if rc == 0 else "failed",
    }
