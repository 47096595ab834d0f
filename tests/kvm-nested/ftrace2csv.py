#!/usr/bin/python3
"""Convert the rig's L1 ftrace dump (vm-images/nested/l2-run, TRACE=1) into
the host-event CSV of tracing/trace-run (t_ns,event,tid,cpu,arg1,arg2,arg3),
with the semantics of tracing/bpf/kvm.bt, for tracing/join.py.

  ftrace2csv.py --raw trace.raw.gz --txt trace.txt.gz --tids qemu.tids
                [--records records.csv --gpa-base ADDR]... [--exits exits.csv]
                -o host-events.csv

trace.raw and trace.txt are the same buffer read twice: options/raw gives
each event's timestamp in ns (trace_clock mono = CLOCK_MONOTONIC, the
device's clock), the text gives its fields (the text's timestamps have only
microseconds, rounded).  Lines are paired in order; pid, CPU and time must
agree on every pair.

qemu.tids lists QEMU's threads (l2-run wrote /proc/PID/task when tracing
started); threads forked later (sched_process_fork) and threads that ran
kvm events are added.

KVM async page faults: with guest interrupts enabled, KVM hands a fault that
would block to a kworker (async_pf_execute), which takes the userfault, so a
record's tid is that kworker's and it never runs kvm_exit/kvm_entry.  With
--records (and the GPA of that device's page 0), such a record (tid not a
QEMU thread) gets the vCPU's events attributed to its tid: the vCPU's
kvm_fault on the record's page (the latest at or before t_fault_ns) and the
vCPU's first kvm_entry after t_mapped_ns.  join.py then matches it like a
vCPU miss.  --exits writes every kvm_exit as t_ns,tid (the device's fault
clock samples them all).  stdout: key=value counts.
"""
import argparse
import bisect
import csv
import gzip
import re
import sys

CTX = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s?(.*)$")
RAW = re.compile(r"^(\d+) (\d+) (\d+) ")
KV = re.compile(r"(\w+)=(\S+)")
PAGE = 4096


def lines(path):
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            if not line.startswith("#"):
                yield line.rstrip("\n")


