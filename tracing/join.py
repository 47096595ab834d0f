#!/usr/bin/python3
"""Join cxl-ssd per-miss device records with host events into a per-miss
latency breakdown.  Python 3 standard library only.

  join.py --device records.csv --host host-events.csv -o breakdown.csv
          [--percentiles pct.csv] [--base ADDR] [--page-size 4096]
          [--max-gap-ns 1000000000]

Inputs
  records.csv      the device's per-miss CSV (header from
                   cxlssd_record_write_header(); columns found by name)
  host-events.csv  tracing/trace-run output: t_ns,event,tid,cpu,arg1,arg2,arg3
Both use CLOCK_MONOTONIC ns, so they are compared directly.

Matching (per faulting thread, records sorted by t_fault_ns; binary search
in per-thread sorted event lists, O((records + events) log events)):
  host fault H   a `fault` (TCG: exceptions:page_fault_user) or `kvm_fault`
                 (KVM: the kvm_exit before kvm:kvm_page_fault) on the
                 record's tid in (L, t_fault], L = the previous record's
                 resume on that thread (it cannot fault before it ran), or
                 t_fault - max-gap.  With --base (TCG host VA) or
                 --gpa-base (KVM GPA): the earliest such event whose
                 address is in the record's page (retries of the same
                 fault come later); without: the latest.
  resume R       the wake-up of the thread by the handler = first
                 sched_waking/sched_wakeup of tid at or after the last
                 handler stage before the wake (t_wait_end, else
                 t_decision_end, else t_fault); then
                   KVM: first kvm_entry of tid after that wake;
                   TCG: first sched_switch onto tid after that wake, or the
                        wake itself if tid was still on a CPU then.
                        A switch-in comes before anything tid does in its
                        own context (a fault, a switch-out, a wake-up it
                        issues); when such an event comes first, the
                        switch-in was not recorded (the kernel does not
                        run a tracepoint's BPF program every time, and
                        bpftrace is not told, tracing/README.md): R is
                        unknown, unmatched_reason=switch_in_missed.
                 No wake event: first switch-in / kvm_entry after the bound.
Rows without H or R are written with matched=0, empty host-side columns
and unmatched_reason; they are counted, never dropped.
mmio-mode records (mode column "mmio": the miss is served on the vCPU
thread itself, inside the MMIO callback, so there is no host fault, wake
or switch to match): H = t_fault (callback entry), R = t_mapped (callback
done), host_event=mmio; delivery_ns and resume_ns are 0 by construction
(TCG's exit into the callback and its return are not visible to host
tracepoints; bench/breakdown/fig1 adds them from the guest's samples).
Records of misses mapped inside their own wait (t_mapped <= t_wait_end:
delivery=tlb, the vCPU serves its miss in TCG's TLB fill, record.h) are
served on the faulting thread too, without a host fault: H = t_fault
(the fill's entry), R = t_wait_end, host_event=tlb, the mapping inside
nand_wait_ns, delivery_ns, map_ns and resume_ns 0.

Breakdown (ns).  Boundaries in order, absent (0) ones skipped:
  H, t_fault, t_bql_req, t_bql_acq, t_decision_start, t_decision_end,
  t_unmapped, t_wait_end, t_mapped, R
and each interval is charged to the component of the boundary that ends it:
  delivery_ns   H -> t_fault          host fault / guest exit to the
                                      handler reading the uffd event
                                      (kernel fault path, handler wake-up)
  model_ns      t_fault -> t_bql_req, t_bql_acq -> t_decision_end
                                      (routing + model decision); without
                                      BQL t_fault -> t_decision_end
  bql_wait_ns   t_bql_req -> t_bql_acq (0 when the BQL was not taken)
  unmap_ns      t_decision_end -> t_unmapped (0 without victims, and 0
                                      when the victims were unmapped after
                                      t_wait_end/t_mapped: trap
                                      defer_unmap, off the faulter's path;
                                      unmap_off_path=1)
  nand_wait_ns  t_unmapped (or t_decision_end) -> t_wait_end (modeled NAND)
  map_ns        t_wait_end -> the wake of the faulting thread inside
                                      UFFDIO_CONTINUE (--map-end wake, the
                                      default; t_mapped if no wake event
                                      was seen) or t_mapped (--map-end
                                      device)
  resume_ns     that point -> R       (thread back on a CPU / kvm_entry)
  total_ns      H -> R
Boundaries are clamped into [previous boundary, R] first (clipped=1 when
that changed anything, e.g. the thread ran again before UFFDIO_CONTINUE
returned), so the components partition [H, R] and sum to total_ns exactly;
the sum is still checked and the largest relative error reported.

Also written (informational, not part of the sum): handler_tid and
handler_wake_ns (H -> the faulting thread's sched_waking of the handler,
empty with a busy-polling handler), wait_overshoot_ns (t_wait_end -
t_deadline).

Percentile table (--percentiles, default <out>-percentiles.csv): rows
  kind=marginal, percentile=P: each column's own P-th percentile over
      matched rows (these do not add up);
  kind=at_total, percentile=P: mean of each component over the matched rows
      whose total ranks within a window around the total's P-th percentile
      (+-10% of the tail mass above P, at least one row); these add up to
      the window's mean total: use them for stacked bars.
stdout: breakdown_rows=, breakdown_matched=, breakdown_unmatched=,
breakdown_sum_error_max_pct=, and more key=value lines.
"""

