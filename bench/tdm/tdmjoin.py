"""bench/tdm's use of the TDM tooling (tracing/README.md "TDM tooling";
bench/tdm/README.md "The join"): per traced run, tracing/tdm-join.py over
the guest's CSVs (the layer's interval rows, tdm-syscalls' calls, the
files' extents) and the boot's device records in the run's window, and
the reuse-distance PNG; and the check of the namespace's device offset on
a file read once.

Time: the guest writes its CLOCK_MONOTONIC to marks.csv as it emits each
phase marker, and the host's watcher takes its own CLOCK_MONOTONIC (the
records' clock) when it reads the marker: the same two moments on each
side, late on the host by the serial line and the watcher's 50 ms poll."""

import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "bench", "lib"))
sys.path.insert(0, os.path.join(TOP, "tracing"))
import gnuplot  # noqa: E402
import tables  # noqa: E402
import tdm_inputs  # noqa: E402

JOIN = os.path.join(TOP, "tracing", "tdm-join.py")
NS = 1000000000
# the files the layer reads for the workloads (their served reads)
DATA_SUFFIXES = (".ibd", ".sst")


def guest_marks(rdir):
    """{phase: the guest's CLOCK_MONOTONIC ns at its marker}."""
    path = os.path.join(rdir, "marks.csv")
    if not os.path.exists(path):
        return {}
    return {r["phase"]: int(r["guest_monotonic_ns"])
            for r in tables.read_csv(path) if r["guest_monotonic_ns"]}


def dev_offset(rdir):
    """The device byte of the fsdax block device's byte 0, or None."""
    kv = tables.read_kv(os.path.join(rdir, "namespace.txt"))
    v = kv.get("dev_offset_bytes", "")
    return int(v) if v.isdigit() else None


def windows(marks, phases, name):
    """(guest window, host window) of markers NAME-begin and NAME-end, or
    None.  Both start earlier by as much as takes the guest's start back to
    a second's boundary: the rows' t_ns are interval starts, and the run's
    first interval began before its marker."""
    gb, ge = marks.get(name + "-begin"), marks.get(name + "-end")
    hb = phases.get(name + "-begin", {}).get("host_monotonic_ns")
    he = phases.get(name + "-end", {}).get("host_monotonic_ns")
    if None in (gb, ge, hb, he):
        return None
    g0 = gb // NS * NS
    return (g0, ge), (hb - (gb - g0), he)


def absolute_paths(src, dst, cwd):
    """tdm-syscalls' CSV with relative paths (as the open call named them)
    made absolute from the process's directory @cwd, as the layer's and
    tdm-extents' paths are."""
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        r = csv.DictReader(f)
        w = csv.DictWriter(g, r.fieldnames, lineterminator="\n")
        w.writeheader()
        for row in r:
            if row["path"] and not row["path"].startswith("/") and cwd:
                row["path"] = os.path.normpath(os.path.join(cwd, row["path"]))
            w.writerow(row)


def trace_info(rdir, run):
    """The key=values of trace-RUN.txt: tdm-syscalls' tdm_syscalls_*= and
    the job's cwd=."""
    try:
        with open(os.path.join(rdir, f"trace-{run}.txt")) as f:
            return tables.parse_kv(f.read())
    except OSError:
        return {}


def plot_reuse(out):
    """reuse_distance.png (+ .gp) in @out from its reuse_distance.csv."""
    rows = tables.read_csv(os.path.join(out, "reuse_distance.csv"))
    if not rows:
        return None
    data = []
    for r in rows:
        lo, hi = r["distance_min_pages"], r["distance_max_pages"]
        label = "cold" if r["kind"] == "cold" else (
            lo if lo == hi else f"{lo}-{hi}")
        data.append([label, int(r["reads"])])
    script = gnuplot.preamble(os.path.join(out, "reuse_distance.png"),
                              960, 540)
    script += gnuplot.datablock("d", data, "distance_pages reads")
    script += ('set title "NAND page reads by reuse distance (distinct pages '
               'read since the page\'s previous read)" noenhanced\n'
               'set xlabel "reuse distance (pages)"\nset ylabel "reads"\n'
               'set style fill solid 0.6\nset boxwidth 0.8\nset xtics '
               'rotate by -45\nunset key\nset yrange [0:*]\n'
               'plot $d using 0:2:xtic(1) with boxes lt 1\n')
    try:
        return gnuplot.save_plot(out, "reuse_distance", script)
    except (RuntimeError, FileNotFoundError):
        return None


