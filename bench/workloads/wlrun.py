"""Workloads from Debian's packages on guest DRAM and on a CXL device onlined
as a CPU-less NUMA node (system-ram), one guest boot per device setup.

A workload spec (bench/specs/wl-*.spec) has single values except
sweep.cache-pct:
  name = wl-redis
  workload.kind = redis            bench/workloads/jobs/<kind>.sh
  workload.wss-bytes = 16M         the working set
  workload.wss-ratio = 2           working set / device cache (cache-size =
                                   wss-bytes / wss-ratio for the main run)
  workload.value = 4096            value size (redis, memcached)
  workload.ops = 5000              operations per run (redis)
  workload.secs = 3                seconds per run (sysbench, stress-ng)
  workload.repeats = 3             runs per target (medians are reported)
  workload.hit-repeats = 1         runs in the mode=mmio boot that measures
                                   the hit fraction (0: no such boot)
  workload.policy = membind        numactl policy for the CXL node:
                                   membind, preferred or interleave
  workload.numa-maps = off         on: each run also samples the
                                   workload's /proc/<pid>/numa_maps (its
                                   anonymous pages per node, guest file
                                   numa-<name>-<target>-<repeat>.txt)
  guest.<opt>, device.<prop>       as in every spec (bench/lib/spec.py);
                                   guest.smp = 2 runs on two vCPUs
  sweep.cache-pct = 10 | 25 | 50 | 100 | 150   device cache as % of wss

Specs whose guest and device settings agree share a boot: the job runs them
one after the other.  Before and after every run the guest emits a marker
on the results port; a watcher here reads the device's counters over a
second QMP socket when a marker arrives, so each run has its own counter
deltas.
"""

import os
import re
import shlex
import statistics
import subprocess
import threading
import time

import spec as specmod
from manifest import TOP
from qmp import QMP, QMPError

JOBS = os.path.join(TOP, "bench", "workloads", "jobs")
BOOT = os.path.join(TOP, "vm-images", "boot-guest")
BOOT_DOMAIN = os.path.join(TOP, "bench", "libvirt", "boot-domain")
DEVICE_ID = "cxl-vmem0"
COUNTERS = ("misses", "trapped_hits", "evictions_clean", "evictions_dirty",
            "loading_waits", "nand_reads", "nand_writes", "faults")
DEFAULTS = {"workload.value": "4096", "workload.ops": "5000", "workload.secs": "3",
            "workload.repeats": "3", "workload.hit-repeats": "1",
            "workload.policy": "membind", "workload.numa-maps": "off",
            "workload.wss-ratio": "2", "guest.mem-size": "256M"}
BEGIN_RE = re.compile(rb"@@BEGIN (phase-[A-Za-z0-9._-]+) 0\n")
# guest.<opt> keys that are boot-guest options
BOOT_OPTIONS = ("mem-size", "ram", "smp", "accel", "timeout", "cpu", "ram-backend")


def load(path, overrides=()):
    """(name, settings dict, [cache pct]) of a workload spec; the name
    without its "wl-" prefix names the printed keys (redis_ops_per_s_...)."""
    name, axes = specmod.load(path, overrides)
    name = name[3:] if name.startswith("wl-") else name
    cfg = dict(DEFAULTS)
    pcts = []
    for key, values in axes:
        if key == "sweep.cache-pct":
            pcts = [float(v) for v in values]
        elif len(values) != 1:
            raise ValueError(f"{path}: {key}: a workload spec sweeps only sweep.cache-pct")
        else:
            cfg[key] = values[0]
    kind = cfg.get("workload.kind")
    if not kind or not os.path.exists(os.path.join(JOBS, f"{kind}.sh")):
        raise ValueError(f"{path}: workload.kind must name a script in {JOBS}")
    if cfg["workload.policy"] not in ("membind", "preferred", "interleave"):
        raise ValueError(f"{path}: workload.policy must be membind, preferred or interleave")
    if cfg["workload.numa-maps"] not in ("on", "off"):
        raise ValueError(f"{path}: workload.numa-maps must be on or off")
    for key in ("workload.repeats", "workload.hit-repeats"):
        if not cfg[key].isdigit() or (key == "workload.repeats" and int(cfg[key]) < 1):
            raise ValueError(f"{path}: {key} must be a whole number"
                             + (" >= 1" if key == "workload.repeats" else " (0: none)"))
    cfg["wss"] = specmod.parse_size(cfg["workload.wss-bytes"])
    return name, cfg, pcts


def shell_name(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def job_script(workloads, targets, phase_pause=1):
    """The guest job: common.sh, then every workload's wl_run under its own
    name and its settings, run on each of @targets (dram, cxl).
    @phase_pause: seconds the guest waits at a phase marker for the host to
    read the device counters (0: no watcher, e.g. cxl-type3)."""
    with open(os.path.join(JOBS, "common.sh")) as f:
        parts = [f.read()]
    for name, cfg in workloads:
        fn = "wl_run_" + shell_name(name)
        with open(os.path.join(JOBS, cfg["workload.kind"] + ".sh")) as f:
            parts.append(f.read().replace("wl_run()", f"{fn}()"))
    for name, cfg in workloads:
        env = {"WL_NAME": name, "WL_WSS": str(cfg["wss"]),
               "WL_VALUE": cfg["workload.value"], "WL_OPS": cfg["workload.ops"],
               "WL_SECS": cfg["workload.secs"], "WL_REPEATS": cfg["workload.repeats"],
               "WL_POLICY": cfg["workload.policy"], "WL_NUMA_MAPS": cfg["workload.numa-maps"],
               "WL_PHASE_PAUSE": str(phase_pause), "WL_TARGETS": " ".join(targets)}
        parts.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()))
        parts.append(f"wl_run() {{ wl_run_{shell_name(name)} \"$@\"; }}\nrun_all")
    return "\n".join(parts) + "\n"


