"""bench/tdm's boots and runs (bench/tdm/README.md): the guest job with its
settings, one boot per setup (the cxl-ssd's persistent mode at one cache
size, or DRAM-backed pmem: an ACPI NVDIMM), the device's counters at each
run's phase markers, and per run the throughput and the read amplification.

Read amplification of a run = bytes the device read from NAND (nand_reads x
page-size over the phase markers around the process's life) / bytes the
application's read calls asked for: its /proc/<pid>/io rchar at exit (the
calls the kernel served, files and sockets) plus, with the layer on, the
bytes the layer served through its mappings (TDM_STATS read_bytes_served,
calls the kernel never sees)."""

import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
sys.path.insert(0, os.path.join(TOP, "bench", "lib"))
sys.path.insert(0, os.path.join(TOP, "bench", "workloads"))
import tables  # noqa: E402
import tdmjoin  # noqa: E402
from wlrun import PhaseWatcher  # noqa: E402

BOOT = os.path.join(TOP, "vm-images", "boot-guest")
JOB = os.path.join(HERE, "guest-job.sh")
LIB = os.environ.get("TDM_LIB", os.path.join(BUILD, "tdm", "libtdm.so"))
INITRD = os.environ.get("GUEST_PMEM_APPS_INITRAMFS", os.path.join(
    BUILD, "guest", "initramfs-pmem-apps.cpio.gz"))
TOOLS_DISK = os.path.join(BUILD, "guest", "tools.img")
# the TDM tooling the guest runs (TDM_TRACE), through fw_cfg
TOOLING = {"tdm-syscalls": os.path.join(TOP, "tracing", "tdm-syscalls"),
           "tdm-syscalls.bt": os.path.join(TOP, "tracing", "bpf",
                                           "tdm-syscalls.bt"),
           "tdm-extents": os.path.join(BUILD, "tracing", "tdm-extents")}
DEVICE_ID = "cxl-vmem0"
WORKLOADS = ("oltp_read_only", "oltp_read_write", "oltp_write_only",
             "dbbench_readrandom", "dbbench_readrandomwriterandom")
# guest settings (guest-job.sh) and their defaults
SETTINGS = {"TDM_WORKLOADS": " ".join(WORKLOADS), "TDM_SECS": "10",
            "TDM_WARMUP_SECS": "5",
            "TDM_THREADS": "2", "SB_TABLES": "2", "SB_TABLE_SIZE": "22800",
            "BP_BYTES": str(8 << 20), "DB_NUM": "57600", "DB_VALUE": "400",
            "DB_CACHE": str(1 << 20), "TDM_TRACE": "",
            "TDM_EXTENT_CHECK_MIB": "0"}


def job_script(settings, phase_pause):
    env = dict(SETTINGS, **settings, PHASE_PAUSE=str(phase_pause))
    with open(JOB) as f:
        body = f.read()
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in sorted(env.items())) + body


