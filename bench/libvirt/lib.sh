# Helpers for the bench/libvirt tests (sourced after tests/e2e/lib.sh).
LIBVIRT_DIR=$TOP/bench/libvirt

# libvirt_ready: set up the local daemon (install, configure, start);
# on failure sets LIBVIRT_SKIP to the exact reason and returns 1.
libvirt_ready() {
    local out
    if out=$("$LIBVIRT_DIR/setup" 2>&1); then
        return 0
    fi
    LIBVIRT_SKIP=$(printf '%s\n' "$out" | grep -m1 'NOT READY' |
                   sed 's/^libvirt-setup: NOT READY: //')
    LIBVIRT_SKIP=${LIBVIRT_SKIP:-libvirt setup failed: $(printf '%s' "$out" | tail -n1)}
    return 1
}

# skip_all N REASON: the plan and N skipped tests.
skip_all() {
    local n=$1 i
    echo "1..$n"
    for ((i = 1; i <= n; i++)); do skip "libvirt" "$2"; done
    exit 0
}

# kv FILE KEY: a key=value line's value.
kv() { sed -n "s/^$2=//p" "$1" | tail -n1; }

# manifest FILE KEY: a top-level manifest.json value.
manifest() {
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2" 2>/dev/null
}
