#!/usr/bin/python3
"""Convert `perf script` output of a system-wide perf recording into the
host-event CSV that tracing/trace-run writes, so that join.py gives the
same breakdown from a perf recording (the perf recipe in README.md).

  perf record -a -k CLOCK_MONOTONIC -e exceptions:page_fault_user \\
      -e sched:sched_waking -e sched:sched_wakeup -e sched:sched_switch \\
      -o perf.data -- <workload>            (or: ... -- sleep N)
  perf script -i perf.data -F comm,pid,tid,cpu,time,event,trace --ns |
      tracing/perf2csv.py --pid PID [--range LO:HI] > host-events.csv

-k CLOCK_MONOTONIC is required: perf's default clock is not the device's.
Events are kept as in uffd-tcg.bt: page faults of PID (in range), wakings
issued by PID's threads, wake-ups/switch-ins of threads seen in PID,
switch-outs of PID's threads; kvm:kvm_exit + kvm:kvm_page_fault +
kvm:kvm_entry are converted too (kvm_fault / kvm_entry, as in kvm.bt).
"""
import argparse
import re
import sys

LINE = re.compile(r"^\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+"
                  r"(\S+):\s*(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def num(s):
    return int(s, 0) if s.startswith("0x") else int(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--range", default=None)
    a = ap.parse_args()
    lo = hi = 0
    if a.range:
        lo, hi = (int(x, 0) for x in a.range.split(":"))
    rows = []
    for line in sys.stdin:
        m = LINE.match(line)
        if m:
            rows.append(m.groups())
    ours = {int(r[2]) for r in rows if int(r[1]) == a.pid}
    out = []
    exit_t = {}
    pending = set()
    for comm, pid, tid, cpu, sec, frac, ev, rest in rows:
        pid, tid, cpu = int(pid), int(tid), int(cpu)
        t = int(sec) * 1000000000 + int(frac.ljust(9, "0")[:9])
        f = dict(FIELD.findall(rest))
        if ev == "exceptions:page_fault_user" and pid == a.pid:
            addr = num(f.get("address", "0"))
            if hi == 0 or lo <= addr < hi:
                out.append((t, "fault", tid, cpu, addr,
                            num(f.get("error_code", "0")), 0))
        elif ev == "sched:sched_waking" and pid == a.pid:
            out.append((t, "waking", int(f["pid"]), cpu, tid,
                        int(f.get("target_cpu", "0")), 0))
        elif ev == "sched:sched_wakeup" and int(f.get("pid", -1)) in ours:
            out.append((t, "wakeup", int(f["pid"]), cpu, tid,
                        int(f.get("target_cpu", "0")), 0))
        elif ev == "sched:sched_switch":
            prev, nxt = int(f.get("prev_pid", -1)), int(f.get("next_pid", -1))
            if pid == a.pid:
                out.append((t, "switch_out", prev, cpu, nxt,
                            0 if f.get("prev_state", "R") in ("R", "R+")
                            else 1, 0))
            if nxt in ours:
                out.append((t, "switch_in", nxt, cpu, prev, 0, 0))
        elif ev == "kvm:kvm_exit" and pid == a.pid:
            exit_t[tid] = t
        elif ev == "kvm:kvm_page_fault" and pid == a.pid:
            gpa = num(f.get("address", f.get("fault_address", "0")))
            if hi == 0 or lo <= gpa < hi:
                te = exit_t.get(tid, t)
                pending.add(tid)
                out.append((te, "kvm_fault", tid, cpu, gpa,
                            num(f.get("error_code", "0")), t - te))
        elif ev == "kvm:kvm_entry" and pid == a.pid and tid in pending:
            pending.discard(tid)
            out.append((t, "kvm_entry", tid, cpu,
                        num(f.get("vcpu", "0")), 0, 0))
    out.sort(key=lambda r: r[0])
    w = sys.stdout.write
    w("t_ns,event,tid,cpu,arg1,arg2,arg3\n")
    for r in out:
        w("%d,%s,%d,%d,%d,%d,%d\n" % r)
    sys.stderr.write("perf2csv: %d events for pid %d (%d threads)\n" %
                     (len(out), a.pid, len(ours)))


if __name__ == "__main__":
    main()