def boot(outdir, settings, cache=None, smp=2, mem_size="512M",
         delivery="tlb", timeout=3600, shm_dir="/dev/shm"):
    """One boot: the cxl-ssd with cache-size @cache, or (cache None) the
    DRAM NVDIMM.  Returns (boot-guest status, results folder, the device
    counters per phase marker, with the host's CLOCK_MONOTONIC ns when the
    marker was read as host_monotonic_ns).  The cxl-ssd writes its per-miss
    records to @outdir/records.csv."""
    os.makedirs(outdir, exist_ok=True)
    rdir = os.path.join(outdir, "guest")
    job = os.path.join(outdir, "job.sh")
    with open(job, "w") as f:
        f.write(job_script(settings, 1 if cache else 0))
    tag = os.path.join(shm_dir, f"cxlssd-bench-tdm-{os.getpid()}")
    sockdir = subprocess.check_output(
        ["mktemp", "-d", "/tmp/cxlssd-tdm.XXXXXX"], text=True).strip()
    sock = os.path.join(sockdir, "phase.sock")
    cmd = [BOOT, "--job", job, "--results", rdir, "--collect",
           "--initrd", INITRD, "--tools-disk", TOOLS_DISK, "--smp", str(smp),
           "--accel", "tcg", "--timeout", str(timeout),
           "--start-timeout", "900"]
    if cache:
        cmd += ["--device", f"cxl-ssd,cache-size={cache},delivery={delivery},"
                "eviction=sync,precondition=on,record=" +
                os.path.join(outdir, "records.csv"), "--mode", "fsdax",
                "--fs", "ext4", "--mem-file", tag, "--mem-size", mem_size]
    else:
        cmd += ["--devices", "0", "--nvdimm", mem_size, "--nvdimm-file", tag]
    cmd += ["--", "-fw_cfg", f"name=opt/cxlssd/libtdm.so,file={LIB}"]
    if settings.get("TDM_TRACE"):
        for name, path in TOOLING.items():
            cmd += ["-fw_cfg", f"name=opt/cxlssd/{name},file={path}"]
    if cache:
        cmd += ["-qmp", f"unix:{sock},server=on,wait=off"]
    with open(os.path.join(outdir, "boot-guest.log"), "w") as blog:
        proc = subprocess.Popen(cmd, stdout=blog, stderr=subprocess.STDOUT)
        watcher = None
        if cache:
            watcher = PhaseWatcher(os.path.join(rdir, "results.raw"), sock,
                                   DEVICE_ID, lambda: proc.poll() is None)
            watcher.start()
        rc = proc.wait()
        if watcher:
            watcher.stop.set()
            watcher.join(5)
    subprocess.call(["rm", "-rf", sockdir])
    for p in (tag, tag + ".lsa", tag + ".dirty"):
        if os.path.exists(p):
            os.unlink(p)
    if not watcher:
        return rc, rdir, {}
    return rc, rdir, {k: dict(v, host_monotonic_ns=watcher.times[k])
                      for k, v in watcher.stats.items()}


def layer_stats(path):
    """The layer's statistics of one run (every row: one process's file)."""
    rows = tables.read_csv(path)
    n = lambda r, k: int(r.get(k) or 0)  # noqa: E731
    return {"tdm_rows": len(rows),
            "served_read_bytes": sum(n(r, "read_bytes_served") for r in rows),
            "served_read_calls": sum(n(r, "read_calls_served") for r in rows),
            "passed_read_bytes": sum(n(r, "read_bytes_passed") for r in rows),
            "served_write_calls": sum(n(r, "write_calls_served") for r in rows),
            "map_sync_files_served": sum(
                1 for r in rows if r.get("map") == "sync" and
                n(r, "read_calls_served") + n(r, "write_calls_served") > 0)}


def page_size(rdir):
    props = tables.read_json(os.path.join(rdir, f"device-{DEVICE_ID}.json")) or {}
    return int(props.get("page-size", 4096))


def runs(rdir, phase_stats):
    """Rows of the guest's runs.csv with the layer's statistics, the device
    counter deltas and the read amplification."""
    page = page_size(rdir)
    rows = []
    for r in tables.read_csv(os.path.join(rdir, "runs.csv")):
        row = dict(r, **layer_stats(os.path.join(rdir, f"tdm-{r['run']}.csv")))
        row["app_read_bytes"] = int(r["rchar_bytes"]) + row["served_read_bytes"]
        a = phase_stats.get(r["run"] + "-begin")
        b = phase_stats.get(r["run"] + "-end")
        row["nand_read_bytes"] = row["misses"] = row["read_amplification"] = ""
        if a and b:
            row["nand_read_bytes"] = (b["nand_reads"] - a["nand_reads"]) * page
            row["misses"] = b["misses"] - a["misses"]
            if row["app_read_bytes"]:
                row["read_amplification"] = (row["nand_read_bytes"] /
                                             row["app_read_bytes"])
        rows.append(row)
    return rows


def join(outdir, rdir, rows, phases):
    """The TDM tooling's join (tdmjoin.py) of every traced run of @rows
    (those with tdm-syscalls' CSV or output), into the row: its
    read_amplification_joined, join_dir and the joiner's values (join), or
    join_error."""
    marks = tdmjoin.guest_marks(rdir)
    offset = tdmjoin.dev_offset(rdir)
    for r in rows:
        if os.path.exists(os.path.join(rdir, f"trace-{r['run']}.txt")):
            r.update(tdmjoin.join_run(outdir, rdir, r, phases, marks,
                                      page_size(rdir), offset))
    return rows


def dataset(rdir):
    return {k: int(v) for k, v in
            tables.read_kv(os.path.join(rdir, "dataset.txt")).items()}


def now():
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
