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


def _fault_times(path, pick=None):
    """{vcpu: sorted fault times (ns)} of the misses taken on vCPU threads;
    with @pick, in the same pass, also [pick(row)] over those rows where it
    is not None."""
    per, picked = {}, []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("vcpu") in (None, "", "-1") or not r.get("t_fault_ns"):
                continue
            per.setdefault(r["vcpu"], []).append(int(r["t_fault_ns"]))
            if pick and (x := pick(r)) is not None:
                picked.append(x)
    for v in per.values():
        v.sort()
    return (per, picked) if pick else per


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
            if _in_pair_phase(t, other):
                events.append((t, vcpu))
    events.sort()
    if len(events) < 2:
        return float("nan"), len(events)
    switches = sum(1 for a, b in zip(events, events[1:]) if a[1] != b[1])
    return switches / (len(events) - 1), len(events)


def _in_pair_phase(t, other):
    """True when a miss at @t has one of the other vCPU's (sorted @other)
    within PHASE_WINDOW_NS: it belongs to a 2-thread phase."""
    j = bisect.bisect_left(other, t - PHASE_WINDOW_NS)
    return j < len(other) and other[j] <= t + PHASE_WINDOW_NS


def wait_overrun_us_p50(path):
    """(alone, together): P50 in us of how long a clean read miss's NAND
    wait ended after its deadline (t_wait_end_ns - t_deadline_ns), over the
    vCPU misses with no other vCPU missing nearby and over those of the
    2-thread phases; nan where there are none.  A wait spins to its
    deadline, so a late end is time the spinning thread lost: at background
    eviction the evictor, running on the CPU a lone vCPU leaves free, shoots
    down that vCPU's TLB mid-wait.  Clean reads only: the chase's measured
    phase (the build's dirty misses write back in their wait)."""
    def clean_read(r):
        if (r.get("write") != "0" or r.get("dirty_evict") != "0"
                or not r.get("t_wait_end_ns") or not r.get("t_deadline_ns")):
            return None
        return (r["vcpu"], int(r["t_fault_ns"]),
                (int(r["t_wait_end_ns"]) - int(r["t_deadline_ns"])) / 1000.0)
    per, rows = _fault_times(path, clean_read)
    if len(per) != 2:
        return float("nan"), float("nan")
    alone, together = [], []
    for vcpu, t, late in rows:
        other = next(v for k, v in per.items() if k != vcpu)
        (together if _in_pair_phase(t, other) else alone).append(late)

    def p50(v):
        return sorted(v)[(len(v) - 1) // 2] if v else float("nan")
    return p50(alone), p50(together)
