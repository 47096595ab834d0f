#!/usr/bin/env bash
# TAP: tracing/tdm-syscalls (bpftrace on the syscalls tracepoints) counts
# exactly the read/write calls a program made: syscall_workload makes known
# calls of every kind (through dup'ed fds too, one failing, one at the end
# of the file) and prints them; the CSV summed over intervals and fds must
# equal that list call for call and byte for byte, with nothing counted for
# its pipe and stdin.  Then the same program under the tdm layer (test
# switch, 1 ms interval rows): the calls the kernel saw are the ones the
# layer's interval rows say it passed.  SKIPs, with the reason, without
# root or a bpftrace that can attach.
# Env: TRACING_SYSCALL_WORKLOAD (the program), TDM_LIB (libtdm.so).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TR=$HERE/..
WL=${TRACING_SYSCALL_WORKLOAD:-}
. "$HERE/../../tests/tap.sh"

[ -x "$WL" ] || skip_all "TRACING_SYSCALL_WORKLOAD is not set (run it through make)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root for bpftrace"
tmp=$(mktemp -d /tmp/test-tdm-syscalls.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$TR/install-deps.sh" >"$tmp/deps.txt" 2>&1 ||
    skip_all "bpftrace not installable: $(tail -1 "$tmp/deps.txt")"
if ! timeout 60 bpftrace -e 'BEGIN { printf("attached\n"); exit(); }' \
        >"$tmp/probe.txt" 2>&1 || ! grep -q attached "$tmp/probe.txt"; then
    skip_all "bpftrace cannot attach here: $(grep -v RLIMIT "$tmp/probe.txt" | head -2 | tr '\n' ' ')"
fi

# sum_rows CSV PREFIX: path,syscall,size_le_bytes,calls,bytes summed over
# the rows of files under PREFIX (columns found by name), sorted
sum_rows() {
    python3 - "$1" "$2" <<'EOF'
import csv, sys
sums = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["path"].startswith(sys.argv[2]):
        k = (r["path"], r["syscall"], int(r["size_le_bytes"]))
        c, b = sums.get(k, (0, 0))
        sums[k] = (c + int(r["calls"]), b + int(r["bytes"]))
for k in sorted(sums):
    print("%s,%s,%d,%d,%d" % (k + sums[k]))
EOF
}

# traced NAME CMD...: CMD traced by tdm-syscalls -p (held on a FIFO until
# bpftrace is attached, under its final pid: the filter keeps other
# processes' opens out of the maps), its output in $tmp/NAME.out, the CSV
# in $tmp/NAME.csv, tdm-syscalls' in $tmp/NAME.txt
traced() {
    local name=$1 wpid
    shift
    rm -f "$tmp/go" && mkfifo "$tmp/go"
    ( read -r _ <"$tmp/go"; exec "$@" >"$tmp/$name.out" ) &
    wpid=$!
    "$TR/tdm-syscalls" -p "$wpid" -o "$tmp/$name.csv" -- sh -c \
        'echo go >"$0"; while kill -0 "$1" 2>/dev/null; do sleep 0.05; done' \
        "$tmp/go" "$wpid" >"$tmp/$name.txt" 2>&1
    local rc=$?
    wait "$wpid" || return 1
    return $rc
}

mkdir -p "$tmp/w"
traced sys "$WL" "$tmp/w"
rc=$?
cp "$tmp/sys.out" "$tmp/expected.csv"
mv "$tmp/sys.txt" "$tmp/out.txt"
[ $rc -eq 0 ] && grep -q 'tdm_syscalls_begin_ns=[0-9][0-9]* tdm_syscalls_end_ns=[0-9][0-9]* tdm_syscalls_rows=[1-9]' "$tmp/out.txt"
ok $? "tdm-syscalls ran the workload (status $rc): $(tail -1 "$tmp/out.txt")"
head -1 "$tmp/sys.csv" | grep -qx 't_ns,interval_ns,pid,fd,path,syscall,size_le_bytes,calls,bytes'
ok $? "the CSV's header names its columns with their units"
sum_rows "$tmp/sys.csv" "$tmp/w/" >"$tmp/got.txt"
sum_rows <(sed '1i path,syscall,size_le_bytes,calls,bytes' "$tmp/expected.csv") "$tmp/w/" >"$tmp/want.txt"
n=$(wc -l <"$tmp/want.txt")
[ "$n" -ge 15 ] && cmp -s "$tmp/got.txt" "$tmp/want.txt"
ok $? "every read/write call of the workload counted exactly ($n kinds, $(wc -l <"$tmp/expected.csv") calls; by path, syscall and size)"
cmp -s "$tmp/got.txt" "$tmp/want.txt" || diff "$tmp/want.txt" "$tmp/got.txt" | diag
grep -q ',"[^"]*/w/b,1\.dat",write,262144,1,196608$' "$tmp/sys.csv"
ok $? "a path with a comma is quoted in the CSV"
! awk -F, 'NR > 1 && $5 == ""' "$tmp/sys.csv" | grep -q .
ok $? "no row without a path (the pipe and stdin were not opened while tracing)"
awk -F, 'NR > 1 && ($1 % $2 != 0 || $2 != 1000000000) { bad = 1 } END { exit bad }' "$tmp/sys.csv"
ok $? "every row's t_ns is the start of a 1 s interval"

# with the layer: what the kernel saw is what the layer passed
if [ -f "${TDM_LIB:-}" ]; then
    rm -rf "$tmp/w" && mkdir -p "$tmp/w"
    traced sys2 env LD_PRELOAD="$TDM_LIB" TDM_ALLOW_NONDAX=1 \
        TDM_STATS_INTERVALS="$tmp/iv.csv" TDM_STATS_INTERVAL_MS=1 "$WL" "$tmp/w"
    ok $? "the workload under the layer, traced: $(tail -1 "$tmp/sys2.txt")"
    python3 - "$tmp/sys2.csv" "$tmp/iv.csv" "$tmp/w/" >"$tmp/cmp.txt" <<'EOF'
import csv, sys
kernel, layer = {}, {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["path"].startswith(sys.argv[3]):
        op = "write" if r["syscall"].startswith(("write", "pwrite")) else "read"
        k = (r["path"], op)
        kernel[k] = kernel.get(k, 0) + int(r["calls"])
for r in csv.DictReader(open(sys.argv[2], newline="")):
    if not r["path"].startswith(sys.argv[3]):
        continue
    for op in ("read", "write"):
        k = (r["path"], op)
        layer[k] = layer.get(k, 0) + int(r[op + "_calls_passed"])
        layer.setdefault(("served",), 0)
        layer[("served",)] += int(r[op + "_calls_served"])
served = layer.pop(("served",), 0)
layer = {k: v for k, v in layer.items() if v}
print("kernel", sorted(kernel.items()), "layer passed", sorted(layer.items()),
      "served", served)
sys.exit(0 if kernel == layer and served > 0 else 1)
EOF
    ok $? "the kernel's calls on each file are the layer's passed ones ($(cat "$tmp/cmp.txt"))"
else
    skip "layer cross-check" "TDM_LIB is not set"
fi
done_testing