import argparse
import bisect
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench", "lib"))
import stats  # noqa: E402
from components import COMPONENTS  # noqa: E402

PERCENTILES = [50.0, 90.0, 99.0, 99.9, 99.99]

# (record column, component charged for the interval ending there)
DEVICE_BOUNDARIES = [
    ("t_fault_ns", "delivery_ns"),
    ("t_bql_req_ns", "model_ns"),
    ("t_bql_acq_ns", "bql_wait_ns"),
    ("t_decision_start_ns", "model_ns"),
    ("t_decision_end_ns", "model_ns"),
    ("t_unmapped_ns", "unmap_ns"),
    ("t_wait_end_ns", "nand_wait_ns"),
    ("t_mapped_ns", "map_ns"),
]

OUT_COLUMNS = (["seq", "page", "tid", "vcpu", "write", "waited_loading",
                "nvictims", "matched", "unmatched_reason", "host_event",
                "t_host_fault_ns", "t_resume_ns"] + COMPONENTS +
               ["total_ns", "sum_error_pct", "clipped", "handler_tid",
                "handler_wake_ns", "wait_overshoot_ns", "t_wake_ns",
                "mapped_after_wake_ns", "unmap_off_path"])


def die(msg):
    sys.stderr.write("join: %s\n" % msg)
    sys.exit(2)


def open_csv(path):
    """Returns (file positioned after the header, header index dict)."""
    try:
        f = open(path, "r")
    except OSError as e:
        die("%s: %s" % (path, e))
    header = f.readline().strip().split(",")
    return f, {name: i for i, name in enumerate(header)}


def need(idx, cols, path):
    missing = [c for c in cols if c not in idx]
    if missing:
        die("%s: missing column(s) %s" % (path, ", ".join(missing)))


def to_int(s):
    return int(s) if s else 0


