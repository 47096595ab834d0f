"""Run one experiment point: boot a guest with the device, run MIO in it,
collect the guest's files, the device's per-miss records, statistics and
effective properties, and write manifest.json and summary.json."""

import gzip
import os
import shlex
import shutil
import subprocess
import tempfile
import time

import manifest as manifestmod
import spec as specmod
import stats
import tables
from manifest import BUILD, DEVICE_ID, TOP
DEFAULT_CACHE_PCT = 5


def device_spec(point, outdir):
    """The -device string (without bus/memdev/id) and the device section."""
    dev = specmod.section(point, "device.")
    driver = dev.pop("driver", "cxl-ssd")
    if driver != "cxl-ssd":
        return driver, driver, {}          # device.* properties are cxl-ssd's
    if dev.get("record") == "off":
        del dev["record"]                  # no per-miss records at all
    elif dev.get("record", "on") == "on":
        dev["record"] = os.path.join(outdir, "misses.csv")
    props = ",".join(f"{k}={v.replace(',', ',,')}" for k, v in dev.items())
    return driver + ("," + props if props else ""), driver, dev


def cache_bytes(point):
    mem = specmod.parse_size(point.get("guest.mem-size", "256M"))
    size = point.get("device.cache-size")
    if size and specmod.parse_size(size) > 0:
        return specmod.parse_size(size)
    return mem * DEFAULT_CACHE_PCT // 100


def mio_args(point, target):
    args = ["--target", target]
    opts = specmod.section(point, "mio.")
    if "wss-ratio" in opts and "cache-bytes" not in opts:
        opts["cache-bytes"] = str(cache_bytes(point))
    for k, v in opts.items():
        if v == "on":
            args.append(f"--{k}")
        elif v != "off":
            args += [f"--{k}", v]
    return args


def job_script(point):
    """Shell job for the guest: the chase on the device; with
    run.ram-baseline=on, in the same mio run, the same chase on ordinary
    guest RAM (anon, --thp never) sampled interleaved with the device (ABBA,
    mio --baseline), so both see the same vCPU and host conditions.  Files:
    mio-dax-* (device), mio-ram-* (RAM); mio-ram.out is the same stdout."""
    raw = point.get("run.raw", "on") == "on"
    baseline = point.get("run.ram-baseline", "off") == "on"
    args = mio_args(point, "$DAX")
    kinds = ["summary", "cdf", "hist"] + (["raw"] if raw else [])
    flag = {"summary": "summary-csv", "cdf": "cdf", "hist": "hist", "raw": "raw"}
    tags = ["dax"]
    outs = [f"--{flag[k]} /tmp/mio-dax-{k}.csv" for k in kinds]
    if baseline:
        tags.append("ram")
        args += ["--baseline", "anon", "--thp", "never"]
        outs += [f"--baseline-{flag[k]} /tmp/mio-ram-{k}.csv" for k in kinds]
    cmd = " ".join(["mio"] + [a if a == "$DAX" else shlex.quote(a)
                              for a in args] + outs)
    lines = ["set -e",
             f"echo '+ {cmd}'",
             f"{cmd} >/tmp/mio-dax.out",
             "cat /tmp/mio-dax.out"]
    for tag in tags:
        for kind in ["summary", "cdf", "hist"]:
            lines.append(f"emit mio-{tag}-{kind}.csv /tmp/mio-{tag}-{kind}.csv")
        if raw:
            # The results port carries ~100 KB/s: compress the samples.
            lines += [f"gzip -c /tmp/mio-{tag}-raw.csv >/tmp/mio-{tag}-raw.csv.gz",
                      f"emit mio-{tag}-raw.csv.gz /tmp/mio-{tag}-raw.csv.gz"]
        lines.append(f"emit mio-{tag}.out /tmp/mio-dax.out")
    return "\n".join(lines) + "\n"


def boot_guest_cmd(point, outdir, jobfile, devstr, collect=False):
    """vm-images/boot-guest command line for @point (bench/libvirt reuses
    it for the domain XML).  @collect: boot-guest reads the device's
    statistics and properties after power-off (--collect)."""
    guest = specmod.section(point, "guest.")
    cmd = [os.path.join(TOP, "vm-images", "boot-guest"),
           "--job", jobfile, "--results", outdir, "--device", devstr]
    if collect:
        cmd.append("--collect")
    extra = []
    for opt in ("mem-size", "ram", "smp", "accel", "timeout", "cpu", "kvm-delivery"):
        if opt in guest:
            cmd += [f"--{opt}", guest[opt]]
    if guest.get("ram-backend") == "memfd":
        ram = guest.get("ram", "1G")
        extra += ["-object", f"memory-backend-memfd,id=guestram,size={ram}",
                  "-M", "memory-backend=guestram"]
    return cmd + ["--"] + extra


def run(point_name, point, outdir, spec_path, log=print, uri=None):
    """Run one point into @outdir (must not exist).  Returns summary dict.
    @uri: launch through libvirt on that connection (bench/libvirt/
    boot-domain) instead of running QEMU directly."""
    if uri and point.get("run.trace", "off") == "on":
        raise ValueError("run.trace = on needs a direct launch, not libvirt")
    os.makedirs(outdir)
    devstr, driver, devprops = device_spec(point, outdir)
    # Through libvirt the job file must be readable where the domain runs:
    # next to the results (a shared folder for remote hosts).
    tmpbase = os.path.dirname(outdir) if uri else None
    with tempfile.TemporaryDirectory(prefix=".cxlssd-point-" if uri else "cxlssd-point-",
                                     dir=tmpbase) as tmp:
        jobfile = os.path.join(tmp, "job.sh")
        with open(jobfile, "w") as f:
            f.write(job_script(point))
        cmd = boot_guest_cmd(point, outdir, jobfile, devstr, collect=not uri)
        if uri:     # boot-domain reads the statistics itself
            cmd = [os.path.join(TOP, "bench", "libvirt", "boot-domain"),
                   "--uri", uri, "--collect", DEVICE_ID] + cmd[1:]
        env = None
        if point.get("run.trace", "off") == "on":
            # QEMU runs under tracing/trace-run (launch mode: traced from
            # its first instruction); host events -> host-events.csv.
            env = dict(os.environ,
                       CXLSSD_TRACE_QEMU=os.environ.get(
                           "QEMU", os.path.join(BUILD, "qemu", "qemu-system-x86_64")),
                       CXLSSD_TRACE_OUT=os.path.join(outdir, "host-events.csv"),
                       QEMU=os.path.join(TOP, "bench", "breakdown", "traced-qemu"))
        start = time.monotonic()
        with open(os.path.join(tmp, "boot-guest.log"), "w") as blog:
            rc = subprocess.call(cmd, stdout=blog, stderr=subprocess.STDOUT,
                                 env=env)
        elapsed = time.monotonic() - start
        shutil.copy(os.path.join(tmp, "boot-guest.log"), outdir)
        shutil.copy(jobfile, os.path.join(outdir, "job.sh"))

    for name in os.listdir(outdir):
        if name.startswith("mio-") and name.endswith(".csv.gz"):
            path = os.path.join(outdir, name)
            with gzip.open(path, "rb") as src, open(path[:-3], "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    manifest = manifestmod.of_point(point_name, point, outdir, spec_path,
                                    (driver, devstr), (rc, elapsed, uri))
    summary = stats.summarize_point(outdir, point)
    manifest["summary"] = summary
    tables.write_json(os.path.join(outdir, "manifest.json"), manifest)
    tables.write_json(os.path.join(outdir, "summary.json"), summary)
    return manifest
