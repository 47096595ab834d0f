"""What the parts of bench/breakdown/fig1 share: running a spec with
bench/run, its points, and reading a point's guest samples and device
records (and whether they line up one to one)."""

import os
import subprocess
import sys

import spec as specmod
import stats
import tables

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
TOP = os.path.dirname(BENCH)


def say(*a):
    print(*a, flush=True)


def run_spec(spec, out, sets):
    cmd = [os.path.join(BENCH, "run"), os.path.join(BENCH, "specs", spec),
           "--out", out]
    for s in sets:
        cmd += ["--set", s]
    say(f"fig1: bench/run {spec} -> {out} {' '.join(sets)}")
    rc = subprocess.call(cmd, stdout=sys.stderr)
    if rc:
        say(f"fig1: {spec}: some points failed (see {out})")
    return rc


def points_of(spec, sets):
    _, axes = specmod.load(os.path.join(BENCH, "specs", spec), sets)
    return list(specmod.points(axes))


def guest_samples(pdir):
    return tables.read_column(os.path.join(pdir, "mio-dax-raw.csv"),
                              "ns_per_load")


def load_records(pdir):
    recs = tables.read_csv(os.path.join(pdir, "misses.csv"))
    recs.sort(key=lambda r: (int(r["t_fault_ns"]), int(r["seq"])))
    return recs


def untimed_misses(pdir):
    """Device records before the first timed sample: one per node in each
    untimed pass (build, warm-up, check); None without MIO's summary."""
    rows = tables.read_csv(os.path.join(pdir, "mio-dax-summary.csv"))
    if not rows:
        return None
    nodes = int(rows[0]["wss_bytes"]) // int(rows[0]["stride_bytes"])
    return (2 + int(rows[0]["warmup_passes"])) * nodes


def aligned(pdir, point, recs, guest):
    """True if the last len(guest) records are the guest's samples, in
    order: the untimed passes' records plus one per sample, and every
    sample is a miss."""
    first = untimed_misses(pdir)
    if not guest or first is None:
        return False
    thr = stats.miss_threshold_ns(point)
    return (len(recs) == first + len(guest) and
            all(g >= thr for g in guest))