def events(raw_path, txt_path):
    """(t_ns, tid, cpu, event, fields) in trace order."""
    out = []
    raw, txt = list(lines(raw_path)), list(lines(txt_path))
    if len(raw) != len(txt):
        sys.exit("ftrace2csv: %s has %d lines, %s %d: not the same buffer"
                 % (raw_path, len(raw), txt_path, len(txt)))
    for n, (r, t) in enumerate(zip(raw, txt)):
        if "LOST" in t and "EVENTS" in t:
            sys.exit("ftrace2csv: the trace lost events (%s): enlarge "
                     "buffer_size_kb" % t.strip())
        mr, mt = RAW.match(r), CTX.match(t)
        if not mr or not mt:
            sys.exit("ftrace2csv: line %d unparsable:\n  %s\n  %s" % (n + 1, r, t))
        tid, cpu, ts = int(mr.group(1)), int(mr.group(2)), int(mr.group(3))
        usec = int(mt.group(4)) * 1000000 + int(mt.group(5))
        if (tid, cpu, (ts + 500) // 1000) != (int(mt.group(2)), int(mt.group(3)), usec):
            sys.exit("ftrace2csv: line %d: raw and text disagree:\n  %s\n  %s"
                     % (n + 1, r, t))
        out.append((ts, tid, cpu, mt.group(6), mt.group(7)))
    return out


def field(rest, name):
    """'name 0x12' or 'name=0x12' style field of an event's text."""
    m = re.search(r"\b%s[ =](\S+)" % name, rest)
    if not m:
        return None
    v = m.group(1).rstrip(",")
    if re.match(r"^0x[0-9a-fA-F]+$", v):
        return int(v, 16)
    return int(v) if re.match(r"^-?\d+$", v) else v


def convert(evs, ours):
    out = []
    exit_t = {}
    pending = set()
    entries = {}          # vCPU tid -> sorted kvm_entry times (all)
    faults = {}           # page-aligned GPA -> [(t_exit, tid, cpu, gpa, err, dt)]
    for t, tid, cpu, ev, rest in evs:
        if ev == "sched_process_fork" and field(rest, "pid") in ours:
            ours.add(field(rest, "child_pid"))
        elif ev.startswith("kvm_"):
            ours.add(tid)
    for t, tid, cpu, ev, rest in evs:
        if ev == "kvm_exit":
            exit_t[tid] = t
        elif ev == "kvm_page_fault":
            gpa, err = field(rest, "address"), field(rest, "error_code")
            te = exit_t.get(tid, t)
            pending.add(tid)
            row = (te, "kvm_fault", tid, cpu, gpa, err, t - te)
            out.append(row)
            faults.setdefault(gpa - gpa % PAGE, []).append(row)
        elif ev == "kvm_entry":
            entries.setdefault(tid, []).append(t)
            if tid in pending:
                pending.discard(tid)
                out.append((t, "kvm_entry", tid, cpu, field(rest, "vcpu") or 0, 0, 0))
        elif ev == "sched_waking" and tid in ours:
            out.append((t, "waking", field(rest, "pid"), cpu, tid,
                        field(rest, "target_cpu") or 0, 0))
        elif ev == "sched_wakeup" and field(rest, "pid") in ours:
            out.append((t, "wakeup", field(rest, "pid"), cpu, tid,
                        field(rest, "target_cpu") or 0, 0))
        elif ev == "sched_switch":
            prev, nxt = field(rest, "prev_pid"), field(rest, "next_pid")
            if prev in ours:
                state = field(rest, "prev_state")
                out.append((t, "switch_out", prev, cpu, nxt,
                            0 if state in ("R", "R+") else 1, 0))
            if nxt in ours:
                out.append((t, "switch_in", nxt, cpu, prev, 0, 0))
    return out, entries, faults


def attribute(rows, records, base, ours, entries, faults, stats):
    """Give async-PF records (tid not QEMU's) their vCPU's fault and entry."""
    with open(records, newline="") as f:
        for r in csv.DictReader(f):
            tid = int(r["tid"])
            if tid in ours:
                continue
            stats["async_pf_records"] += 1
            gpa = base + int(r["page"]) * PAGE
            t_fault, t_mapped = int(r["t_fault_ns"]), int(r["t_mapped_ns"])
            cands = [x for x in faults.get(gpa, []) if x[0] <= t_fault]
            if not cands:
                stats["async_pf_no_vcpu_fault"] += 1
                continue
            te, _, vtid, cpu, fgpa, err, dt = cands[-1]
            ents = entries.get(vtid, [])
            i = bisect.bisect_right(ents, t_mapped)
            if i == len(ents):
                stats["async_pf_no_vcpu_entry"] += 1
                continue
            rows.append((te, "kvm_fault", tid, cpu, fgpa, err, dt))
            rows.append((ents[i], "kvm_entry", tid, cpu, 0, 0, 0))
            stats["async_pf_attributed"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--txt", required=True)
    ap.add_argument("--tids", required=True)
    ap.add_argument("--records", action="append", default=[])
    ap.add_argument("--gpa-base", action="append", default=[])
    ap.add_argument("--exits")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if len(a.records) != len(a.gpa_base):
        sys.exit("ftrace2csv: give one --gpa-base per --records")
    with open(a.tids) as f:
        ours = {int(x) for x in f.read().split()}
    if not ours:
        sys.exit("ftrace2csv: %s lists no QEMU thread" % a.tids)
    evs = events(a.raw, a.txt)
    rows, entries, faults = convert(evs, ours)
    stats = dict.fromkeys(("async_pf_records", "async_pf_attributed",
                           "async_pf_no_vcpu_fault", "async_pf_no_vcpu_entry"), 0)
    for rec, base in zip(a.records, a.gpa_base):
        attribute(rows, rec, int(base, 0), ours, entries, faults, stats)
    rows.sort(key=lambda x: x[0])
    with open(a.out, "w") as f:
        f.write("t_ns,event,tid,cpu,arg1,arg2,arg3\n")
        for x in rows:
            f.write("%d,%s,%d,%d,%d,%d,%d\n" % x)
    if a.exits:
        with open(a.exits, "w") as f:
            f.write("t_ns,tid\n")
            for t, tid, _, ev, _ in evs:
                if ev == "kvm_exit":
                    f.write("%d,%d\n" % (t, tid))
    print("ftrace_events=%d" % len(evs))
    print("ftrace_host_events=%d" % len(rows))
    for k, v in stats.items():
        print("ftrace_%s=%d" % (k, v))


if __name__ == "__main__":
    main()
