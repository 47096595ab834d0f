# memcached with its slabs on the target; memcaslap (libmemcached-tools,
# node 0) sets WL_WSS bytes of WL_VALUE-byte values and reads them (half
# sets, half gets: every set is a new item, every get hits one).
wl_run() {
    "$@" memcached -u root -d -p 11211 -U 0 -m $((WL_WSS * 2 / 1048576 + 16)) -t 1 \
        -P /tmp/memcached.pid
    n=50
    until [ -s /tmp/memcached.pid ]; do n=$((n - 1)); [ "$n" -gt 0 ] || exit 1; sleep 0.2; done
    sleep 0.5
    keys=$((WL_WSS / WL_VALUE))
    printf 'key\n64 64 1\nvalue\n%s %s 1\ncmd\n0 0.5\n1 0.5\n' "$WL_VALUE" "$WL_VALUE" >/tmp/memcaslap.cfg
    out=$(numactl --membind=0 memcaslap -s 127.0.0.1:11211 -T 1 -c 4 -F /tmp/memcaslap.cfg \
        -w "$(((keys / 4 + 1023) / 1024))k" -x "$((keys * 2))" 2>&1) || { echo "$out" >&2; exit 1; }
    pid=$(cat /tmp/memcached.pid)
    kill "$pid"
    while [ -e "/proc/$pid" ]; do sleep 0.1; done
    rm -f /tmp/memcached.pid
    echo "$out" | awk '
        /^get_misses:/ { misses = $2 }
        /^Run time:/ { for (i = 1; i <= NF; i++) if ($i == "TPS:") tps = $(i + 1) }
        END { if (tps == "") exit 1; printf "ops_per_s=%s get_misses=%s\n", tps, misses }' ||
        { echo "$out" >&2; exit 1; }
}