class Host:
    """Per-thread sorted event lists."""

    def __init__(self):
        self.faults = defaultdict(list)      # tid -> [(t, addr, kind)]
        self.wakes = defaultdict(list)       # woken tid -> [t]
        self.wakers = defaultdict(list)      # waker tid -> [(t, woken)]
        self.sw_in = defaultdict(list)       # tid -> [t]
        self.sw_out = defaultdict(list)      # tid -> [t]
        self.own = defaultdict(list)         # tid -> [t] in its context
        self.entries = defaultdict(list)     # tid -> [t] (kvm_entry)
        self.counts = defaultdict(int)

    def load(self, path):
        f, idx = open_csv(path)
        need(idx, ["t_ns", "event", "tid", "arg1"], path)
        it, ie, itid, ia1 = idx["t_ns"], idx["event"], idx["tid"], idx["arg1"]
        width = max(it, ie, itid, ia1) + 1
        faults, wakes, wakers = self.faults, self.wakes, self.wakers
        sw_in, sw_out, entries = self.sw_in, self.sw_out, self.entries
        own = self.own
        counts = self.counts
        with f:
            for line in f:
                r = line.rstrip("\n").split(",")
                if len(r) < width or line.startswith("#"):
                    if line.strip():
                        counts["malformed"] += 1
                    continue
                ev = r[ie]
                counts[ev] += 1
                if ev == "switch_in":
                    sw_in[int(r[itid])].append(int(r[it]))
                elif ev == "switch_out":
                    sw_out[int(r[itid])].append(int(r[it]))
                    own[int(r[itid])].append(int(r[it]))
                elif ev == "waking" or ev == "wakeup":
                    t = int(r[it])
                    tid = int(r[itid])
                    wakes[tid].append(t)
                    if ev == "waking":
                        wakers[int(r[ia1])].append((t, tid))
                        own[int(r[ia1])].append(t)
                elif ev == "fault" or ev == "kvm_fault":
                    faults[int(r[itid])].append((int(r[it]), int(r[ia1]), ev))
                    if ev == "fault":
                        own[int(r[itid])].append(int(r[it]))
                elif ev == "kvm_entry":
                    entries[int(r[itid])].append(int(r[it]))
        for d in (self.faults, self.wakers):
            for v in d.values():
                v.sort()
        for d in (self.wakes, self.sw_in, self.sw_out, self.entries,
                  self.own):
            for v in d.values():
                v.sort()


def first_at_or_after(lst, t):
    i = bisect.bisect_left(lst, t)
    return lst[i] if i < len(lst) else None


def first_after(lst, t):
    i = bisect.bisect_right(lst, t)
    return lst[i] if i < len(lst) else None


def last_before(lst, t):
    i = bisect.bisect_left(lst, t)
    return lst[i - 1] if i > 0 else None


def match_fault(host, tid, page, lo, hi, bases, page_size):
    """Host fault on tid in (lo, hi]: see the module doc.  bases maps the
    event kind to the address of page 0 (or None: no address check)."""
    lst = host.faults.get(tid)
    if not lst:
        return None
    i = bisect.bisect_right(lst, (lo, float("inf"), ""))
    j = bisect.bisect_right(lst, (hi, float("inf"), ""))
    if i >= j:
        return None
    for k in range(i, j):
        t, addr, kind = lst[k]
        base = bases.get(kind)
        if base is not None and addr >= base and \
                (addr - base) // page_size == page:
            return lst[k]
    for k in range(j - 1, i - 1, -1):
        if bases.get(lst[k][2]) is None:
            return lst[k]
    return None


def match_resume(host, tid, bound, hi, kvm):
    """Returns (R, wake_t, why): R None when not found, why then the
    unmatched reason (no_resume or switch_in_missed)."""
    wake = first_at_or_after(host.wakes.get(tid, []), bound)
    if wake is not None and wake > hi:
        wake = None
    start = wake if wake is not None else bound
    if kvm and host.entries.get(tid):
        r = first_at_or_after(host.entries[tid], start)
        if r is not None and r <= hi:
            return r, wake, None
        return None, wake, "no_resume"
    sin = host.sw_in.get(tid, [])
    r = first_at_or_after(sin, start)
    if r is not None and r > hi:
        r = None
    if wake is None:
        return r, None, (None if r is not None else "no_resume")
    # the first thing tid did itself after the wake: it ran by then
    ran = first_after(host.own.get(tid, []), wake)
    if r is not None and (ran is None or r <= ran):
        return r, wake, None
    # Was the thread still on the CPU when woken?
    lo_ = last_before(host.sw_out.get(tid, []), wake)
    li = last_before(sin, wake)
    if lo_ is None or (li is not None and li > lo_):
        return wake, wake, None     # never switched out: runs on at once
    return None, wake, ("switch_in_missed" if ran is not None and
                        ran <= hi else "no_resume")


def unmap_off_path(rec):
    """Victims unmapped after the wait (trap defer_unmap): not on the
    faulter's path."""
    u = rec["t_unmapped_ns"]
    later = rec["t_wait_end_ns"] or rec["t_mapped_ns"]
    return bool(u and later and u > later)


