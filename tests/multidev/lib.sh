# Helpers for tests/multidev (sourced after tests/e2e/lib.sh).

# boot_ids DIR JOBFILE [boot-guest args...]: boot with --collect, which
# saves every device's stats and properties in DIR after the guest powers
# off; returns boot-guest's status.
boot_ids() {
    local dir=$1 job=$2
    shift 2
    "$BOOT" --job "$job" --results "$dir" --collect "$@" >"$dir.boot.log" 2>&1
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
