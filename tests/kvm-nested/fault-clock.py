#!/usr/bin/python3
"""The device's host fault clock under KVM against L1's ftrace.

  fault-clock.py --records records.csv --exits exits.csv --host host-events.csv

For each vCPU miss (vcpu >= 0) the device's t_host_fault_ns should be the
vCPU thread's newest kvm:kvm_exit before the handler read the fault
(t_fault_ns): perf sampled that tracepoint for the device, ftrace for L1's
trace (exits.csv: every kvm_exit, ftrace2csv.py --exits), each with its own
CLOCK_MONOTONIC reading inside the same tracepoint, so the device's stamp
must lie at or after ftrace's for that exit and before the thread's next
exit (fault_clock_same_exit); the gap between the two readings is the rig's
(a TCG vCPU can be preempted between the two probes).  Also counts the misses
whose newest exit is not the NPF exit that started the miss (host-events'
kvm_fault): the vCPU exited again before the handler read the fault, so the
clock starts the miss late.  stdout: fault_clock_* key=value lines.
"""
import argparse
import bisect
import csv


def by_tid(path, event=None):
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if event is None or r["event"] == event:
                out.setdefault(int(r["tid"]), []).append(int(r["t_ns"]))
    for v in out.values():
        v.sort()
    return out


def newest(times, t):
    """(the latest time <= t or None, the one after it or None)"""
    i = bisect.bisect_right(times, t)
    return (times[i - 1] if i else None), (times[i] if i < len(times) else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True)
    ap.add_argument("--exits", required=True)
    ap.add_argument("--host", required=True)
    a = ap.parse_args()
    exits, npf = by_tid(a.exits), by_tid(a.host, "kvm_fault")
    vcpu = clocked = compared = same = later = 0
    diffs = []
    with open(a.records, newline="") as f:
        for r in csv.DictReader(f):
            if int(r["vcpu"]) < 0:
                continue
            vcpu += 1
            th, tf, tid = int(r["t_host_fault_ns"]), int(r["t_fault_ns"]), int(r["tid"])
            if th == 0:
                continue
            clocked += 1
            e, e_next = newest(exits.get(tid, []), tf)
            if e is None:
                continue
            compared += 1
            diffs.append(abs(th - e))
            if e <= th and (e_next is None or th < e_next):
                same += 1
            n = newest(npf.get(tid, []), tf)[0]
            if n is not None and e - n > 0:
                later += 1
    diffs.sort()
    print("fault_clock_vcpu_misses=%d" % vcpu)
    print("fault_clock_clocked=%d" % clocked)
    print("fault_clock_compared=%d" % compared)
    print("fault_clock_same_exit=%d" % same)
    print("fault_clock_max_diff_ns=%d" % (diffs[-1] if diffs else -1))
    print("fault_clock_p50_diff_ns=%d" % (diffs[len(diffs) // 2] if diffs else -1))
    print("fault_clock_p99_diff_ns=%d" % (diffs[len(diffs) * 99 // 100] if diffs else -1))
    print("fault_clock_newer_exit_than_npf=%d" % later)


if __name__ == "__main__":
    main()