def mapped_in_wait(rec):
    """Mapped inside its own wait (delivery=tlb's TLB fill): t_mapped comes
    before t_wait_end, the one order no other path records."""
    m, w = rec["t_mapped_ns"], rec["t_wait_end_ns"]
    return bool(m and w and m <= w)


def breakdown(rec, H, R, map_end=None):
    """Partition [H, R] (or [t_fault, last stage] when H/R is None).
    map_end replaces t_mapped as the end of map_ns when given."""
    comp = dict.fromkeys(COMPONENTS, 0)
    pts = []
    for c, name in DEVICE_BOUNDARIES:
        t = rec[c]
        if c == "t_mapped_ns" and map_end is not None:
            t = map_end
        if c == "t_unmapped_ns" and unmap_off_path(rec):
            continue
        if c == "t_mapped_ns" and mapped_in_wait(rec):
            continue
        if t:
            pts.append((t, name))
    if H is not None:
        pts.insert(0, (H, None))
    if R is not None:
        pts.append((R, "resume_ns"))
    clipped = False
    end = R if R is not None else max(t for t, _ in pts)
    prev = pts[0][0]
    for t, name in pts[1:]:
        c = min(max(t, prev), end)
        if c != t:
            clipped = True
        comp[name] += c - prev
        prev = c
    if H is None:
        comp["delivery_ns"] = None
    if R is None:
        comp["resume_ns"] = None
    return comp, clipped


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", action="append", required=True,
                    help="device per-miss records CSV (repeatable)")
    ap.add_argument("--host", action="append", required=True,
                    help="host events CSV from trace-run (repeatable)")
    ap.add_argument("-o", "--out", default="breakdown.csv")
    ap.add_argument("--percentiles", default=None)
    ap.add_argument("--base", default=None,
                    help="host virtual address of page 0 (checks TCG "
                    "`fault` addresses)")
    ap.add_argument("--gpa-base", default=None,
                    help="guest-physical address of page 0 (checks KVM "
                    "`kvm_fault` addresses)")
    ap.add_argument("--page-size", type=int, default=4096)
    ap.add_argument("--map-end", choices=("wake", "device"), default="wake",
                    help="end of map_ns: the kernel's wake-up of the "
                    "faulting thread (default; t_mapped if no wake event) "
                    "or the device's t_mapped")
    ap.add_argument("--max-gap-ns", type=int, default=1000000000,
                    help="max host fault -> t_fault and wake -> resume")
    a = ap.parse_args()
    if a.percentiles is None:
        stem = a.out[:-4] if a.out.endswith(".csv") else a.out
        a.percentiles = stem + "-percentiles.csv"
    return a


def load_records(paths):
    """Every record of the device CSVs: the stage timestamps as ints (0
    when absent), the identifying columns as strings."""
    recs = []
    want = ["seq", "page", "tid", "t_fault_ns"] + [c for c, _ in
                                                   DEVICE_BOUNDARIES]
    tcols = [c for c, _ in DEVICE_BOUNDARIES] + ["t_deadline_ns"]
    scols = ("seq", "page", "tid", "vcpu", "write", "waited_loading",
             "nvictims", "mode")
    for p in paths:
        f, idx = open_csv(p)
        need(idx, want, p)
        tix = [(c, idx.get(c)) for c in tcols]
        six = [(c, idx.get(c)) for c in scols]
        with f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                r = line.rstrip("\n").split(",")
                n = len(r)
                rec = {c: (int(r[i]) if i is not None and i < n and r[i]
                           else 0) for c, i in tix}
                for c, i in six:
                    rec[c] = r[i] if i is not None and i < n else ""
                recs.append(rec)
    return recs


class Match:
    """One record joined with the host events (the breakdown.csv row)."""

    def __init__(self, rec, hf, H, R, wake, map_end, why_r):
        self.why = []
        if H is None:
            self.why.append("no_host_fault")
        if R is None:
            self.why.append(why_r)
        self.matched = not self.why
        self.hf, self.H, self.R, self.wake = hf, H, R, wake
        self.map_end = map_end if self.matched else None
        self.comp, self.clipped = breakdown(rec, H if self.matched else None,
                                            R if self.matched else None,
                                            self.map_end)
        self.handler_tid = self.handler_wake_ns = self.tail = ""


