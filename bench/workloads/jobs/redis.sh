# redis-server with its data on the target; redis-benchmark (node 0)
# fills WL_WSS bytes of WL_VALUE-byte values, then times WL_OPS random GETs.
wl_run() {
    "$@" redis-server --port 6379 --save '' --appendonly no --daemonize yes \
        --dir /tmp --logfile /tmp/redis.log
    n=50
    until redis-cli ping >/dev/null 2>&1; do
        n=$((n - 1)); [ "$n" -gt 0 ] || { cat /tmp/redis.log >&2; exit 1; }; sleep 0.2
    done
    keys=$((WL_WSS / WL_VALUE))
    numactl --membind=0 redis-benchmark -q -t set -n $((keys * 3)) -r "$keys" -d "$WL_VALUE" -P 32 >/dev/null
    out=$(numactl --membind=0 redis-benchmark --csv -t get -n "$WL_OPS" -r "$keys" -d "$WL_VALUE" -c 4)
    redis-cli shutdown nosave >/dev/null 2>&1 || true
    n=50
    while redis-cli ping >/dev/null 2>&1; do n=$((n - 1)); [ "$n" -gt 0 ] || break; sleep 0.2; done
    # "GET","rps","avg_ms","min_ms","p50_ms","p95_ms","p99_ms","max_ms"
    echo "$out" | awk -F'"' '$2 == "GET" {
        printf "ops_per_s=%s avg_us=%.0f p50_us=%.0f p99_us=%.0f\n", $4, $6 * 1000, $10 * 1000, $14 * 1000 }'
}
