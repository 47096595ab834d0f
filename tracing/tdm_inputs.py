"""Readers of tracing/tdm-join.py's inputs, and the reuse distance.
Python 3 standard library only.  Columns are found by name."""

import csv
import json

# the tdm layer's size buckets (tdm/stats.h): <= 512, <= 1 KiB ... <= 1 MiB,
# > 1 MiB; 0-byte calls and errors in the first
SIZE_MIN_SHIFT = 9
SIZE_BUCKETS = 13
SIZE_LABELS = ["le_%d" % (1 << (SIZE_MIN_SHIFT + i))
               for i in range(SIZE_BUCKETS - 1)] + [
               "gt_%d" % (1 << (SIZE_MIN_SHIFT + SIZE_BUCKETS - 2))]
COUNTERS = ["read_calls_served", "read_calls_passed", "read_bytes_served",
            "read_bytes_passed", "write_calls_served", "write_calls_passed",
            "write_bytes_served", "write_bytes_passed"]
KERNEL = ["kernel_read_calls", "kernel_read_bytes", "kernel_write_calls",
          "kernel_write_bytes"]
READ_SYSCALLS = {"read", "pread64", "readv", "preadv", "preadv2"}
WRITE_SYSCALLS = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}


def size_bucket(nbytes):
    """The bucket of a call that moved @nbytes (a power of two at or above
    it for tdm-syscalls' size_le_bytes)."""
    b = 0
    while b < SIZE_BUCKETS - 1 and nbytes > (1 << (SIZE_MIN_SHIFT + b)):
        b += 1
    return b


def rows(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f)


def need(row, cols, path):
    missing = [c for c in cols if c not in row]
    if missing:
        raise SystemExit("tdm-join: %s has no column %s" % (path, ", ".join(missing)))


def layer_rows(path):
    """TDM_STATS_INTERVALS rows: (t_ns, path, counters dict, read sizes,
    write sizes)."""
    for r in rows(path):
        need(r, ["t_ns", "path"] + COUNTERS, path)
        yield (int(r["t_ns"]), r["path"], {c: int(r[c]) for c in COUNTERS},
               [int(r["read_calls_%s_bytes" % s]) for s in SIZE_LABELS],
               [int(r["write_calls_%s_bytes" % s]) for s in SIZE_LABELS])


def syscall_rows(path):
    """tdm-syscalls rows: (t_ns, path, write?, calls, bytes, bucket)."""
    for r in rows(path):
        need(r, ["t_ns", "path", "syscall", "size_le_bytes", "calls", "bytes"], path)
        sc = r["syscall"]
        if sc not in READ_SYSCALLS and sc not in WRITE_SYSCALLS:
            continue
        yield (int(r["t_ns"]), r["path"], sc in WRITE_SYSCALLS,
               int(r["calls"]), int(r["bytes"]),
               size_bucket(max(int(r["size_le_bytes"]), 0)))


def record_rows(path):
    """Device records: (t_fault_ns, page, nand_pages_own, prefetch_issued,
    write).  A miss that waited on another fill (waited_loading=1: a
    duplicate fault or a prefetched page still loading) read nothing
    itself."""
    for r in rows(path):
        need(r, ["page", "t_fault_ns", "waited_loading", "prefetch_issued",
                 "write"], path)
        yield (int(r["t_fault_ns"]), int(r["page"]),
               0 if r["waited_loading"] == "1" else 1,
               r["prefetch_issued"] == "1", r["write"] == "1")


def extents(path, dev_offset, page_size):
    """tdm-extents rows as sorted (first_page, last_page, path)."""
    out = []
    for r in rows(path):
        need(r, ["path", "physical_offset_bytes", "length_bytes"], path)
        start = dev_offset + int(r["physical_offset_bytes"])
        length = int(r["length_bytes"])
        if length > 0:
            out.append((start // page_size, (start + length - 1) // page_size,
                        r["path"]))
    out.sort()
    return out


def device_stats_prefetches(path):
    """prefetch_issued from the device's stats (QMP qom-get ... stats, or
    bench/device-stats): the object itself or one level down."""
    with open(path) as f:
        obj = json.load(f)
    for o in [obj] + [v for v in obj.values() if isinstance(v, dict)]:
        if "prefetch_issued" in o:
            return int(o["prefetch_issued"])
    raise SystemExit("tdm-join: %s has no prefetch_issued" % path)


class Fenwick:
    def __init__(self, n):
        self.t = [0] * (n + 1)

    def add(self, i, v):
        i += 1
        while i < len(self.t):
            self.t[i] += v
            i += i & -i

    def prefix(self, i):
        """sum of positions < i"""
        s = 0
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s


def reuse_distances(pages):
    """For each access of @pages (in order): None for the first access of
    a page (cold), else the number of distinct pages accessed since the
    previous access of that page.  O(n log n): a marker at each page's
    latest access; the distance is the markers between the two."""
    tree = Fenwick(len(pages))
    last = {}
    out = []
    for i, p in enumerate(pages):
        j = last.get(p)
        if j is None:
            out.append(None)
        else:
            out.append(tree.prefix(i) - tree.prefix(j + 1))
            tree.add(j, -1)
        tree.add(i, 1)
        last[p] = i
    return out


def reuse_bucket(d):
    """(min, max) of the power-of-two bucket of distance @d: 0, 1, 2-3,
    4-7, ..."""
    if d == 0:
        return 0, 0
    lo = 1 << (d.bit_length() - 1)
    return lo, 2 * lo - 1
