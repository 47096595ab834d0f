# The TAP producer of the project's shell tests (tests/tap.h: C,
# tests/tap.py: Python; tests/run reads them all).  Source it, then:
#
#   ok STATUS WHAT     "ok N - WHAT" if STATUS is 0, else "not ok N - WHAT"
#   skip WHAT WHY      "ok N - WHAT # SKIP WHY"
#   diag FILE...       the files (or stdin) as "# " lines
#   skip_all WHY       "1..0 # SKIP WHY", exit status 0
#   done_testing       the plan "1..N"; status 1 if anything failed
tap_n=0 tap_failed=0

ok() {
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_n - $2"
    else
        echo "not ok $tap_n - $2"
        tap_failed=$((tap_failed + 1))
    fi
}

skip() {
    tap_n=$((tap_n + 1))
    echo "ok $tap_n - $1 # SKIP $2"
}

diag() { sed 's/^/# /' "$@"; }

skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
