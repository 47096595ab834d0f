#!/usr/bin/python3
"""Join the guest's read/write calls (the tdm layer's interval rows and/or
tracing/tdm-syscalls' CSV) with the device's per-miss records: read
amplification, read bandwidth, reuse distance.  Python 3 standard library
only.  tracing/README.md "TDM tooling" has the columns and the method.

  tdm-join.py --layer-stats FILE --syscalls FILE --records FILE
              --page-size BYTES --out DIR [--extents FILE --dev-offset BYTES]
              [--guest-window T0,T1 --host-window T0,T1]
              [--prefetch-pages N | --device-stats FILE]

Writes DIR/per_file_second.csv, DIR/device_second.csv,
DIR/reuse_distance.csv (and DIR/per_file.csv with --extents) and prints
read_amplification= app_read_bytes= device_read_bytes=
read_bandwidth_mb_s_mean= and the counts behind them.

Time: the guest's rows are on the guest's CLOCK_MONOTONIC, the records on
the host's.  With both windows (the same moments, e.g. the workload's
begin and end, read on each side) a host time h is taken to guest time
G0 + (h - H0) * (G1 - G0) / (H1 - H0): linear, so a guest clock running
at another rate (TCG) is scaled; rows and records outside the windows are
left out.  Without windows each side's seconds count from its own first
timestamp (time_aligned=0): only the whole-run numbers are meaningful.
"""

import argparse
import collections
import csv
import os
import sys
from bisect import bisect_right

import tdm_inputs as ti

NS = 1000000000


def window(text, name):
    try:
        t0, t1 = (int(x) for x in text.split(","))
    except ValueError:
        raise SystemExit("tdm-join: %s wants T0,T1 (ns)" % name)
    if t1 <= t0:
        raise SystemExit("tdm-join: %s: T1 must be after T0" % name)
    return t0, t1


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layer-stats", help="TDM_STATS_INTERVALS CSV (guest)")
    ap.add_argument("--syscalls", help="tracing/tdm-syscalls CSV (guest)")
    ap.add_argument("--records", required=True, help="device records CSV (host)")
    ap.add_argument("--page-size", type=int, required=True,
                    help="the device's page-size property, bytes")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--extents", help="tdm-extents CSV: per-file attribution")
    ap.add_argument("--dev-offset", type=int, default=0,
                    help="device byte of the filesystem's block 0 (extents)")
    ap.add_argument("--guest-window", help="T0,T1 guest CLOCK_MONOTONIC ns")
    ap.add_argument("--host-window", help="T0,T1 host CLOCK_MONOTONIC ns")
    pf = ap.add_mutually_exclusive_group()
    pf.add_argument("--prefetch-pages", type=int,
                    help="the device's prefetch property: pages a miss "
                         "with prefetch_issued=1 read at most")
    pf.add_argument("--device-stats", help="the device's stats JSON: its "
                    "prefetch_issued, shared among those misses")
    a = ap.parse_args(argv)
    if not a.layer_stats and not a.syscalls:
        ap.error("give --layer-stats, --syscalls or both")
    if bool(a.guest_window) != bool(a.host_window):
        ap.error("--guest-window and --host-window go together")
    if a.page_size <= 0:
        ap.error("--page-size must be > 0")
    return a


