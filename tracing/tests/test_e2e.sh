#!/usr/bin/env bash
# TAP: real end-to-end tracing on this host, without QEMU.
# uffd_workload (memfd + userfaultfd MINOR served by the project's trap
# engine, device-schema per-miss records) runs under tracing/trace-run with
# bpftrace; join.py joins the records with the host events.  Checks: every
# record is written (unmatched ones counted), components sum to totals
# within 1%, delivery > 0 on every matched row, resume >= 0 and its median
# > 0, and the host events lie inside the workload's own CLOCK_MONOTONIC
# readings around each access (the same clock).  SKIPs, with the reason, if
# bpftrace cannot be installed or cannot attach here.
# Env: TRACING_WORKLOAD = path of the uffd_workload binary.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TR=$HERE/..
WL=${TRACING_WORKLOAD:-${BUILD:-$HERE/../../build}/tracing/uffd_workload}
tmp=$(mktemp -d /tmp/test-tracing-e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$HERE/../../tests/tap.sh"

[ -x "$WL" ] || { echo "not ok 1 - workload binary $WL missing (make $WL)"; echo "1..1"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip_all "needs root for bpftrace"
"$TR/install-deps.sh" >"$tmp/deps.txt" 2>&1 ||
    skip_all "bpftrace not installable: $(tail -1 "$tmp/deps.txt")"
if ! "$TR/trace-run" --check -a tcg >"$tmp/check.txt" 2>&1; then
    skip_all "tracepoints for the TCG script unavailable: $(tr '\n' ' ' <"$tmp/check.txt")"
fi
# Can bpftrace attach at all (BPF enabled, permissions)?
if ! timeout 60 bpftrace -e 'BEGIN { printf("attached\n"); exit(); }' \
        >"$tmp/probe.txt" 2>&1 || ! grep -q attached "$tmp/probe.txt"; then
    skip_all "bpftrace cannot attach here: $(grep -v RLIMIT "$tmp/probe.txt" | head -2 | tr '\n' ' ')"
fi
ok 0 "trace-run --check: $(cat "$tmp/check.txt")"

# A script whose tracepoint does not exist: named, non-zero exit.
printf 'tracepoint:cxlssd_none:no_such_event { printf("x\\n"); }\n' >"$tmp/bad.bt"
"$TR/trace-run" --check -s "$tmp/bad.bt" >"$tmp/bad.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'cxlssd_none:no_such_event is missing' "$tmp/bad.txt"
ok $? "missing tracepoint is reported, exit 2 (got $rc: $(head -1 "$tmp/bad.txt"))"

if "$TR/trace-run" --check -a kvm >"$tmp/kvmcheck.txt" 2>&1; then
    ok 0 "kvm script tracepoints present: $(cat "$tmp/kvmcheck.txt")"
else
    skip "kvm script tracepoints" "$(tr '\n' ' ' <"$tmp/kvmcheck.txt")"
fi

# run NAME TRACE-RUN-OPTIONS -- WORKLOAD-OPTIONS: trace + join, results in
# $tmp/NAME.*; sets $join_out.
run() {
    local name=$1; shift
    local topts=()
    while [ "$1" != -- ]; do topts+=("$1"); shift; done
    shift
    "$TR/trace-run" "${topts[@]}" -o "$tmp/$name.host.csv" -- "$WL" \
        --records "$tmp/$name.rec.csv" --touches "$tmp/$name.touch.csv" \
        --info "$tmp/$name.info" "$@" >"$tmp/$name.run.txt" 2>&1
    local rc=$?
    diag "$tmp/$name.run.txt"
    [ $rc -eq 0 ] || return $rc
    local base
    base=$(sed -n 's/^base=//p' "$tmp/$name.info")
    /usr/bin/python3 "$TR/join.py" --device "$tmp/$name.rec.csv" \
        --host "$tmp/$name.host.csv" --base "$base" \
        -o "$tmp/$name.bd.csv" >"$tmp/$name.join.txt" 2>&1
    rc=$?
    diag "$tmp/$name.join.txt"
    return $rc
}

# check NAME MIN_MATCHED_PCT: the joined output's invariants
check() {
    /usr/bin/python3 - "$tmp/$1" "$2" "$HERE/../../bench/lib" <<'EOF'
import csv, statistics, sys
sys.path.insert(0, sys.argv[3])
from components import COMPONENTS as comps
pre = sys.argv[1]
min_pct = float(sys.argv[2])
rec = list(csv.DictReader(open(pre + ".rec.csv")))
bd = list(csv.DictReader(open(pre + ".bd.csv")))
touch = {(r["tid"], r["page"]): r for r in csv.DictReader(open(pre + ".touch.csv"))}
out = dict(l.strip().split("=", 1) for l in open(pre + ".join.txt") if "=" in l)
host = open(pre + ".host.csv").read()
fails = []
def need(cond, msg):
    if not cond:
        fails.append(msg)
need(len(rec) > 0, "no device records")
need(len(bd) == len(rec), "rows %d != records %d" % (len(bd), len(rec)))
need(int(out["breakdown_rows"]) == len(rec), "breakdown_rows")
um = sum(1 for r in bd if r["matched"] != "1")
need(int(out["breakdown_unmatched"]) == um, "unmatched count %s != %d" % (out["breakdown_unmatched"], um))
m = [r for r in bd if r["matched"] == "1"]
need(len(m) * 100.0 >= min_pct * len(bd), "only %d of %d matched" % (len(m), len(bd)))
err = 0.0
for r in m:
    s = sum(int(r[c]) for c in comps)
    t = int(r["total_ns"])
    err = max(err, abs(s - t) * 100.0 / t)
need(err < 1.0, "sum error %.3f%%" % err)
need(float(out["breakdown_sum_error_max_pct"]) < 1.0, "reported sum error")
need(all(int(r["delivery_ns"]) > 0 for r in m), "a delivery_ns <= 0")
need(all(int(r["resume_ns"]) >= 0 for r in m), "a resume_ns < 0")
if m:
    med = {c: statistics.median(int(r[c]) for r in m) for c in comps + ["total_ns"]}
    need(med["resume_ns"] > 0, "median resume_ns is 0")
    print("medians_ns " + " ".join("%s=%d" % (c, med[c]) for c in comps + ["total_ns"]))
# same clock: t_pre <= host fault, resume <= t_post, for every matched row
bad = 0
for r in m:
    t = touch.get((r["tid"], r["page"]))
    if t is None:
        continue
    pre, post = int(t["t_pre_ns"]), int(t["t_post_ns"])
    hf, res = int(r["t_host_fault_ns"]), int(r["t_resume_ns"])
    if not (pre <= hf and res <= post):
        bad += 1
        if bad <= 3:
            print("outside: seq=%s tid=%s page=%s host_fault-t_pre=%d "
                  "t_post-resume=%d (ns)" % (r["seq"], r["tid"], r["page"],
                                            hf - pre, post - res))
need(bad == 0, "%d rows with host events outside the workload's own "
     "CLOCK_MONOTONIC readings" % bad)
print("rows=%d matched=%d unmatched=%d sum_err_max_pct=%.6f clock_violations=%d"
      % (len(bd), len(m), um, err, bad))
for f in fails:
    print("FAIL " + f)
sys.exit(1 if fails else 0)
EOF
}

# 1. poll delivery, buffered events (the default mode)
if run poll -a tcg -- --misses 300 --delivery poll; then ok 0 "trace-run + join (poll handler, buffer mode)"; else ok 1 "trace-run + join (poll handler, buffer mode)"; fi
grep -q 'trace_run_lost=0 ' "$tmp/poll.run.txt"; ok $? "no host events lost"
check poll 95 >"$tmp/poll.check" 2>&1; ok $? "poll: all rows written, >=95% matched, sums within 1%, delivery>0, resume>=0, same clock"
diag "$tmp/poll.check"

# 2. BQL-like serialisation, 2 faulting threads (bql rows)
if run bql -a tcg -- --misses 200 --threads 2 --bql --defer-unmap; then ok 0 "trace-run + join (bql, 2 threads)"; else ok 1 "trace-run + join (bql, 2 threads)"; fi
check bql 90 >"$tmp/bql.check" 2>&1; ok $? "bql: invariants hold"
diag "$tmp/bql.check"
/usr/bin/python3 - "$tmp/bql.bd.csv" "$tmp/bql.rec.csv" <<'EOF'
import csv, sys
bd = [r for r in csv.DictReader(open(sys.argv[1])) if r["matched"] == "1"]
rec = {r["seq"]: r for r in csv.DictReader(open(sys.argv[2]))}
withbql = [r for r in bd if rec[r["seq"]]["t_bql_acq_ns"] != "0"]
assert withbql, "no matched rows with BQL timestamps"
assert all(int(r["bql_wait_ns"]) >= 0 for r in withbql)
assert any(int(r["bql_wait_ns"]) > 0 for r in withbql), "bql wait always 0"
print("bql rows %d, max bql_wait_ns %d" % (len(withbql), max(int(r["bql_wait_ns"]) for r in withbql)))
EOF
ok $? "bql rows carry bql_wait_ns"

# 3. streamed events (printf per event)
if run stream -a tcg -m stream -- --misses 100 --delivery busy; then ok 0 "trace-run + join (busy handler, stream mode)"; else ok 1 "trace-run + join (busy handler, stream mode)"; fi
check stream 90 >"$tmp/stream.check" 2>&1; ok $? "stream: invariants hold"
diag "$tmp/stream.check"

# 4. attach to a running process with -p (held until attached)
mkfifo "$tmp/gate"
bash -c 'read -r _ < "$0"; exec "$@"' "$tmp/gate" "$WL" --records "$tmp/att.rec.csv" \
    --touches "$tmp/att.touch.csv" --info "$tmp/att.info" --misses 100 >"$tmp/att.wl.txt" 2>&1 &
wpid=$!
"$TR/trace-run" -a tcg -p "$wpid" -o "$tmp/att.host.csv" >"$tmp/att.run.txt" 2>&1 &
tpid=$!
for _ in $(seq 1 600); do grep -q Attaching "$tmp/att.run.txt" && break; kill -0 $tpid 2>/dev/null || break; sleep 0.1; done
echo go >"$tmp/gate"
wait $wpid
wait $tpid
trc=$?
diag "$tmp/att.run.txt"
/usr/bin/python3 "$TR/join.py" --device "$tmp/att.rec.csv" --host "$tmp/att.host.csv" \
    --base "$(sed -n 's/^base=//p' "$tmp/att.info")" -o "$tmp/att.bd.csv" >"$tmp/att.join.txt" 2>&1
[ $trc -eq 0 ] && check att 90 >"$tmp/att.check" 2>&1
ok $? "attach mode (-p PID): stops when the process exits, invariants hold"
diag "$tmp/att.check" 2>/dev/null

# 5. the kvm script loads and attaches (no KVM guest here: no kvm events)
if [ -s "$tmp/kvmcheck.txt" ] && grep -q 'every tracepoint present' "$tmp/kvmcheck.txt"; then
    "$TR/trace-run" -a kvm -o "$tmp/kvm.host.csv" -- "$WL" --records "$tmp/kvm.rec.csv" \
        --touches "$tmp/kvm.touch.csv" --info "$tmp/kvm.info" --misses 20 >"$tmp/kvm.run.txt" 2>&1 &&
        head -1 "$tmp/kvm.host.csv" | grep -q '^t_ns,event,tid,cpu,arg1,arg2,arg3$' &&
        grep -q 'Attaching' "$tmp/kvm.run.txt"
    ok $? "kvm script attaches and stops with the process"
    diag "$tmp/kvm.run.txt"
fi

done_testing
