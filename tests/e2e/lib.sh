# Shared helpers for the end-to-end tests (sourced).  They boot real guests
# under TCG with vm-images/boot-guest and speak TAP.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
QEMU=${QEMU:-$BUILD/qemu/qemu-system-x86_64}
BOOT=$TOP/vm-images/boot-guest
read -r -a FIRMWARE <<<"${QEMU_FIRMWARE_ARGS:--L /usr/share/seabios -L /usr/share/qemu}"

tap_n=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() { tap_n=$((tap_n + 1)); echo "not ok $tap_n - $1"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
diag() { sed 's/^/# /' "$@" 2>/dev/null || true; }

# test_dir NAME: a fresh folder for this test's artefacts.
test_dir() {
    local d=${TEST_LOG_DIR:-$BUILD/test-logs}/$1.d
    rm -rf "$d"
    mkdir -p "$d"
    echo "$d"
}

# qemu_cxl DEVICE-SPEC [QEMU-ARGS...]: QEMU with the CXL topology and no
# guest (-S), to exercise realize; prints QEMU's output, returns its status.
qemu_cxl() {
    local dev=$1
    shift
    timeout --kill-after=2 "${CXL_TIMEOUT:-10}" "$QEMU" "${FIRMWARE[@]}" -M q35,cxl=on -m 512M \
        -nodefaults -display none -S -accel tcg \
        -object memory-backend-memfd,id=vmem0,share=on,size=64M \
        -device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1 \
        -device cxl-rp,port=0,bus=cxl.1,id=root_port13,chassis=0,slot=2 \
        -device "$dev,bus=root_port13,volatile-memdev=vmem0,id=cxl-vmem0" \
        -M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G "$@" </dev/null 2>&1
}

# stat_of FILE KEY: a counter from a stats JSON file written by qmp-collect.
stat_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null
}

# boot_job DIR JOBFILE DEVICE [boot-guest args...]: boot with -no-shutdown so
# bench/qmp-collect can save stats and properties after the guest powers
# off; returns boot-guest's status.
boot_job() {
    local dir=$1 job=$2 dev=$3
    shift 3
    local qmpdir
    qmpdir=$(mktemp -d)
    "$TOP/bench/qmp-collect" "$dir/qmp.sock" "$qmpdir" cxl-vmem0 \
        >/dev/null 2>"$qmpdir/collect.err" &
    local cpid=$! rc=0
    "$BOOT" --job "$job" --results "$dir" --device "$dev" "$@" -- -no-shutdown \
        >"$dir.boot.log" 2>&1 || rc=$?
    wait "$cpid" 2>/dev/null || true
    mv "$qmpdir"/* "$dir"/ 2>/dev/null || true
    rmdir "$qmpdir" 2>/dev/null || true
    return "$rc"
}