def join_run(bootdir, rdir, row, phases, marks, page, offset):
    """tdm-join.py on one traced run into BOOTDIR/join-<workload>-<layer>/:
    its printed values (read_amplification ...) and the folder, or
    {"join_error": why}."""
    run = row["run"]
    sysc = os.path.join(rdir, f"sys-{run}.csv")
    if not os.path.exists(sysc):
        return {"join_error": f"no sys-{run}.csv (trace-{run}.txt)"}
    w = windows(marks, phases, run)
    if w is None:
        return {"join_error": f"no markers of {run} on both sides"}
    out = os.path.join(bootdir, f"join-{row['workload']}-{row['layer']}")
    os.makedirs(out, exist_ok=True)
    info = trace_info(rdir, run)
    absolute_paths(sysc, os.path.join(out, "syscalls.csv"), info.get("cwd"))
    a, b = phases[run + "-begin"], phases[run + "-end"]
    tables.write_json(os.path.join(out, "device-stats.json"), {
        "prefetch_issued": b["prefetch_issued"] - a["prefetch_issued"]})
    cmd = [sys.executable, JOIN, "--syscalls", os.path.join(out, "syscalls.csv"),
           "--records", os.path.join(bootdir, "records.csv"),
           "--page-size", str(page), "--out", out,
           "--guest-window", "%d,%d" % w[0], "--host-window", "%d,%d" % w[1],
           "--device-stats", os.path.join(out, "device-stats.json")]
    iv = os.path.join(rdir, f"iv-{run}.csv")
    if row["layer"] == "on" and os.path.exists(iv):
        cmd += ["--layer-stats", iv]
    ext = os.path.join(rdir, f"extents-{run}.csv")
    if offset is not None and os.path.exists(ext):
        cmd += ["--extents", ext, "--dev-offset", str(offset)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, "join.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        return {"join_error": f"tdm-join.py: {r.stderr.strip()[-300:]}"}
    kv = tables.parse_kv(r.stdout)
    return {"join_dir": out, "join": kv,
            "read_amplification_joined": kv.get("read_amplification"),
            "join_app_read_bytes": kv.get("app_read_bytes"),
            "join_device_read_bytes": kv.get("device_read_bytes"),
            "reuse_png": plot_reuse(out)}


def extent_check(bootdir, rdir, phases, page, offset):
    """The device offset checked on the file the guest read once between
    the extentcheck markers: of the fills in the host's window, how many
    fell on the file's pages (its extents + @offset), and how many of its
    pages were filled.  None without the check's files."""
    ext = os.path.join(rdir, "extents-check.csv")
    a = phases.get("extentcheck-begin", {}).get("host_monotonic_ns")
    b = phases.get("extentcheck-end", {}).get("host_monotonic_ns")
    if offset is None or not os.path.exists(ext) or None in (a, b):
        return None
    spans = tdm_inputs.extents(ext, offset, page)
    fills = on_file = 0
    pages = set()
    for t, p, own, _pf, _write in tdm_inputs.record_rows(
            os.path.join(bootdir, "records.csv")):
        if not own or not a <= t < b:
            continue
        fills += 1
        if any(lo <= p <= hi for lo, hi, _ in spans):
            on_file += 1
            pages.add(p)
    return {"fills": fills, "fills_on_file": on_file,
            "file_pages": sum(hi - lo + 1 for lo, hi, _ in spans),
            "file_pages_filled": len(pages), "dev_offset_bytes": offset}
