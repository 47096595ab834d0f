# stress-ng's vm stressor: one worker keeping WL_WSS bytes mapped and
# writing/reading them at random (rand-set) for WL_SECS s; bogo ops/s.
wl_run() {
    rm -f /tmp/sng.yaml
    "$@" stress-ng --vm 1 --vm-bytes "$WL_WSS" --vm-keep --vm-method rand-set \
        --timeout "${WL_SECS}s" --metrics-brief --yaml /tmp/sng.yaml >/tmp/sng.log 2>&1 ||
        { cat /tmp/sng.log >&2; exit 1; }
    ops=$(sed -n 's/.*bogo-ops-per-second-real-time: *//p' /tmp/sng.yaml | head -n1)
    [ -n "$ops" ] || { cat /tmp/sng.log /tmp/sng.yaml >&2; exit 1; }
    echo "ops_per_s=$ops"
}
