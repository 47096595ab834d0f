#!/usr/bin/python3
"""Evicted pages re-touched (seen by KVM) against misses after eviction (seen
by the device), for one cxl-ssd device of a rig run.

  retouch.py --records records.csv --host host-events.csv --gpa-base ADDR
             --pages N [--prefix NAME_]

Evictions come from the device's records (victim_page, unmapped at
t_unmapped_ns; each record must name all its victims: nvictims <= 1, i.e.
eviction=sync and prefetch=0).  Touches come from L1's kvm:kvm_page_fault
(the guest's access to a page KVM has no mapping for: after MADV_DONTNEED
the MMU notifier zapped it), taken from ftrace2csv.py's kvm_fault rows in
[ADDR, ADDR + N pages).  Both use L1's CLOCK_MONOTONIC.

Per page: an eviction, then the first KVM fault on the page is a re-touch;
then the device's next miss on the page must follow (a miss after
eviction).  Counted separately, and every mismatch in pairing too:
  retouch_without_miss   the guest touched an evicted page and the device
                         never saw the miss before the page's next eviction
                         or the end (a stale mapping would do this)
  miss_without_retouch   a miss after eviction with no KVM fault since the
                         eviction (the device's view and KVM's disagree)
stdout: PREFIX key=value lines.  Exit 1 if a record has several victims.
"""
import argparse
import csv
import sys

PAGE = 4096


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--records", "--host", "--gpa-base"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--pages", type=int, required=True)
    ap.add_argument("--prefix", default="")
    a = ap.parse_args()
    base = int(a.gpa_base, 0)
    ev = []             # (t, order, kind, page): evict < touch < miss at a tie
    multi = 0
    with open(a.records, newline="") as f:
        for r in csv.DictReader(f):
            page = int(r["page"])
            t_fault = int(r["t_fault_ns"])
            ev.append((t_fault, 2, "miss", page))
            nv = int(r["nvictims"])
            if nv > 1:
                multi += 1
            if nv >= 1 and r["victim_page"] != "":
                t_ev = int(r["t_unmapped_ns"]) or int(r["t_decision_end_ns"])
                ev.append((t_ev, 0, "evict", int(r["victim_page"])))
    seen = set()
    with open(a.host, newline="") as f:
        for r in csv.DictReader(f):
            if r["event"] != "kvm_fault":
                continue
            gpa = int(r["arg1"])
            key = (r["t_ns"], gpa)      # async-PF attribution copies a row
            if key in seen or not base <= gpa < base + a.pages * PAGE:
                continue
            seen.add(key)
            ev.append((int(r["t_ns"]), 1, "touch", (gpa - base) // PAGE))
    ev.sort()
    state = {}          # page -> "evicted" | "retouched" | "resident"
    ever_evicted = set()
    n = dict.fromkeys(("misses", "evictions", "kvm_faults", "evictions_retouched",
                       "misses_after_eviction", "retouch_without_miss",
                       "miss_without_retouch"), 0)
    for _, _, kind, page in ev:
        st = state.get(page)
        if kind == "evict":
            n["evictions"] += 1
            if st == "retouched":
                n["retouch_without_miss"] += 1
            state[page] = "evicted"
            ever_evicted.add(page)
        elif kind == "touch":
            n["kvm_faults"] += 1
            if st == "evicted":
                n["evictions_retouched"] += 1
                state[page] = "retouched"
        else:
            n["misses"] += 1
            if page in ever_evicted:
                n["misses_after_eviction"] += 1
                if st == "evicted":
                    n["miss_without_retouch"] += 1
            state[page] = "resident"
    n["retouch_without_miss"] += sum(1 for s in state.values() if s == "retouched")
    n["multi_victim_records"] = multi
    for k, v in n.items():
        print("%s%s=%d" % (a.prefix, k, v))
    if multi:
        print("retouch: %d records evicted several pages (only the first is "
              "named): run with eviction=sync and prefetch=0" % multi,
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
