# Shared helpers for the end-to-end tests (sourced).  They boot real guests
# under TCG with vm-images/boot-guest and speak TAP.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
QEMU=${QEMU:-$BUILD/qemu/qemu-system-x86_64}
BOOT=$TOP/vm-images/boot-guest
read -r -a FIRMWARE <<<"${QEMU_FIRMWARE_ARGS:--L /usr/share/seabios -L /usr/share/qemu}"

tap_n=0 tap_failed=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() { tap_n=$((tap_n + 1)) tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $1"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
diag() { sed 's/^/# /' "$@" 2>/dev/null || true; }

# test_dir NAME: a fresh folder for this test's artefacts.
test_dir() {
    local d=${TEST_LOG_DIR:-$BUILD/test-logs}/$1.d
    rm -rf "$d"
    mkdir -p "$d"
    echo "$d"
}

# qemu_cxl_argv DEVICE-SPEC: fill the array qemu_argv with QEMU, the CXL
# topology and no guest (-S).
qemu_cxl_argv() {
    qemu_argv=("$QEMU" "${FIRMWARE[@]}" -M q35,cxl=on -m 512M
        -nodefaults -display none -S -accel tcg
        -object memory-backend-memfd,id=vmem0,share=on,size=64M
        -device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1
        -device cxl-rp,port=0,bus=cxl.1,id=root_port13,chassis=0,slot=2
        -device "$1,bus=root_port13,volatile-memdev=vmem0,id=cxl-vmem0"
        -M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G)
}

# qemu_cxl DEVICE-SPEC [QEMU-ARGS...]: QEMU with the CXL topology and no
# guest (-S), to exercise realize; prints QEMU's output, returns its status.
qemu_cxl() {
    local qemu_argv
    qemu_cxl_argv "$1"
    shift
    timeout --kill-after=2 "${CXL_TIMEOUT:-10}" "${qemu_argv[@]}" "$@" </dev/null 2>&1
}

# load_json FILE PREFIX: set shell variables PREFIX<key> for every scalar
# of a JSON object (one python start instead of one per value: python
# starts slowly on a loaded machine).  Keys' "-" become "_".
load_json() {
    eval "$(python3 - "$1" "$2" <<'PY'
import json, re, shlex, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = {}
for k, v in d.items():
    if isinstance(v, (str, int, float, bool)) or v is None:
        print(f"{sys.argv[2]}{re.sub('[^A-Za-z0-9_]', '_', k)}={shlex.quote(str(v))}")
PY
)"
}

# stat_of FILE KEY: a counter from a stats JSON file written by qmp-collect.
stat_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null
}

# boot_job DIR JOBFILE DEVICE [boot-guest args...]: boot with --collect so
# the device's stats and properties are saved in DIR after the guest powers
# off; returns boot-guest's status.
boot_job() {
    local dir=$1 job=$2 dev=$3
    shift 3
    "$BOOT" --job "$job" --results "$dir" --device "$dev" --collect "$@" \
        >"$dir.boot.log" 2>&1
}
