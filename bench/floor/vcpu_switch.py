"""Did two vCPUs miss at the same time?  From a device's per-miss records.

bench-floor's scaling line divides the 2-thread miss latency by the
1-thread one; with bql=on it can show serialisation only if both vCPU
threads ran at once.  MIO's overlap_fraction (guest timestamps, per
sample) cannot tell whether the two vCPUs missed together or took turns,
each running many misses while the other made no progress.  The records
can: in time order, how often the next miss is the other vCPU's.  Two
vCPUs missing at once at equal rates give ~0.5 (poll: 0.50, sigbus: 0.45
in runs here), a fair lock that alternates them ~0.9, and vCPUs taking
turns a few per cent (delivery=tlb bql=on while the BQL let one vCPU take
it back miss after miss: 0.055-0.115; bench/floor/README.md).  The records must be
complete (no records_dropped), and they hold warmup misses as well.
"""

import bisect
import csv

# a miss belongs to a 2-thread phase when the other vCPU missed this close
PHASE_WINDOW_NS = 200_000


def _fault_times(path):
    """{vcpu: sorted fault times (ns)} of the misses taken on vCPU threads."""
    per = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("vcpu") in (None, "", "-1") or not r.get("t_fault_ns"):
                continue
            per.setdefault(r["vcpu"], []).append(int(r["t_fault_ns"]))
    for v in per.values():
        v.sort()
    return per


def vcpu_switch_fraction(path):
    """(fraction, misses): over the misses of the 2-thread phases (the other
    vCPU missed within PHASE_WINDOW_NS), the share of consecutive misses
    taken by different vCPUs; (nan, 0) unless exactly two vCPUs missed."""
    per = _fault_times(path)
    if len(per) != 2:
        return float("nan"), 0
    (va, ta), (vb, tb) = per.items()
    events = []
    for vcpu, mine, other in ((va, ta, tb), (vb, tb, ta)):
        for t in mine:
            j = bisect.bisect_left(other, t - PHASE_WINDOW_NS)
            if j < len(other) and other[j] <= t + PHASE_WINDOW_NS:
                events.append((t, vcpu))
    events.sort()
    if len(events) < 2:
        return float("nan"), len(events)
    switches = sum(1 for a, b in zip(events, events[1:]) if a[1] != b[1])
    return switches / (len(events) - 1), len(events)
