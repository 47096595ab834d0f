# redis-server with its data on the target; redis-cli --pipe (node 0)
# fills WL_WSS bytes of WL_VALUE-byte values, one SET per key of the
# keyspace redis-benchmark's -r draws from (key:%012d), then redis-benchmark
# times WL_OPS random GETs.
wl_run() {
    "$@" redis-server --port 6379 --save '' --appendonly no --daemonize yes \
        --dir /tmp --logfile /tmp/redis.log
    n=50
    until redis-cli ping >/dev/null 2>&1; do
        n=$((n - 1)); [ "$n" -gt 0 ] || { cat /tmp/redis.log >&2; exit 1; }; sleep 0.2
    done
    keys=$((WL_WSS / WL_VALUE))
    fill=/tmp/redis-fill-$keys-$WL_VALUE.resp   # made once (the warm-up run), on node 0
    if [ ! -s "$fill" ]; then
        numactl --membind=0 awk -v n="$keys" -v size="$WL_VALUE" 'BEGIN {
            v = "x"; while (length(v) < size) v = v v; v = substr(v, 1, size)
            for (i = 0; i < n; i++)
                printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n%s\r\n", i, size, v }' >"$fill.tmp"
        mv "$fill.tmp" "$fill"
    fi
    out=$(numactl --membind=0 redis-cli --pipe <"$fill" 2>&1)
    case $out in *"errors: 0, replies: $keys"*) ;; *) echo "redis fill: $out" >&2; exit 1 ;; esac
    out=$(numactl --membind=0 redis-benchmark --csv -t get -n "$WL_OPS" -r "$keys" -d "$WL_VALUE" -c 4)
    redis-cli shutdown nosave >/dev/null 2>&1 || true
    n=50
    while redis-cli ping >/dev/null 2>&1; do n=$((n - 1)); [ "$n" -gt 0 ] || break; sleep 0.2; done
    # "GET","rps","avg_ms","min_ms","p50_ms","p95_ms","p99_ms","max_ms"
    echo "$out" | awk -F'"' '$2 == "GET" {
        printf "ops_per_s=%s avg_us=%.0f p50_us=%.0f p99_us=%.0f\n", $4, $6 * 1000, $10 * 1000, $14 * 1000 }'
}
