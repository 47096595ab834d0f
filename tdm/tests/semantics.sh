# Helpers of the layer's tests (tdm/tests/test-tdm-*, tdm/guest/test-tdm-dax):
# POSIX sh, busybox's included.  The caller defines the TAP functions ok
# STATUS WHAT and diag (tests/tap.sh's), and sets TDM_LIB and TDM_OPS (and
# TDM_OPS_DIRECT for a program with the layer linked in).

# tdm_compare WHAT DIR SEED [VAR=VALUE...]: tdm_ops on an empty DIR/plain
# without the layer, and on DIR/layer with it (LD_PRELOAD=$TDM_LIB, or
# $TDM_OPS_DIRECT) and the variables given; one TAP line saying whether
# the traces match byte for byte.  The layered run's statistics land in
# DIR/stats.csv; TDM_COMPARED adds up the calls compared.  TDM_OPS_ARGS:
# more arguments for tdm_ops (--calls N).  A run that has not ended after
# TDM_OPS_TIMEOUT seconds (default 300; a sanitizer build takes under 30)
# is killed and fails the check (exit 124) instead of stalling the tests.
TDM_COMPARED=0
tdm_bounded() {
    if command -v timeout >/dev/null 2>&1; then
        timeout -s KILL "${TDM_OPS_TIMEOUT:-300}" "$@"
        rc_bounded=$?
        # timeout -s KILL: 137 for the kill, as for a crash; say which
        [ "$rc_bounded" -ne 137 ] || rc_bounded=124
        return "$rc_bounded"
    fi
    "$@"
}
tdm_compare() {
    what=$1 dir=$2 seed=$3
    shift 3
    rm -rf "$dir/plain" "$dir/layer" "$dir/stats.csv"
    mkdir -p "$dir/plain" "$dir/layer"
    # shellcheck disable=SC2086 # TDM_OPS_ARGS: words
    tdm_bounded "$TDM_OPS" ${TDM_OPS_ARGS:-} --seed "$seed" \
        --trace "$dir/plain.trace" "$dir/plain" >"$dir/plain.out" 2>&1
    rc_plain=$?
    if [ -n "${TDM_OPS_DIRECT:-}" ]; then
        tdm_bounded env TDM_STATS="$dir/stats.csv" "$@" "$TDM_OPS_DIRECT" \
            ${TDM_OPS_ARGS:-} --seed "$seed" --trace "$dir/layer.trace" \
            "$dir/layer" >"$dir/layer.out" 2>&1
    else
        tdm_bounded env LD_PRELOAD="$TDM_LIB" TDM_STATS="$dir/stats.csv" "$@" \
            "$TDM_OPS" ${TDM_OPS_ARGS:-} --seed "$seed" \
            --trace "$dir/layer.trace" "$dir/layer" >"$dir/layer.out" 2>&1
    fi
    rc=$?
    lines=$(wc -l <"$dir/plain.trace" 2>/dev/null || echo 0)
    if [ "$rc_plain" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$lines" -gt 0 ] &&
        cmp -s "$dir/plain.trace" "$dir/layer.trace"; then
        ok 0 "$what: $lines calls, every result the same with the layer"
        TDM_COMPARED=$((TDM_COMPARED + lines))
        rm -rf "$dir/plain" "$dir/layer"
        return 0
    fi
    ok 1 "$what: the same results with the layer (exit $rc_plain and $rc)"
    case "$rc_plain $rc" in
    *124*) echo "exit 124: killed after ${TDM_OPS_TIMEOUT:-300} s" | diag ;;
    esac
    { diff "$dir/plain.trace" "$dir/layer.trace" | head -20
      tail -5 "$dir/plain.out" "$dir/layer.out"; } 2>&1 | diag
    return 1
}

# tdm_stat CSV COLUMN PATH: the column of PATH's rows, summed where it is
# a number (rows of several processes), else the first row's
tdm_stat() {
    awk -F, -v col="$2" -v path="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
        c && $2 == path { if ($c ~ /^[0-9]+$/) s += $c; else if (v == "") v = $c
                          n++ }
        END { if (!c || !n) print "missing"; else if (v != "") print v
              else print s + 0 }' "$1" 2>/dev/null || echo missing
}

# tdm_has_reason CSV PATH REASON: PATH's passthrough_reasons has REASON
tdm_has_reason() {
    case "|$(tdm_stat "$1" passthrough_reasons "$2")|" in
    *"|$3|"*) return 0 ;;
    esac
    return 1
}

# tdm_intervals_match STATS INTERVALS: the interval rows (TDM_STATS_INTERVALS)
# add up to the rows at exit (TDM_STATS): every read/write count and byte
# column summed over the rows of the processes that wrote rows at exit
# (one that ended in _exit or a signal wrote interval rows only), each
# op's size buckets summed to its calls,
# and every row's t_ns a multiple of its interval_ns.  Prints what differs.
tdm_intervals_match() {
    awk -F, '
        FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
        function v(name) { return $(col[FILENAME, name]) + 0 }
        FILENAME == ARGV[1] {
            for (k = 0; k < 8; k++) total[k] += v(names[k]); pids[$1]; next }
        !(v("pid") in pids) { next }
        {
            for (k = 0; k < 8; k++) iv[k] += v(names[k])
            r0 = col[FILENAME, "read_calls_le_512_bytes"]
            w0 = col[FILENAME, "write_calls_le_512_bytes"]
            for (i = 0; i < 13; i++) { rb += $(r0 + i); wb += $(w0 + i) }
            if (v("t_ns") % v("interval_ns") != 0) { print "unaligned t_ns " $1; bad = 1 }
            rc += v("read_calls_served") + v("read_calls_passed")
            wc += v("write_calls_served") + v("write_calls_passed")
            rows++
        }
        BEGIN { split("read_calls_served read_calls_passed read_bytes_served read_bytes_passed write_calls_served write_calls_passed write_bytes_served write_bytes_passed", a, " ")
                for (k = 0; k < 8; k++) names[k] = a[k + 1] }
        END {
            for (k = 0; k < 8; k++)
                if (total[k] != iv[k]) { print names[k] ": " total[k] " at exit, " iv[k] " in intervals"; bad = 1 }
            if (rb != rc || wb != wc) { print "size buckets " rb "/" wb " != calls " rc "/" wc; bad = 1 }
            if (!rows) { print "no interval rows"; bad = 1 }
            exit bad
        }' "$1" "$2"
}
