#!/usr/bin/env bash
# test-mio.sh: end-to-end TAP tests of MIO on host memory (anon and a
# file).  MIO=path of the binary under test (default: build/bench/mio);
# MIO_STATIC=path of the static guest build (optional, smoke-tested);
# MIO_ASAN=1 when MIO is the sanitizer build (errors abort the run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
MIO=${MIO:-$here/../../build/bench/mio}
MIO_STATIC=${MIO_STATIC:-}
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-mio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$here/../../tests/tap.sh"

# run NAME ARGS...: stdout in $tmp/NAME.out, stderr in .err, status in rc
run() {
    local name=$1; shift
    "$MIO" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    if [ "$rc" -eq 86 ] || grep -q 'Sanitizer\|runtime error:' "$tmp/$name.err"; then
        echo "# sanitizer report in $name:"; diag "$tmp/$name.err"
    fi
    return 0
}
# kv NAME KEY [LINE-PREFIX]: value of KEY in the summary line
kv() {
    local prefix=${3:-mio:}
    awk -v k="$2" -v p="$prefix" '$1 == p {
        for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' \
        "$tmp/$1.out" | head -1
}
# monotonic NAME [PREFIX]: p50<=p90<=p99<=p999<=p9999<=max on every line
monotonic() {
    local prefix=${2:-mio:}
    awk -v p="$prefix" 'BEGIN { bad = 0; seen = 0 } $1 == p { seen++
        for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] + 0 }
        if (!(v["min_ns"] <= v["p50_ns"] && v["p50_ns"] <= v["p90_ns"] &&
              v["p90_ns"] <= v["p99_ns"] && v["p99_ns"] <= v["p999_ns"] &&
              v["p999_ns"] <= v["p9999_ns"] && v["p9999_ns"] <= v["max_ns"] &&
              v["p50_ns"] > 0)) bad = 1 }
        END { exit (bad || !seen) }' "$tmp/$1.out"
}
fails() { [ "$rc" -ne 0 ]; }
status_is() { [ "$rc" -eq "$1" ]; }

[ -x "$MIO" ] || { echo "Bail out! $MIO not built"; exit 1; }

# --- sequential chain, stride 64, all output files ---------------------
run seq --target anon --wss-bytes 4M --stride 64 --pattern seq \
    --samples 5000 --raw "$tmp/seq.raw" --hist "$tmp/seq.hist" \
    --cdf "$tmp/seq.cdf" --summary-csv "$tmp/seq.csv" --summary
ok $rc "seq stride 64 runs (exit 0)"
[ "$(kv seq chain_check)" = ok ]; ok $? "seq chain check ok"
[ "$(kv seq pattern)" = seq ] && [ "$(kv seq stride)" = 64 ]; ok $? "seq summary echoes pattern and stride"
[ "$(kv seq samples)" = 5000 ] && [ "$(kv seq samples_total)" = 5000 ]; ok $? "seq sample count as requested"
monotonic seq; ok $? "seq percentiles monotonic"
t=$(kv seq timer); { [ "$t" = tsc ] || [ "$t" = clock ]; }; ok $? "timer reported ($t, tsc_ghz=$(kv seq tsc_ghz))"
[ "$(head -1 "$tmp/seq.raw")" = thread,ns_per_load ] && [ "$(wc -l <"$tmp/seq.raw")" -eq 5001 ] &&
    tail -n +2 "$tmp/seq.raw" | awk '!/^0,[0-9]+(\.[0-9]+)?$/ { exit 1 }'
ok $? "raw file: header + 5000 lines of thread 0 and a number"
head -1 "$tmp/seq.hist" | grep -q '^latency_ns_lower,latency_ns_upper,count' &&
    [ "$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$tmp/seq.hist")" = 5000 ]
ok $? "histogram: header with units, counts sum to 5000"
[ "$(head -1 "$tmp/seq.cdf")" = percentile,latency_ns ] &&
    awk -F, 'NR > 1 && $2 + 0 < prev { exit 1 } NR > 1 { prev = $2 + 0 }' "$tmp/seq.cdf"
ok $? "cdf: header, non-decreasing"
head -1 "$tmp/seq.csv" | grep -q '^scope,pattern,threads,wss_bytes,stride_bytes,samples,.*p50_ns' &&
    [ "$(wc -l <"$tmp/seq.csv")" -eq 3 ] && grep -q '^all,seq,1,4194304,64,5000,' "$tmp/seq.csv"