def match_record(host, rec, tid, lo, a, bases):
    """Host fault, resume and wake of one record (see the module doc)."""
    F = rec["t_fault_ns"]
    bound = rec["t_wait_end_ns"] or rec["t_decision_end_ns"] or F
    if rec["mode"] == "mmio":
        # served on the faulting thread itself: the record spans it
        R = rec["t_mapped_ns"] or None
        return ((F, 0, "mmio"), F, R, None, bound,
                None if R else "no_resume")
    if mapped_in_wait(rec):
        # the vCPU served it in its TLB fill: runs again when its wait ends
        return ((F, 0, "tlb"), F, rec["t_wait_end_ns"], None, bound, None)
    hf = match_fault(host, tid, int(rec["page"] or 0), lo, F, bases,
                     a.page_size)
    kvm = bool(hf and hf[2] == "kvm_fault")
    R, wake, why_r = match_resume(host, tid, bound, bound + a.max_gap_ns,
                                  kvm or (not hf and tid in host.entries))
    return hf, (hf[0] if hf else None), R, wake, bound, why_r


def match_all(host, recs, a, bases, counts):
    """A Match per record, per faulting thread in t_fault order (each
    record's window starts where the previous one on its thread ended);
    @counts gathers the key=value figures."""
    by_tid = defaultdict(list)
    for i, rec in enumerate(recs):
        by_tid[int(rec["tid"] or 0)].append(i)
    results = [None] * len(recs)
    for tid, ids in by_tid.items():
        ids.sort(key=lambda i: recs[i]["t_fault_ns"])
        prev_end = None
        for i in ids:
            rec = recs[i]
            F = rec["t_fault_ns"]
            lo = F - a.max_gap_ns
            if prev_end is not None and prev_end > lo:
                lo = prev_end
            hf, H, R, wake, bound, why_r = match_record(host, rec, tid, lo,
                                                        a, bases)
            map_end = wake if a.map_end == "wake" else None
            m = Match(rec, hf, H, R, wake, map_end, why_r)
            for w in m.why:
                counts["unmatched_" + w] += 1
            if m.map_end is not None:
                counts["map_end_wake"] += 1
            # previous record's end for the next fault window on this tid
            prev_end = (R if R is not None else
                        (wake if wake is not None else bound))
            if hf and hf[2] == "fault":
                counts["addr_off"][hf[1] - int(rec["page"] or 0) * a.page_size] += 1
            if m.matched:
                wl = host.wakers.get(tid, [])
                k = bisect.bisect_left(wl, (H, -1))
                if k < len(wl) and wl[k][0] <= F:
                    m.handler_tid, m.handler_wake_ns = wl[k][1], wl[k][0] - H
            if m.matched and wake is not None and rec["t_mapped_ns"]:
                m.tail = rec["t_mapped_ns"] - wake
                if m.tail < 0:
                    counts["mapped_before_wake"] += 1
                elif rec["t_mapped_ns"] > R:
                    counts["ran_before_mapped"] += 1
            results[i] = m
    return results


def cell(v):
    return "" if v is None else str(v)