class Clock:
    """Guest seconds of guest and host timestamps."""

    def __init__(self, a, guest_first, host_first):
        self.aligned = bool(a.guest_window)
        if self.aligned:
            self.g0, self.g1 = window(a.guest_window, "--guest-window")
            self.h0, self.h1 = window(a.host_window, "--host-window")
        else:
            self.g0, self.g1 = guest_first, None
            self.h0, self.h1 = host_first, None

    def guest_second(self, t):
        if self.g1 is not None and not self.g0 <= t < self.g1:
            return None
        return (t - self.g0) // NS

    def host_second(self, t):
        if self.h1 is None:
            return (t - self.h0) // NS
        if not self.h0 <= t < self.h1:
            return None
        g = (t - self.h0) * (self.g1 - self.g0) / (self.h1 - self.h0)
        return int(g // NS)

    def duration_s(self, seconds):
        if self.aligned:
            return (self.g1 - self.g0) / NS
        return (max(seconds) - min(seconds) + 1) if seconds else 0


def guest_side(a, clock, layer, syscalls):
    """per (second, path): counters, kernel counts, size buckets."""
    per = collections.defaultdict(lambda: {
        "c": collections.Counter(), "k": collections.Counter(),
        "rs": [0] * ti.SIZE_BUCKETS, "ws": [0] * ti.SIZE_BUCKETS})
    for t, path, c, rs, ws in layer:
        s = clock.guest_second(t)
        if s is None:
            continue
        e = per[s, path]
        e["c"].update(c)
        e["rs"] = [x + y for x, y in zip(e["rs"], rs)]
        e["ws"] = [x + y for x, y in zip(e["ws"], ws)]
    for t, path, write, calls, nbytes, bucket in syscalls:
        s = clock.guest_second(t)
        if s is None:
            continue
        e = per[s, path]
        op = "write" if write else "read"
        e["k"]["kernel_%s_calls" % op] += calls
        e["k"]["kernel_%s_bytes" % op] += nbytes
        if not a.layer_stats:       # every call went to the kernel
            e["c"]["%s_calls_passed" % op] += calls
            e["c"]["%s_bytes_passed" % op] += nbytes
            e["ws" if write else "rs"][bucket] += calls
    return per


def device_side(a, clock, records):
    """NAND reads per second (and per file with extents), and the sequence
    of pages the misses read, in time order."""
    recs = sorted(records)
    prefetch_records = sum(1 for r in recs if r[3])
    if a.device_stats:
        total = ti.device_stats_prefetches(a.device_stats)
        share = total / prefetch_records if prefetch_records else 0
        source = "device-stats"
    elif a.prefetch_pages is not None:
        share, source = a.prefetch_pages, "prefetch-pages"
    else:
        share, source = 0, "none"
    ext = ti.extents(a.extents, a.dev_offset, a.page_size) if a.extents else []
    starts = [e[0] for e in ext]
    sec_pages = collections.Counter()
    file_pages = collections.Counter()
    pages, outside, fills, prefetched = [], 0, 0, 0.0
    for t, page, own, pf, _write in recs:
        s = clock.host_second(t)
        if s is None:
            outside += 1
            continue
        n = own + (share if pf else 0)
        sec_pages[s] += n
        fills += own
        prefetched += share if pf else 0
        if own:
            pages.append(page)
        if ext:
            i = bisect_right(starts, page) - 1
            path = ext[i][2] if i >= 0 and page <= ext[i][1] else ""
            file_pages[s, path] += own
    return {"sec_pages": sec_pages, "file_pages": file_pages, "pages": pages,
            "outside": outside, "fills": fills, "prefetched": prefetched,
            "prefetch_records": prefetch_records, "source": source}


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write_per_file(a, per, dev):
    sizes = (["read_calls_%s_bytes" % s for s in ti.SIZE_LABELS] +
             ["write_calls_%s_bytes" % s for s in ti.SIZE_LABELS])
    header = ["second", "path"] + ti.COUNTERS + ti.KERNEL + sizes
    if a.extents:
        header.append("device_read_bytes")
    out = []
    for (s, path) in sorted(per):
        e = per[s, path]
        row = [s, path] + [e["c"][c] for c in ti.COUNTERS]
        row += [e["k"][k] if a.syscalls else "" for k in ti.KERNEL]
        row += e["rs"] + e["ws"]
        if a.extents:
            row.append(dev["file_pages"][s, path] * a.page_size)
        out.append(row)
    write_csv(os.path.join(a.out, "per_file_second.csv"), header, out)


def write_per_file_summary(a, per, dev):
    app = collections.Counter()
    for (s, path), e in per.items():
        app[path] += e["c"]["read_bytes_served"] + e["c"]["read_bytes_passed"]
    devb = collections.Counter()
    for (s, path), n in dev["file_pages"].items():
        devb[path] += n * a.page_size
    out = []
    for path in sorted(set(app) | set(devb)):
        amp = "%.4f" % (devb[path] / app[path]) if app[path] else ""
        out.append([path, app[path], devb[path], amp])
    write_csv(os.path.join(a.out, "per_file.csv"),
              ["path", "app_read_bytes", "device_read_bytes",
               "read_amplification"], out)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    layer = list(ti.layer_rows(a.layer_stats)) if a.layer_stats else []
    syscalls = list(ti.syscall_rows(a.syscalls)) if a.syscalls else []
    records = list(ti.record_rows(a.records))
    guest_first = min([r[0] for r in layer] + [r[0] for r in syscalls], default=0)
    clock = Clock(a, guest_first, min((r[0] for r in records), default=0))
    per = guest_side(a, clock, layer, syscalls)
    dev = device_side(a, clock, records)
    write_per_file(a, per, dev)
    if a.extents:
        write_per_file_summary(a, per, dev)

    app_sec = collections.Counter()
    for (s, _path), e in per.items():
        app_sec[s] += e["c"]["read_bytes_served"] + e["c"]["read_bytes_passed"]
    seconds = sorted(set(app_sec) | set(dev["sec_pages"]))
    out = []
    for s in seconds:
        nand = dev["sec_pages"][s] * a.page_size
        amp = "%.4f" % (nand / app_sec[s]) if app_sec[s] else ""
        out.append([s, "%.0f" % dev["sec_pages"][s], "%.0f" % nand,
                    "%.3f" % (nand / 1e6), app_sec[s],
                    "%.3f" % (app_sec[s] / 1e6), amp])
    write_csv(os.path.join(a.out, "device_second.csv"),
              ["second", "nand_read_pages", "nand_read_bytes",
               "read_bandwidth_mb_s", "app_read_bytes", "app_read_mb_s",
               "read_amplification"], out)

    hist = collections.Counter()
    for d in ti.reuse_distances(dev["pages"]):
        hist[("cold", "", "") if d is None else ("reuse",) + ti.reuse_bucket(d)] += 1
    write_csv(os.path.join(a.out, "reuse_distance.csv"),
              ["kind", "distance_min_pages", "distance_max_pages", "reads"],
              [list(k) + [hist[k]] for k in
               sorted(hist, key=lambda k: (k[0] != "cold", k[1] or 0))])

    app = sum(app_sec.values())
    device = (dev["fills"] + dev["prefetched"]) * a.page_size
    duration = clock.duration_s(seconds)
    print("read_amplification=%s" % ("%.4f" % (device / app) if app else "nan"))
    print("app_read_bytes=%d" % app)
    print("device_read_bytes=%.0f" % device)
    print("read_bandwidth_mb_s_mean=%s" %
          ("%.3f" % (device / 1e6 / duration) if duration else "nan"))
    print("device_fills=%d device_prefetch_pages=%.0f prefetch_records=%d "
          "prefetch_pages_source=%s records_outside_window=%d seconds=%d "
          "time_aligned=%d" % (dev["fills"], dev["prefetched"],
                               dev["prefetch_records"], dev["source"],
                               dev["outside"], len(seconds), clock.aligned))
    if dev["prefetch_records"] and dev["source"] == "none":
        print("tdm-join: %d misses issued prefetches, not counted: give "
              "--prefetch-pages or --device-stats" % dev["prefetch_records"],
              file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