ok $? "summary csv: header with units, rows all + thread0"
p50=$(kv seq p50_ns)
csv_p50=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "p50_ns") c = i }
                   $1 == "all" { print $c }' "$tmp/seq.csv")
[ "$p50" = "$csv_p50" ]; ok $? "summary csv p50 matches the summary line ($p50)"

# --- random chain, stride 4096, two threads ----------------------------
run rand2 --target anon --wss-bytes 8M --stride 4096 --pattern rand \
    --threads 2 --samples 3000 --raw "$tmp/rand2.raw" --summary-csv "$tmp/rand2.csv"
ok $rc "rand stride 4096 threads 2 runs"
[ "$(kv rand2 chain_check)" = ok ] && [ "$(kv rand2 threads)" = 2 ]; ok $? "rand threads 2 chain check ok"
[ "$(grep -c '^mio-thread: ' "$tmp/rand2.out")" -eq 2 ] &&
    [ "$(grep -c 'chain_check=ok' "$tmp/rand2.out")" -eq 3 ]; ok $? "per-thread lines, each chain ok"
# Both threads stop when the first has its 3000; only the overlap window's
# samples are reported (the per-thread lines' counts add up to them).
k=$(kv rand2 samples_total) taken=$(kv rand2 samples_taken) of=$(kv rand2 overlap_fraction)
per=$(awk '$1 == "mio-thread:" { for (i = 2; i <= NF; i++) if ($i ~ /^samples=/) { split($i, a, "="); s += a[2] } }
           END { print s + 0 }' "$tmp/rand2.out")
[ -n "$k" ] && [ "$taken" -ge 3000 ] && [ "$taken" -le 6000 ] && [ "$k" -le "$taken" ] &&
    [ "$per" = "$k" ] && [ "$(wc -l <"$tmp/rand2.raw")" -eq $((k + 1)) ] &&
    awk -v f="$of" -v k="$k" -v t="$taken" 'BEGIN { exit !(f >= 0 && f <= k / t + 1e-4) }'
ok $? "2 threads: $k of $taken samples in the overlap window (overlap_fraction=$of), raw and per-thread counts agree"
# The raw file's thread column: thread 0's rows, then thread 1's, as many
# as the per-thread lines report.
raw_counts=$(awk -F, 'NR > 1 { if ($1 < last) bad = 1; last = $1; n[$1]++ }
                      END { if (bad) print "unordered"; else print n[0] + 0, n[1] + 0 }' "$tmp/rand2.raw")
line_counts=$(awk '$1 == "mio-thread:" { for (i = 2; i <= NF; i++) if ($i ~ /^samples=/) { split($i, a, "="); printf "%s%s", sep, a[2]; sep = " " } }' "$tmp/rand2.out")
[ "$raw_counts" = "$line_counts" ]; ok $? "raw file's thread column matches the per-thread counts ($raw_counts)"
[ "$k" -eq 0 ] || monotonic rand2; ok $? "merged percentiles monotonic"
[ "$(kv rand2 nodes_per_thread)" = 1024 ]; ok $? "threads get disjoint halves (1024 nodes of 4 KiB each)"
grep -q '^thread1,' "$tmp/rand2.csv"; ok $? "summary csv has per-thread rows"

run rand64 --wss-bytes 2M --stride 64 --pattern rand --samples 2000 --loads-per-sample 16
ok $rc "rand stride 64, 16 loads per sample"
[ "$(kv rand64 chain_check)" = ok ] && [ "$(kv rand64 loads_per_sample)" = 16 ]; ok $? "rand stride 64 chain check ok"
monotonic rand64; ok $? "rand stride 64 percentiles monotonic"

# --- --miss-ns: the samples at or above a threshold, on their own -------
# threshold: halfway between the median of the same chase run before and
# the next larger sample value, so samples fall on both sides and none on
# the threshold (samples come in whole timer ticks: a threshold on a tick
# would split a tie by digits the summary does not print)
run missref --target anon --wss-bytes 8M --stride 4096 --pattern rand --samples 3000 \
    --raw "$tmp/missref.raw"
miss_ns=$(tail -n +2 "$tmp/missref.raw" | cut -d, -f2 | sort -g |
    awk '{ v[NR] = $1 + 0 } END { m = v[int((NR + 1) / 2)]
        for (i = 1; i <= NR; i++) if (v[i] > m + 0.01) { n = v[i]; break }
        if (n == "") n = m + 1
        printf "%.3f", (m + n) / 2 }')
run missns --target anon --wss-bytes 8M --stride 4096 --pattern rand \
    --samples 3000 --miss-ns "$miss_ns" --raw "$tmp/missns.raw" \
    --summary-csv "$tmp/missns.csv"
ok $rc "--miss-ns $miss_ns runs"
misses=$(kv missns misses); total=$(kv missns samples_total)
tail -n +2 "$tmp/missns.raw" | cut -d, -f2 | sort -g |
    awk -v x="$miss_ns" -v m="$misses" -v n="$total" -v f="$(kv missns miss_fraction)" \
        -v p="$(kv missns miss_p50_ns)" '{ v = $1 + 0
            if (v >= x + 0.01) hi++; if (v >= x - 0.01) lo++
            if (v >= x) a[++k] = v }
        END { r = int((k + 1) / 2)      # nearest rank of the median
              exit !(m >= hi && m <= lo && NR == n && m > 0 && m < n &&
                     (f - m / n) ^ 2 < 1e-8 && (a[r] - p) ^ 2 < 1e-4) }'
ok $? "--miss-ns: misses=$misses of $total are the raw samples >= $miss_ns ns, miss_fraction and miss_p50_ns=$(kv missns miss_p50_ns) theirs"
awk -v p="$(kv missns p50_ns)" -v mp="$(kv missns miss_p50_ns)" -v x="$miss_ns" \
    'BEGIN { exit !(mp >= x && mp >= p) }'
ok $? "--miss-ns: miss_p50_ns >= the threshold and >= p50_ns of all samples"
csv_m=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "misses") c = i }
                 $1 == "all" { print $c }' "$tmp/missns.csv")
