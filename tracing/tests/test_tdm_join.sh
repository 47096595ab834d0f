#!/usr/bin/env bash
# TAP: tracing/tdm-join.py on hand-made inputs with known answers.  Guest
# window 3 s, host window 6 s over the same moments (the host clock runs
# twice as fast: the scaling is tested).  The app read 40960 bytes in
# second 0 (served) and 8192 in second 1 (passed: 2 kernel preads); a row
# past the window is left out.  The device filled pages 10 11 12 (second
# 0), 11 10 (second 1), 13 with prefetch_issued (second 2), a duplicate of
# 10 that waited on the fill (reads nothing), and one record after the
# window: 6 NAND reads + 2 prefetched pages (--prefetch-pages 2) = 32768
# bytes, amplification 32768 / 49152; reuse distances: 11 -> 1 page
# between, 10 -> 2, four cold.  Then per-file attribution with extents,
# the prefetches from the device's stats, the calls from tdm-syscalls only,
# no windows, and the reuse distance against a brute-force count.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
JOIN=$HERE/../tdm-join.py
tmp=$(mktemp -d /tmp/test-tdm-join.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$HERE/../../tests/tap.sh"

G0=1000000000000 H0=5000000000000
buckets() {  # the 13 read then 13 write bucket columns, one call in $1
    local i out=""
    for i in $(seq 0 25); do out="$out,$([ "$i" = "$1" ] && echo 1 || echo 0)"; done
    echo "$out"
}
{
    printf 't_ns,interval_ns,pid,path,dev,inode,read_calls_served,read_calls_passed,read_bytes_served,read_bytes_passed,write_calls_served,write_calls_passed,write_bytes_served,write_bytes_passed'
    for op in read write; do
        for s in 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576; do
            printf ',%s_calls_le_%s_bytes' $op $s
        done
        printf ',%s_calls_gt_1048576_bytes' $op
    done
    echo
    echo "$G0,1000000000,7,/mnt/a,1,2,1,0,40960,0,0,0,0,0$(buckets 7)"
    echo "$((G0 + 1000000000)),1000000000,7,/mnt/a,1,2,0,2,0,8192,0,1,0,100$(buckets 3)"
    echo "$((G0 + 5000000000)),1000000000,7,/mnt/a,1,2,9,0,999,0,0,0,0,0$(buckets 0)"
} >"$tmp/layer.csv"
cat >"$tmp/sys.csv" <<EOF
t_ns,interval_ns,pid,fd,path,syscall,size_le_bytes,calls,bytes
$((G0 + 1000000000)),1000000000,7,3,/mnt/a,pread64,4096,2,8192
$((G0 + 1000000000)),1000000000,7,3,/mnt/a,pwrite64,128,1,100
EOF
rec() {  # T_OFFSET_NS PAGE WAITED PREFETCH
    echo "0,$2,11,0,uffd,tcg,0,0,$4,0,$3,0,0,0,,$((H0 + $1)),0,0,0,0,0,0,0,0,0,0,0"
}
{
    echo "seq,page,tid,vcpu,mode,accel,write,dirty_evict,prefetch_issued,prefetch_hit,waited_loading,compensated,late_wait,nvictims,victim_page,t_fault_ns,t_bql_req_ns,t_bql_acq_ns,t_decision_start_ns,t_decision_end_ns,t_unmapped_ns,t_deadline_ns,t_deadline_model_ns,t_wait_end_ns,t_mapped_ns,t_bql_rel_ns,t_host_fault_ns"
    rec 3000000000 11 0 0     # unsorted on purpose
    rec 1000000000 10 0 0
    rec 1200000000 11 0 0
    rec 1400000000 12 0 0
    rec 1500000000 10 1 0
    rec 3200000000 10 0 0
    rec 5000000000 13 0 1
    rec 7000000000 14 0 0
} >"$tmp/rec.csv"
win=(--guest-window "$G0,$((G0 + 3000000000))" --host-window "$H0,$((H0 + 6000000000))")

run() {  # NAME ARGS...: the joiner's key=value lines in $tmp/NAME.txt
    local name=$1
    shift
    /usr/bin/python3 "$JOIN" --records "$tmp/rec.csv" --page-size 4096 \
        --out "$tmp/$name" "$@" >"$tmp/$name.txt" 2>"$tmp/$name.err"
}
kv() { tr ' ' '\n' <"$tmp/$1.txt" | sed -n "s/^$2=//p"; }
is() {  # NAME KEY WANT
    local got
    got=$(kv "$1" "$2")
    [ "$got" = "$3" ]
    ok $? "$1: $2=$got (want $3)"
}

run full --layer-stats "$tmp/layer.csv" --syscalls "$tmp/sys.csv" \
    --prefetch-pages 2 "${win[@]}"
ok $? "the joiner runs on the layer's rows, the syscalls and the records"
diag "$tmp/full.txt" "$tmp/full.err"
is full app_read_bytes 49152
is full device_read_bytes 32768
is full read_amplification 0.6667
is full read_bandwidth_mb_s_mean 0.011
is full device_fills 6
is full device_prefetch_pages 2
is full records_outside_window 1
is full time_aligned 1
cmp -s "$tmp/full/device_second.csv" - <<'EOF'
second,nand_read_pages,nand_read_bytes,read_bandwidth_mb_s,app_read_bytes,app_read_mb_s,read_amplification
0,3,12288,0.012,40960,0.041,0.3000
1,2,8192,0.008,8192,0.008,1.0000
2,3,12288,0.012,0,0.000,
EOF
ok $? "device_second.csv: NAND pages per guest second (host times scaled), bandwidth, amplification"
diag "$tmp/full/device_second.csv"
cmp -s "$tmp/full/reuse_distance.csv" - <<'EOF'
kind,distance_min_pages,distance_max_pages,reads
cold,,,4
reuse,1,1,1
reuse,2,3,1
EOF
ok $? "reuse_distance.csv: 4 cold, one at 1 page, one at 2-3 pages"
diag "$tmp/full/reuse_distance.csv"
python3 - "$tmp/full/per_file_second.csv" <<'EOF'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert [(x["second"], x["path"]) for x in r] == [("0", "/mnt/a"), ("1", "/mnt/a")], r
assert r[0]["read_bytes_served"] == "40960" and r[0]["read_calls_le_65536_bytes"] == "1"
assert r[1]["read_calls_passed"] == "2" and r[1]["kernel_read_calls"] == "2"
assert r[1]["kernel_read_bytes"] == "8192" and r[1]["read_calls_le_4096_bytes"] == "1"
assert r[1]["write_calls_passed"] == "1" and r[1]["kernel_write_bytes"] == "100"
assert r[0]["kernel_read_calls"] == "0"
EOF
ok $? "per_file_second.csv: served, passed, the kernel's calls and the size buckets per second"

printf 'path,logical_offset_bytes,physical_offset_bytes,length_bytes,flags\n/mnt/a,0,36864,12288,0\n' >"$tmp/ext.csv"
run ext --layer-stats "$tmp/layer.csv" --records "$tmp/rec.csv" \
    --prefetch-pages 2 --extents "$tmp/ext.csv" --dev-offset 4096 "${win[@]}"
ok $? "with extents (pages 10-12 after a 4096-byte device offset)"
grep -qx '/mnt/a,49152,20480,0.4167' "$tmp/ext/per_file.csv" &&
    grep -qx ',0,4096,' "$tmp/ext/per_file.csv"
ok $? "per_file.csv: /mnt/a's 5 fills against its 49152 bytes; page 13 outside any file"
diag "$tmp/ext/per_file.csv"

echo '{"misses": 9, "prefetch_issued": 4}' >"$tmp/stats.json"
run stats --layer-stats "$tmp/layer.csv" --device-stats "$tmp/stats.json" "${win[@]}"
is stats device_read_bytes 40960
is stats prefetch_pages_source device-stats

run sys --syscalls "$tmp/sys.csv" --prefetch-pages 2 "${win[@]}"
is sys app_read_bytes 8192
is sys read_amplification 4.0000

run nowin --layer-stats "$tmp/layer.csv"
is nowin time_aligned 0
is nowin records_outside_window 0
is nowin app_read_bytes 50151
grep -q 'misses issued prefetches, not counted' "$tmp/nowin.err"
ok $? "a prefetching miss without --prefetch-pages or --device-stats is named on stderr"

/usr/bin/python3 "$JOIN" --records "$tmp/rec.csv" --page-size 4096 \
    --out "$tmp/bad" --layer-stats "$tmp/layer.csv" --guest-window 1,2 \
    >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "--guest-window without --host-window is refused"

PYTHONPATH=$HERE/.. /usr/bin/python3 - <<'EOF'
import random
import tdm_inputs as ti
rng = random.Random(7)
pages = [rng.randrange(50) for _ in range(3000)]
got = ti.reuse_distances(pages)
for i, p in enumerate(pages):
    prev = [j for j in range(i) if pages[j] == p]
    want = len(set(pages[prev[-1] + 1:i])) if prev else None
    assert got[i] == want, (i, got[i], want)
assert [ti.reuse_bucket(d) for d in (0, 1, 2, 3, 4, 7, 8)] == \
    [(0, 0), (1, 1), (2, 3), (2, 3), (4, 7), (4, 7), (8, 15)]
EOF
ok $? "reuse distances equal a brute-force count of distinct pages (3000 accesses)"

# tdm-extents (the guest's helper) against filefrag, on this host's disk
if [ ! -x "${TDM_EXTENTS:-}" ]; then
    skip "tdm-extents against filefrag" "TDM_EXTENTS is not set (run it through make)"
elif ! command -v filefrag >/dev/null; then
    skip "tdm-extents against filefrag" "no filefrag (e2fsprogs)"
else
    f=$(mktemp /var/tmp/test-tdm-extents.XXXXXX)
    head -c 3000000 /dev/urandom >"$f"
    "$TDM_EXTENTS" "$f" >"$tmp/ext-got.csv" 2>"$tmp/ext.err"
    rc=$?
    bs=$(filefrag -v "$f" | sed -n 's/.*(\([0-9]*\) blocks of \([0-9]*\) bytes).*/\2/p')
    filefrag -v "$f" | awk -v bs="$bs" -v f="$f" -F'[: .]+' \
        '/^ *[0-9]+: / { printf "%s,%.0f,%.0f,%.0f\n", f, $3 * bs, $5 * bs, ($6 - $5 + 1) * bs }' >"$tmp/ext-want.csv"
    sed 1d "$tmp/ext-got.csv" | cut -d, -f1-4 | cmp -s - "$tmp/ext-want.csv" &&
        [ $rc -eq 0 ] && [ -s "$tmp/ext-want.csv" ]
    ok $? "tdm-extents: the extents filefrag -v lists ($(wc -l <"$tmp/ext-want.csv") on $(stat -f -c %T "$f"))"
    diag "$tmp/ext-got.csv" "$tmp/ext-want.csv" "$tmp/ext.err"
    rm -f "$f"
fi
done_testing
