# Helpers for tests/multidev (sourced after tests/e2e/lib.sh).

# boot_ids DIR JOBFILE "ID..." [boot-guest args...]: boot with -no-shutdown
# while bench/qmp-collect waits to save every listed device's stats and
# properties after the guest powers off; returns boot-guest's status.
boot_ids() {
    local dir=$1 job=$2 ids=$3
    shift 3
    local qmpdir cpid rc=0
    qmpdir=$(mktemp -d)
    # shellcheck disable=SC2086
    "$TOP/bench/qmp-collect" "$dir/qmp.sock" "$qmpdir" $ids \
        >/dev/null 2>"$qmpdir/collect.err" &
    cpid=$!
    "$BOOT" --job "$job" --results "$dir" "$@" -- -no-shutdown \
        >"$dir.boot.log" 2>&1 || rc=$?
    wait "$cpid" 2>/dev/null || true
    mv "$qmpdir"/* "$dir"/ 2>/dev/null || true
    rmdir "$qmpdir" 2>/dev/null || true
    return "$rc"
}

# info_of DIR KEY: a guest-info value.
info_of() { sed -n "s/^$2=//p" "$1/guest-info" 2>/dev/null; }

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