class PhaseWatcher(threading.Thread):
    """Reads the device counters when a phase marker reaches results.raw."""

    def __init__(self, raw, sock, device_id, alive):
        super().__init__(daemon=True)
        self.raw, self.sock, self.dev, self.alive = raw, sock, device_id, alive
        self.stats = {}
        # the host's CLOCK_MONOTONIC ns when each marker was read
        self.times = {}
        self.error = None
        self.stop = threading.Event()

    def run(self):
        try:
            qmp = QMP(self.sock, timeout=120, alive=self.alive)
        except QMPError as e:
            self.error = str(e)
            return
        seen = 0
        while not self.stop.is_set():
            try:
                with open(self.raw, "rb") as f:
                    data = f.read()
            except OSError:
                data = b""
            names = [m.group(1).decode() for m in BEGIN_RE.finditer(data)]
            for name in names[seen:]:
                self.times[name[len("phase-"):]] = time.monotonic_ns()
                try:
                    st = qmp.execute("qom-get", path=f"/machine/peripheral/{self.dev}",
                                     property="stats")
                    self.stats[name[len("phase-"):]] = st
                except (QMPError, OSError) as e:   # QEMU going away; the run decides
                    self.error = str(e)
                    return
            seen = len(names)
            time.sleep(0.05)
        qmp.close()


def boot(tag, workloads, device, targets, outdir, initrd, log=print, uri=None):
    """One guest boot running @workloads on @targets with @device (a
    -device string); returns (rc, rows, elapsed_s).  @uri: launch it as a
    libvirt domain on that connection (bench/libvirt/boot-domain), the
    phase socket passed through as a second QMP monitor."""
    cfg0 = workloads[0][1]
    os.makedirs(outdir, exist_ok=True)
    rdir = os.path.join(outdir, "guest")
    job = os.path.join(outdir, "job.sh")
    with open(job, "w") as f:
        # the phase watcher reads cxl-ssd's counters only
        f.write(job_script(workloads, targets, 1 if device.startswith("cxl-ssd") else 0))
    sockdir = subprocess.check_output(["mktemp", "-d", "/tmp/cxlssd-wl.XXXXXX"],
                                      text=True).strip()
    sock = os.path.join(sockdir, "phase.sock")
    guest = specmod.section(cfg0, "guest.")
    if uri:     # boot-domain reads the statistics itself at the end
        cmd = [BOOT_DOMAIN, "--uri", uri, "--collect", DEVICE_ID]
    else:
        cmd = [BOOT, "--collect"]
    cmd += ["--job", job, "--results", rdir, "--device", device,
            "--mode", "system-ram", "--initrd", initrd]
    # stock cxl-type3 under TCG runs these programs 10-100x slower than
    # DRAM: boot-guest's default 600 s is too short for a boot of them.
    guest.setdefault("timeout", "2400")
    for opt in BOOT_OPTIONS:
        if opt in guest:
            cmd += [f"--{opt}", guest[opt]]
    cmd += ["--", "-qmp", f"unix:{sock},server=on,wait=off"]
    log(f"workloads: boot {tag}: {', '.join(n for n, _ in workloads)} on "
        f"{' and '.join(targets)} with {device}")
    start = time.monotonic()
    with open(os.path.join(outdir, "boot-guest.log"), "w") as blog:
        proc = subprocess.Popen(cmd, stdout=blog, stderr=subprocess.STDOUT)
        watcher = None
        if device.startswith("cxl-ssd"):
            watcher = PhaseWatcher(os.path.join(rdir, "results.raw"), sock, DEVICE_ID,
                                   lambda: proc.poll() is None)
            watcher.start()
        last = start
        while proc.poll() is None:
            time.sleep(0.5)
            if time.monotonic() - last >= 30:
                last = time.monotonic()
                log(f"workloads:   ... {last - start:.0f} s, "
                    f"{runs_done(os.path.join(rdir, 'results.raw'))} run(s) done")
        rc = proc.wait()
        if watcher:
            watcher.stop.set()
            watcher.join(5)
    subprocess.call(["rm", "-rf", sockdir])
    elapsed = time.monotonic() - start
    rows = []
    for name, _ in workloads:
        rows += read_rows(os.path.join(rdir, f"wl-{name}.csv"),
                          watcher.stats if watcher else {})
    if watcher and watcher.error and rc == 0:
        log(f"workloads:   device counters incomplete: {watcher.error}")
    return rc, rows, elapsed


def runs_done(raw):
    try:
        with open(raw, "rb") as f:
            return sum(1 for m in BEGIN_RE.finditer(f.read()) if m.group(1).endswith(b"-end"))
    except OSError:
        return 0


def read_rows(path, phase_stats):
    """The guest's per-run CSV with the device counter deltas of each run."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [l.strip().split(",") for l in f if l.strip()]
    head, rows = lines[0], []
    for cells in lines[1:]:
        row = dict(zip(head, cells))
        key = f"{row['workload']}-{row['target']}-{row['repeat']}"
        a, b = phase_stats.get(key + "-begin"), phase_stats.get(key + "-end")
        for c in COUNTERS:
            row[c] = (b[c] - a[c]) if a and b and c in a and c in b else ""
        rows.append(row)
    return rows


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def median_of(rows, field, **match):
    vals = [num(r[field]) for r in rows
            if all(r.get(k) == v for k, v in match.items()) and num(r[field]) is not None]
    return statistics.median(vals) if vals else None
