# Shared part of every workload job (guest side, busybox sh).  The runner
# (bench/workloads/wlrun.py) prepends WL_* settings and appends one
# workload's wl_run; wl_run PLACE... runs the workload once with its memory
# placed by the command PLACE (numactl ...) and prints one line
#   ops_per_s=N [p50_us=N] [p99_us=N] [avg_us=N]
# WL_WSS is the working set in bytes, WL_OPS / WL_SECS the size of a run;
# WL_NUMA_MAPS=on samples each run's placement (numa_sample) and emits it.
set -e
: >/tmp/empty

# phase NAME [PAUSE]: a marker the host sees on the results port; the host
# reads the device counters when it arrives.  The pause (default
# WL_PHASE_PAUSE s; 0 where no host watcher reads them) gives it the time
# to.  An end marker that another run's begin marker follows needs none:
# nothing touches the device in between, and that begin marker's pause
# covers both reads.
phase() {
    emit "phase-$1" /tmp/empty
    sleep "${2:-$WL_PHASE_PAUSE}"
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

# numa_sample OUT: until killed, once a second, of the processes that run
# under a numactl policy (numa_maps not "default": the workload's), the one
# with the most anonymous pages (file-backed mappings left out: their page
# cache is not the process's placement), from /proc/<pid>/numa_maps; OUT
# keeps the largest: "pages=N pid=P comm=C N0=.. N1=..".  One awk reads
# every process (getline: a process that exits meanwhile is skipped).
numa_sample() {
    : >"$1"
    while :; do
        printf '%s\n' /proc/[0-9]* | awk -v best="$(sed -n 's/^pages=\([0-9]*\) .*/\1/p' "$1")" '
            { f = $0 "/numa_maps"; tot = 0; placed = 0; split("", n)
              while ((getline l < f) > 0) {
                  nf = split(l, w, " ")
                  if (w[2] != "default") placed = 1
                  if (l ~ / anon=/ && l !~ / file=/)
                      for (i = 3; i <= nf; i++)
                          if (w[i] ~ /^N[0-9]+=/) { split(w[i], kv, "="); n[kv[1]] += kv[2]; tot += kv[2] } }
              close(f)
              if (placed && tot > best + 0) {
                  best = tot; c = $0 "/comm"; comm = ""; getline comm < c; close(c)
                  out = "pages=" tot " pid=" substr($0, 7) " comm=" comm
                  for (k in n) out = out " " k "=" n[k] } }
            END { if (out != "") print out }' >/tmp/numa-now
        [ ! -s /tmp/numa-now ] || mv /tmp/numa-now "$1"
        sleep 1
    done
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
    runs=$((WL_REPEATS * $(echo "$WL_TARGETS" | wc -w))) i=0
    r=1
    while [ "$r" -le "$WL_REPEATS" ]; do
        order=$forward
        [ $((r % 2)) -eq 1 ] || order=$backward
        for t in $order; do
            phase "$WL_NAME-$t-$r-begin"
            numa=/tmp/numa-$WL_NAME-$t-$r.txt
            [ "$WL_NUMA_MAPS" != on ] || { numa_sample "$numa" & sampler=$!; }
            # shellcheck disable=SC2046 # place prints a command line: split it
            line=$(wl_run $(place "$t"))
            used=$(node_pages)
            [ "$WL_NUMA_MAPS" != on ] || { kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true; }
            i=$((i + 1))
            if [ "$i" -lt "$runs" ]; then phase "$WL_NAME-$t-$r-end" 0; else phase "$WL_NAME-$t-$r-end"; fi
            echo "$WL_NAME $t #$r: $line (node pages in use at the end: $used)"
            if [ "$WL_NUMA_MAPS" = on ]; then
                echo "$WL_NAME $t #$r: numa_maps (largest anonymous footprint): $(cat "$numa")"
                emit "numa-$WL_NAME-$t-$r.txt" "$numa"
            fi
            echo "$WL_NAME,$t,$r,$(key "$line" ops_per_s),$(key "$line" p50_us),$(key "$line" p99_us),$(key "$line" avg_us),$used" \
                >>/tmp/wl-results.csv
        done
        r=$((r + 1))
    done
    emit "wl-$WL_NAME.csv" /tmp/wl-results.csv
}
