# sysbench memory: sequential writes over a WL_WSS-byte block (one event =
# one pass) for WL_SECS s.  (rnd mode makes one event block/4 random
# writes: minutes per event once the block exceeds the device cache.)
wl_run() {
    out=$("$@" sysbench memory --threads=1 --memory-block-size="$WL_WSS" \
        --memory-total-size=0 --memory-access-mode=seq --memory-oper=write \
        --time="$WL_SECS" --percentile=99 run)
    echo "$out" | awk '
        /Total operations:/ { gsub(/[()]/, ""); ops = $4 }
        /avg:/ { avg = $2 * 1000 }
        /99th percentile:/ { p99 = $3 * 1000 }
        END { if (ops == "") exit 1; printf "ops_per_s=%s avg_us=%.0f p99_us=%.0f\n", ops, avg, p99 }' ||
        { echo "$out" >&2; exit 1; }
}
