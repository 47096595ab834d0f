#!/usr/bin/env bash
# TAP: tracing/join.py on hand-made inputs (tests/data/device.csv,
# tests/data/host.csv) with known breakdowns: TCG rows (one with victims,
# one behind a decoy fault outside the window), a BQL row, a KVM row, a row
# whose thread ran before UFFDIO_CONTINUE returned, a row whose victim was
# unmapped after the wake (defer_unmap), two rows that cannot be matched
# (no host fault in the window / no resume), a row mapped inside its own
# wait (delivery=tlb: no host event at all), and a trace that lost a
# switch-in and one that lost a switch-out.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JOIN=$HERE/../join.py
DATA=$HERE/data
tmp=$(mktemp -d /tmp/test-joiner.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$HERE/../../tests/tap.sh"

/usr/bin/python3 "$JOIN" --device "$DATA/device.csv" --host "$DATA/host.csv" \
    --base 0x7f0000000000 -o "$tmp/bd.csv" >"$tmp/out.txt" 2>"$tmp/err.txt"
ok $? "joiner runs on the synthetic input"
sed 's/^/# /' "$tmp/out.txt" "$tmp/err.txt"
kv() { sed -n "s/^$1=//p" "$tmp/out.txt"; }
[ "$(kv breakdown_rows)" = 9 ]; ok $? "breakdown_rows=9 (every record written)"
[ "$(kv breakdown_unmatched)" = 2 ]; ok $? "breakdown_unmatched=2"
[ "$(kv breakdown_unmatched_no_host_fault)" = 1 ] &&
    [ "$(kv breakdown_unmatched_no_resume)" = 1 ]
ok $? "one row without host fault, one without resume"
[ "$(kv breakdown_sum_error_max_pct)" = 0.000000 ]; ok $? "components sum to total exactly"
[ "$(kv breakdown_ran_before_mapped)" = 1 ]; ok $? "ran-before-mapped row counted"
[ "$(kv breakdown_unmap_off_path)" = 1 ]; ok $? "deferred (off-path) unmap row counted"

# seq: delivery bql model unmap nand map resume total handler_tid handler_wake
check_rows() {
    /usr/bin/python3 - "$1" <<'EOF'
import csv, sys
exp = {
    "0": (2000, 0, 400, 1000, 5650, 250, 700, 10000, "200", "500"),
    "6": (1000, 0, 200, 0, 5800, 100, 400, 7500, "", ""),
    "1": (1000, 2000, 500, 0, 6500, 100, 800, 10900, "", ""),
    "4": (2000, 0, 300, 0, 6200, 100, 400, 9000, "", ""),
    "5": (1000, 0, 200, 0, 6800, 100, 200, 8300, "", ""),
    "7": (1000, 0, 200, 0, 6800, 100, 400, 8500, "", ""),
    "8": (0, 0, 200, 0, 6800, 0, 0, 7000, "", ""),
}
cols = ["delivery_ns", "bql_wait_ns", "model_ns", "unmap_ns", "nand_wait_ns",
        "map_ns", "resume_ns", "total_ns", "handler_tid", "handler_wake_ns"]
rows = {r["seq"]: r for r in csv.DictReader(open(sys.argv[1]))}
bad = 0
for seq, e in exp.items():
    r = rows.get(seq)
    got = tuple(r[c] for c in cols) if r else None
    want = tuple(str(x) for x in e)
    good = r is not None and r["matched"] == "1" and got == want
    print("%s seq %s: got %s want %s" % ("MATCH" if good else "DIFF", seq,
                                         got, want))
    bad += not good
for seq, why in (("2", "no_host_fault"), ("3", "no_resume")):
    r = rows.get(seq)
    good = (r is not None and r["matched"] == "0" and
            r["unmatched_reason"] == why and r["delivery_ns"] == "" and
            r["resume_ns"] == "" and r["total_ns"] == "" and
            r["nand_wait_ns"] == "5850")
    print("%s seq %s unmatched (%s)" % ("MATCH" if good else "DIFF", seq, why))
    bad += not good
sys.exit(1 if bad else 0)
EOF
}
check_rows "$tmp/bd.csv" >"$tmp/rows.txt"
ok $? "expected breakdown on every row (TCG, decoy fault, BQL, KVM, early resume, deferred unmap, tlb, unmatched)"
sed 's/^/# /' "$tmp/rows.txt"
grep -q '^8,12,107,3,0,0,0,1,,tlb,91000,98000,' "$tmp/bd.csv"
ok $? "a row mapped inside its wait: host_event=tlb, H = t_fault, R = t_wait_end"

/usr/bin/python3 - "$tmp/bd-percentiles.csv" "$HERE/../../bench/lib" <<'EOF'
import csv, sys
sys.path.insert(0, sys.argv[2])
from components import COMPONENTS as comps
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 10, len(rows)
assert [r["percentile"] for r in rows[:5]] == ["50", "90", "99", "99.9", "99.99"]
m50 = rows[0]
assert m50["kind"] == "marginal" and m50["total_ns"] == "8500", m50
for r in rows[5:]:
    s = sum(float(r[c]) for c in comps)
    assert abs(s - float(r["total_ns"])) <= 0.01 * float(r["total_ns"]), r
EOF
ok $? "percentile table: P50..P99.99, marginal P50 total 8500, at_total rows add up"

/usr/bin/python3 "$JOIN" --device "$DATA/device.csv" --host "$DATA/host.csv" \
    --base 0x7f0000000000 --gpa-base 0x100000000 -o "$tmp/bd2.csv" \
    >"$tmp/out2.txt" && grep -q '^breakdown_matched=7$' "$tmp/out2.txt" &&
    grep -q '^4,8,104,.*,1,,kvm_fault,50000,59000,2000,' "$tmp/bd2.csv"
ok $? "KVM row matched with --gpa-base address check"

/usr/bin/python3 "$JOIN" --device "$DATA/device.csv" --host "$DATA/host.csv" \
    --base 0x7f0000000000 --map-end device -o "$tmp/bd3.csv" >"$tmp/out3.txt" &&
    grep -q '^breakdown_clipped=1$' "$tmp/out3.txt" &&
    grep -q '^breakdown_sum_error_max_pct=0.000000$' "$tmp/out3.txt" &&
    grep -q '^5,10,105,.*,1000,0,200,0,6800,300,0,8300,' "$tmp/bd3.csv"
ok $? "--map-end device: thread ran before t_mapped -> clipped, still sums"

# No --base: the latest fault in the window is taken (row 2 then matches
# its out-of-window fault, row 6 still its real one).
/usr/bin/python3 "$JOIN" --device "$DATA/device.csv" --host "$DATA/host.csv" \
    -o "$tmp/bd4.csv" >"$tmp/out4.txt" &&
    grep -q '^breakdown_unmatched=1$' "$tmp/out4.txt" &&
    grep -q '^6,9,100,.*,fault,12000,19500,' "$tmp/bd4.csv"
ok $? "without --base: latest fault in the window"

# A switch-in the trace did not record (the kernel does not run a
# tracepoint's BPF program every time): tid 300 is woken at 7000 but
# faults again at 9000 with no switch-in between, and the next switch-in
# (20000) is after that; R is unknown, not 20000.  tid 301's switch-out
# was not recorded: it looks on the CPU when woken, but the switch-in at
# 7400, before it does anything itself, is its resume.
head -1 "$DATA/device.csv" >"$tmp/miss.csv"
cat >>"$tmp/miss.csv" <<'EOF'
0,0,300,0,uffd,tcg,0,0,0,0,0,0,0,,1000,0,0,1100,1300,0,6900,6900,6950,7100,0
1,1,301,1,uffd,tcg,0,0,0,0,0,0,0,,1000,0,0,1100,1300,0,6900,6900,6950,7100,0
EOF
cat >"$tmp/miss-host.csv" <<'EOF'
t_ns,event,tid,cpu,arg1,arg2,arg3
500,fault,300,0,139637976743936,4,0
600,waking,400,0,300,1,0
700,switch_out,300,0,400,1,0
7000,waking,300,1,400,0,0
9000,fault,300,0,139637976748032,4,0
9100,switch_out,300,0,0,1,0
20000,switch_in,300,0,0,0,0
500,fault,301,1,139637976748032,4,0
7000,waking,301,1,400,1,0
7400,switch_in,301,1,0,0,0
EOF
/usr/bin/python3 "$JOIN" --device "$tmp/miss.csv" --host "$tmp/miss-host.csv" \
    -o "$tmp/bd6.csv" >"$tmp/out6.txt" &&
    grep -q '^breakdown_unmatched_switch_in_missed=1$' "$tmp/out6.txt" &&
    grep -q '^0,0,300,.*,0,switch_in_missed,' "$tmp/bd6.csv" &&
    grep -q '^1,1,301,.*,1,,fault,500,7400,' "$tmp/bd6.csv"
ok $? "unrecorded switch-in: row unmatched (switch_in_missed); unrecorded switch-out: the switch-in is the resume"
sed 's/^/# /' "$tmp/out6.txt" "$tmp/bd6.csv"

/usr/bin/python3 "$JOIN" --device "$DATA/device.csv" --host /nonexistent \
    -o "$tmp/bd5.csv" >/dev/null 2>"$tmp/err5.txt"
[ $? -ne 0 ] && grep -q nonexistent "$tmp/err5.txt"
ok $? "missing input file: error naming it, non-zero exit"

done_testing