def write_breakdown(path, recs, results, counts):
    """breakdown.csv in t_fault order; returns the matched rows'
    components + total, for the percentile table."""
    matched_rows = []
    err_max = 0.0
    try:
        out = open(path, "w")
    except OSError as e:
        die("%s: %s" % (path, e))
    with out:
        out.write(",".join(OUT_COLUMNS) + "\n")
        for i in sorted(range(len(recs)),
                        key=lambda i: (recs[i]["t_fault_ns"], i)):
            rec, m = recs[i], results[i]
            total = err = ""
            if m.matched:
                total = m.R - m.H
                s = sum(m.comp[c] for c in COMPONENTS)
                e = (abs(s - total) * 100.0 / total) if total > 0 else (
                    0.0 if s == total else 100.0)
                err_max = max(err_max, e)
                counts["clipped"] += m.clipped
                matched_rows.append([m.comp[c] for c in COMPONENTS] + [total])
                err = "%.6f" % e
            overshoot = ""
            if rec["t_wait_end_ns"] and rec["t_deadline_ns"]:
                overshoot = rec["t_wait_end_ns"] - rec["t_deadline_ns"]
            row = [rec["seq"], rec["page"], rec["tid"], rec["vcpu"],
                   rec["write"], rec["waited_loading"], rec["nvictims"],
                   "1" if m.matched else "0", "+".join(m.why),
                   (m.hf[2] if m.hf else ""),
                   cell(m.H) if m.matched else "",
                   cell(m.R) if m.matched else ""]
            row += [cell(m.comp[c]) for c in COMPONENTS]
            row += [str(total), err, "1" if m.clipped else "0",
                    str(m.handler_tid), str(m.handler_wake_ns),
                    str(overshoot), cell(m.wake) if m.matched else "",
                    str(m.tail), "1" if unmap_off_path(rec) else "0"]
            out.write(",".join(row) + "\n")
    counts["sum_error_max_pct"] = err_max
    return matched_rows


def write_percentiles(path, rows):
    """The percentile table (module doc) of the matched rows."""
    names = COMPONENTS + ["total_ns"]
    n = len(rows)
    columns = [sorted(r[j] for r in rows) for j in range(len(names))]
    with open(path, "w") as f:
        f.write("kind,percentile,n," + ",".join(names) + "\n")
        for p in PERCENTILES:
            f.write("marginal,%g,%d," % (p, n) + ",".join(
                str(stats.percentile(col, p)) if n else "" for col in columns)
                + "\n")
        for p, k, means in stats.at_total(rows, len(names), PERCENTILES):
            f.write("at_total,%g,%d," % (p, k) + ",".join(
                "%.1f" % v if k else "" for v in means) + "\n")
    return columns


def report(recs, rows, columns, counts, host, a, base):
    """The key=value lines on stdout."""
    print("breakdown_rows=%d" % len(recs))
    print("breakdown_matched=%d" % len(rows))
    print("breakdown_unmatched=%d" % (len(recs) - len(rows)))
    for w in ("no_host_fault", "no_resume", "switch_in_missed"):
        print("breakdown_unmatched_%s=%d" % (w, counts["unmatched_" + w]))
    print("breakdown_clipped=%d" % counts["clipped"])
    print("breakdown_map_end_wake=%d" % counts["map_end_wake"])
    print("breakdown_unmap_off_path=%d" % sum(1 for r in recs
                                              if unmap_off_path(r)))
    print("breakdown_ran_before_mapped=%d" % counts["ran_before_mapped"])
    print("breakdown_mapped_before_wake=%d" % counts["mapped_before_wake"])
    print("breakdown_sum_error_max_pct=%.6f" % counts["sum_error_max_pct"])
    addr_off = counts["addr_off"]
    if addr_off and base is None:
        off, cnt = max(addr_off.items(), key=lambda kv: kv[1])
        print("breakdown_inferred_base=0x%x (%d of %d host faults)" %
              (off, cnt, sum(addr_off.values())))
    ev = ",".join("%s:%d" % kv for kv in sorted(host.counts.items()))
    print("breakdown_host_events=%s" % ev)
    names = COMPONENTS + ["total_ns"]
    for c in ("delivery_ns", "resume_ns", "total_ns"):
        col = columns[names.index(c)]
        if col:
            print("breakdown_p50_%s=%s" % (c, stats.percentile(col, 50)))
    print("breakdown_out=%s breakdown_percentiles=%s" % (a.out, a.percentiles))


def main():
    a = parse_args()
    base = int(a.base, 0) if a.base else None
    bases = {"fault": base,
             "kvm_fault": int(a.gpa_base, 0) if a.gpa_base else None}
    host = Host()
    for p in a.host:
        host.load(p)
    recs = load_records(a.device)
    counts = defaultdict(int, addr_off=defaultdict(int))
    results = match_all(host, recs, a, bases, counts)
    rows = write_breakdown(a.out, recs, results, counts)
    columns = write_percentiles(a.percentiles, rows)
    report(recs, rows, columns, counts, host, a, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