[ "$csv_m" = "$misses" ] && [ "$(grep -c '^thread0,' "$tmp/missns.csv")" = 1 ] &&
    awk -F, 'NR > 1 && $NF == "" { exit 1 }' "$tmp/missns.csv" &&
    awk -F, '$NF != "" && NR > 1 { exit 1 }' "$tmp/seq.csv"
ok $? "--miss-ns: summary csv misses column ($csv_m), empty without --miss-ns"
run missbad --miss-ns 0
status_is 2 && grep -q -- "--miss-ns '0'" "$tmp/missbad.err"; ok $? "--miss-ns 0 rejected, the option named"

# --- reproducibility ---------------------------------------------------
for s in 7a:7 7b:7 8:8; do
    run "seed${s%%:*}" --wss-bytes 1M --stride 256 --pattern rand --seed "${s#*:}" \
        --samples 100 --warmup-passes 0 --threads 2
done
h7a=$(kv seed7a chain_hash) h7b=$(kv seed7b chain_hash) h8=$(kv seed8 chain_hash)
[ -n "$h7a" ] && [ "$h7a" = "$h7b" ]; ok $? "same seed, same random chain ($h7a)"
[ -n "$h8" ] && [ "$h7a" != "$h8" ]; ok $? "other seed, other random chain ($h8)"
run seqs1 --wss-bytes 1M --pattern seq --seed 1 --samples 100
run seqs2 --wss-bytes 1M --pattern seq --seed 2 --samples 100
[ "$(kv seqs1 chain_hash)" = "$(kv seqs2 chain_hash)" ]; ok $? "sequential chain does not depend on the seed"

# --- options -------------------------------------------------------------
run clock --wss-bytes 1M --samples 1000 --timer clock
[ "$rc" -eq 0 ] && [ "$(kv clock timer)" = clock ]; ok $? "--timer clock falls back to clock_gettime"
monotonic clock; ok $? "clock-timed percentiles monotonic"
run store --wss-bytes 2M --stride 128 --samples 2000 --store-ratio 0.5 --warmup-passes 2
[ "$rc" -eq 0 ] && [ "$(kv store chain_check)" = ok ] && [ "$(kv store store_ratio)" = 0.5 ]
ok $? "--store-ratio 0.5 keeps the chain intact"
run store1 --wss-bytes 2M --stride 4096 --samples 2000 --store-ratio 1 --pattern seq
[ "$rc" -eq 0 ] && [ "$(kv store1 chain_check)" = ok ]; ok $? "--store-ratio 1"
run ratio --wss-ratio 0.5 --cache-bytes 8M --samples 100
[ "$(kv ratio wss_bytes)" = 4194304 ]; ok $? "--wss-ratio 0.5 of 8 MiB = 4 MiB"
run pin --wss-bytes 2M --threads 2 --pin --samples 500 --subtract-overhead
[ "$rc" -eq 0 ] && [ "$(kv pin overhead_subtracted)" = 1 ]; ok $? "--pin and --subtract-overhead"
run app1 --wss-bytes 1M --samples 100 --summary-csv "$tmp/app.csv" --append
run app2 --wss-bytes 1M --samples 100 --summary-csv "$tmp/app.csv" --append --threads 2
[ "$(grep -c '^scope,' "$tmp/app.csv")" -eq 1 ] && [ "$(wc -l <"$tmp/app.csv")" -eq 6 ]
ok $? "--append: one header, rows of both runs"
run prog --wss-bytes 32M --stride 64 --warmup-passes 4 --samples 200000 --progress 0.05
[ "$rc" -eq 0 ] && grep -q '^mio: progress: ' "$tmp/prog.err"; ok $? "progress lines on stderr"

