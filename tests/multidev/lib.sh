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

