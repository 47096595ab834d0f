# Shared part of every workload job (guest side, busybox sh).  The runner
# (bench/workloads/wlrun.py) prepends WL_* settings and appends one
# workload's wl_run; wl_run PLACE... runs the workload once with its memory
# placed by the command PLACE (numactl ...) and prints one line
#   ops_per_s=N [p50_us=N] [p99_us=N] [avg_us=N]
# WL_WSS is the working set in bytes, WL_OPS / WL_SECS the size of a run.
set -e
: >/tmp/empty

# phase NAME: a marker the host sees on the results port; the host reads
# the device counters when it arrives.  The pause gives it the time to.
phase() {
    emit "phase-$1" /tmp/empty
    sleep 1
}

# key VALUE-LINE KEY: the value of KEY=... in a key=value line.
key() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# place TARGET: the numactl command line that puts a process's memory on
# TARGET (dram: node 0; cxl: the device's node) under WL_POLICY.
place() {
    case $1 in
        dram) echo "numactl --membind=0" ;;
        cxl)
            [ -n "$CXL_NODE" ] || { echo "no CXL NUMA node (boot with --mode system-ram)" >&2; exit 1; }
            case $WL_POLICY in
                membind) echo "numactl --membind=$CXL_NODE" ;;
                preferred) echo "numactl --preferred=$CXL_NODE" ;;
                interleave) echo "numactl --interleave=0,$CXL_NODE" ;;
                *) echo "unknown WL_POLICY=$WL_POLICY (membind, preferred, interleave)" >&2; exit 1 ;;
            esac ;;
    esac
}

# node_pages: pages on the CXL node now (for the record: proves placement).
node_pages() {
    [ -n "$CXL_NODE" ] || { echo 0; return; }
    awk '/MemUsed/ {print int($4 * 1024 / 4096)}' "/sys/devices/system/node/node$CXL_NODE/meminfo"
}

# run_all: one unrecorded warm-up run on node 0 (TCG translates the
# program's code on its first run and keeps it for the next: without it the
# first target would pay that), then WL_REPEATS rounds over WL_TARGETS,
# every other round in reverse order (ABBA), so neither target always
# runs first.
run_all() {
    echo "workload,target,repeat,ops_per_s,p50_us,p99_us,avg_us,node_pages" >/tmp/wl-results.csv
    echo "workload $WL_NAME: wss $WL_WSS bytes, targets $WL_TARGETS, $WL_REPEATS repeat(s), policy $WL_POLICY"
    # shellcheck disable=SC2046 # place prints a command line: split it
    echo "$WL_NAME warm-up (dram, not recorded): $(wl_run $(place dram))"
    forward=$WL_TARGETS
    backward=$(echo "$WL_TARGETS" | tr ' ' '\n' | sed -n '1!G;h;$p' | tr '\n' ' ')
    r=1
    while [ "$r" -le "$WL_REPEATS" ]; do
        order=$forward
        [ $((r % 2)) -eq 1 ] || order=$backward
        for t in $order; do
            phase "$WL_NAME-$t-$r-begin"
            # shellcheck disable=SC2046 # place prints a command line: split it
            line=$(wl_run $(place "$t"))
            used=$(node_pages)
            phase "$WL_NAME-$t-$r-end"
            echo "$WL_NAME $t #$r: $line (node pages in use at the end: $used)"
            echo "$WL_NAME,$t,$r,$(key "$line" ops_per_s),$(key "$line" p50_us),$(key "$line" p99_us),$(key "$line" avg_us),$used" \
                >>/tmp/wl-results.csv
        done
        r=$((r + 1))
    done
    emit "wl-$WL_NAME.csv" /tmp/wl-results.csv
}