run file --target "$tmp/chase.img" --wss-bytes 4M --stride 4096 --samples 1000
[ "$rc" -eq 0 ] && [ "$(kv file target_kind)" = file ] && [ "$(kv file chain_check)" = ok ]
ok $? "file target (MAP_SHARED)"

run broken --wss-bytes 1M --threads 2 --samples 100 --inject-chain-break
[ "$rc" -eq 3 ] && [ "$(kv broken chain_check)" = fail ] &&
    grep -q 'thread 0: chain check FAILED' "$tmp/broken.err"
ok $? "a broken chain is reported (chain_check=fail, exit 3)"

# --- interleaved baseline ---------------------------------------------
run ilv --target anon --baseline anon --wss-bytes 2M --stride 64 --samples 400 \
    --loads-per-sample 50 --thp never --summary-csv "$tmp/ilv-t.csv" --raw "$tmp/ilv-t.raw" \
    --baseline-summary-csv "$tmp/ilv-b.csv" --baseline-raw "$tmp/ilv-b.raw" \
    --baseline-cdf "$tmp/ilv-b.cdf" --baseline-hist "$tmp/ilv-b.hist"
ok $rc "--baseline anon runs (exit 0)"
[ "$(kv ilv chain_check)" = ok ] && [ "$(kv ilv chain_check mio-baseline:)" = ok ] &&
    [ -n "$(kv ilv chain_hash)" ] && [ "$(kv ilv chain_hash)" = "$(kv ilv chain_hash mio-baseline:)" ]
ok $? "baseline chain identical to the target's ($(kv ilv chain_hash mio-baseline:))"
[ "$(kv ilv samples_total mio-baseline:)" = 400 ] && [ "$(kv ilv pairs mio-interleave:)" = 400 ] &&
    [ "$(wc -l <"$tmp/ilv-t.raw")" -eq 401 ] && [ "$(wc -l <"$tmp/ilv-b.raw")" -eq 401 ]
ok $? "target and baseline: 400 samples each"
[ -s "$tmp/ilv-b.cdf" ] && [ -s "$tmp/ilv-b.hist" ] && [ "$(head -1 "$tmp/ilv-b.csv")" = "$(head -1 "$tmp/ilv-t.csv")" ] &&
    grep -q '^all,rand,1,2097152,64,400,50,.*,anon,.*,never,1.0000,,,,,,$' "$tmp/ilv-b.csv" &&
    [ "$(head -1 "$tmp/ilv-b.cdf")" = percentile,latency_ns ] &&
    [ "$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$tmp/ilv-b.hist")" = 400 ]
ok $? "baseline files: same schema as the target's"
monotonic ilv mio-baseline: && [ "$(kv ilv interleaved_with)" = anon ]; ok $? "baseline summary line"
bp50=$(kv ilv p50_ns mio-baseline:)
[ "$(kv ilv baseline_p50_ns mio-interleave:)" = "$bp50" ] &&
    [ "$(kv ilv target_p50_ns mio-interleave:)" = "$(kv ilv p50_ns)" ]
ok $? "mio-interleave line pairs the two p50s (ratio_p50=$(kv ilv ratio_p50 mio-interleave:))"
run ilvf --target "$tmp/ilv.img" --baseline anon --threads 2 --wss-bytes 1M --stride 4096 \
    --samples 200 --store-ratio 0.5 --progress 0.001
[ "$rc" -eq 0 ] && [ "$(kv ilvf target_kind)" = file ] && [ "$(kv ilvf target_kind mio-baseline:)" = anon ] &&
    [ "$(grep -c '^mio-baseline-thread: ' "$tmp/ilvf.out")" -eq 2 ] &&
    [ "$(kv ilvf chain_hash)" = "$(kv ilvf chain_hash mio-baseline:)" ]
ok $? "file target + anon baseline, 2 threads, stores"
run ilvbrk --baseline anon --wss-bytes 1M --samples 100 --inject-chain-break
[ "$rc" -eq 3 ] && [ "$(kv ilvbrk chain_check)" = fail ] && ! grep -q '^mio-baseline:' "$tmp/ilvbrk.out"
ok $? "a broken target chain still fails the run with a baseline (exit 3)"

# --- usage errors ---------------------------------------------------------
for bad in "--stride 100" "--stride 8192" "--stride 32" "--pattern zigzag" \
           "--wss-ratio 1" "--store-ratio 1.5" "--threads 0" "--samples 0" \
           "--wss-bytes 4M --wss-ratio 1 --cache-bytes 1M" "--verify-overlap" \
           "--baseline-raw x" "--verify --baseline anon" "--bogus"; do
    # shellcheck disable=SC2086
    run bad $bad
    status_is 2; ok $? "usage error: $bad"
done
run nodax --target /dev/dax-mio-test-missing --wss-bytes 2M
[ "$rc" -eq 4 ] && [ ! -e /dev/dax-mio-test-missing ]; ok $? "missing /dev target: error, no file created"

# --- verify ----------------------------------------------------------------
run v1 --verify --wss-bytes 8M --threads 2 --verify-passes 2
[ "$rc" -eq 0 ] && [ "$(kv v1 mismatches mio-verify:)" = 0 ] && [ "$(kv v1 pages mio-verify:)" = 2048 ]
ok $? "verify disjoint, 2 threads, 2 passes: 0 mismatches"
run v2 --verify --wss-bytes 4M --threads 3 --verify-overlap
[ "$rc" -eq 0 ] && [ "$(kv v2 mismatches mio-verify:)" = 0 ] && [ "$(kv v2 mode mio-verify:)" = overlap ]
ok $? "verify overlap, 3 threads: 0 mismatches"
run v3 --verify --wss-bytes 4M --threads 2 --inject-corruption
[ "$rc" -eq 1 ] && [ "$(kv v3 mismatches mio-verify:)" = 1 ]; ok $? "verify detects an injected corruption (exit 1)"
run v4 --verify --wss-bytes 4M --threads 2 --verify-overlap --inject-corruption --verify-passes 2
[ "$rc" -eq 1 ] && [ "$(kv v4 mismatches mio-verify:)" = 1 ]; ok $? "overlap verify detects it too (1 over 2 passes)"
grep -q 'mio-verify: mismatch pass=1 offset=0x' "$tmp/v4.err"; ok $? "mismatch details on stderr"
run v5 --verify --target "$tmp/verify.img" --wss-bytes 4M --threads 2 --verify-passes 3
[ "$rc" -eq 0 ] && [ "$(kv v5 mismatches mio-verify:)" = 0 ]; ok $? "verify on a file target"
run v6 --verify --target "$tmp/verify.img" --wss-bytes 2M --offset 1M --threads 1
[ "$rc" -eq 0 ] && [ "$(kv v6 bytes mio-verify:)" = 2097152 ]; ok $? "verify with --offset"

# --- static guest binary ----------------------------------------------------
if [ -n "$MIO_STATIC" ]; then
    file_out=$(file -L "$MIO_STATIC" 2>/dev/null || echo unknown)
    case $file_out in *"statically linked"*|unknown) st=0 ;; *) st=1 ;; esac
    ok $st "guest binary is statically linked"
    MIO=$MIO_STATIC run static --wss-bytes 2M --threads 2 --samples 500
    [ "$rc" -eq 0 ] && [ "$(kv static chain_check)" = ok ]; ok $? "static binary runs a chase"
    MIO=$MIO_STATIC run static_v --verify --wss-bytes 2M --threads 2
    [ "$rc" -eq 0 ] && [ "$(kv static_v mismatches mio-verify:)" = 0 ]; ok $? "static binary runs --verify"
fi

# Any sanitizer report fails the run.
if cat "$tmp"/*.err 2>/dev/null | grep -q 'Sanitizer\|runtime error:'; then
    ok 1 "no sanitizer reports"
elif [ "${MIO_ASAN:-0}" = 1 ]; then
    ok 0 "no sanitizer reports"
fi
done_testing
