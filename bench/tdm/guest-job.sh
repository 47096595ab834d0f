# bench/tdm's guest job (busybox sh, bench/tdm/README.md): MariaDB under
# sysbench's OLTP scripts and RocksDB's db_bench on the DAX filesystem over
# the device (MNT0) or the NVDIMM (NVDIMM_MNT), each run with the layer off
# and on.  The host (tdmrun.py) prepends the settings:
#   TDM_WORKLOADS  oltp_read_only ... dbbench_readrandom ... (run order)
#   TDM_SECS, TDM_THREADS   seconds and client threads of a run
#   TDM_WARMUP_SECS  an unrecorded run of each workload first (layer off),
#                    so neither layer's run pays the device cache's warm-up
#                    (0: none)
#   SB_TABLES, SB_TABLE_SIZE, BP_BYTES   sysbench tables and InnoDB pool
#   DB_NUM, DB_VALUE, DB_CACHE           db_bench keys, value size, block cache
#   PHASE_PAUSE    seconds the host gets at a phase marker (0: no watcher)
#   TDM_TRACE      workloads whose runs tracing/tdm-syscalls traces ("")
#   TDM_EXTENT_CHECK_MIB  a file this large read once between markers
#                  (0: none): the check of the namespace's device offset
#   TRACER_STOP_SECS  seconds a traced run's tracer gets to end after
#                  the run (stop_tracer; 180 by default)
# and passes libtdm.so (and for TDM_TRACE tdm-syscalls, its bpftrace
# script and tdm-extents) through fw_cfg.  Per run (a process started for
# it and ended after it: the layer's statistics are written at exit) it
# emits phase-RUN-begin/-end markers around the process's whole life (the
# guest's CLOCK_MONOTONIC at each marker goes to marks.csv), appends
# "run,workload,layer,ops_per_s,errors,rchar_bytes,rc" to runs.csv and emits
# the layer's statistics tdm-RUN.csv and per-interval rows iv-RUN.csv, the
# tool's output out-RUN.txt and, traced, tdm-syscalls' sys-RUN.csv and
# trace-RUN.txt (its output and the process's cwd=) and the extents of the
# workload's files extents-RUN.csv (bench/tdm/README.md "The join").
set -e
: >/tmp/empty
TRACER_STOP_SECS=${TRACER_STOP_SECS:-180}
dir=${MNT0:-$NVDIMM_MNT}
[ -d "$dir" ] || { echo "no DAX filesystem (MNT0, NVDIMM_MNT)" >&2; exit 1; }
fwcfg() { cp "/sys/firmware/qemu_fw_cfg/by_name/opt/cxlssd/$1/raw" "$2"; }
lib=/tmp/libtdm.so
fwcfg libtdm.so "$lib"
if [ -n "$TDM_TRACE" ]; then
    # tdm-syscalls finds its script in bpf/ beside it
    mkdir -p /tmp/tracing/bpf
    fwcfg tdm-syscalls /tmp/tracing/tdm-syscalls
    fwcfg tdm-syscalls.bt /tmp/tracing/bpf/tdm-syscalls.bt
    fwcfg tdm-extents /tmp/tdm-extents
    chmod 755 /tmp/tracing/tdm-syscalls /tmp/tdm-extents
fi
data=$dir/mysql sock=/tmp/mysqld.sock rocks=$dir/rocksdb
runs=/tmp/runs.csv
echo "run,workload,layer,ops_per_s,errors,rchar_bytes,rc" >"$runs"
# InnoDB: pread/pwrite (no native AIO, so the layer can serve data pages),
# no O_DIRECT (innodb_flush_method=fsync), a pool smaller than the tables
MYSQLD="mariadbd --no-defaults --user=root --datadir=$data --socket=$sock
 --skip-networking --skip-grant-tables --pid-file=/tmp/mysqld.pid
 --innodb-use-native-aio=0 --innodb-flush-method=fsync
 --innodb-buffer-pool-size=$BP_BYTES --innodb-log-file-size=16M
 --max-connections=64 --log-warnings=1"
SB="--db-driver=mysql --mysql-socket=$sock --mysql-user=root
 --tables=$SB_TABLES --table-size=$SB_TABLE_SIZE"
DB="--db=$rocks --num=$DB_NUM --key_size=16 --value_size=$DB_VALUE
 --compression_type=none --use_direct_reads=false
 --use_direct_io_for_flush_and_compaction=false --mmap_read=false
 --mmap_write=false --cache_size=$DB_CACHE --write_buffer_size=4194304"

# the guest's CLOCK_MONOTONIC (ktime_get, the clock of bpftrace's nsecs and
# of the layer's intervals), ns
mono_ns() { sed -n 's/^now at \([0-9]*\) nsecs$/\1/p' /proc/timer_list | head -n 1; }
marks=/tmp/marks.csv
echo "phase,guest_monotonic_ns" >"$marks"
phase() {
    echo "$1,$(mono_ns)" >>"$marks"
    emit "phase-$1" /tmp/empty
    sleep "$PHASE_PAUSE"
}

# spawn OUT CMD...: CMD in the background, its output to OUT, under a
# parent that never reaps it (a shell that execs sleep; busybox sh reaps
# its own children at once), so that it stays a zombie once it exits and
# finish can still read its /proc/PID/io: pid (CMD) and keeper (the parent)
spawn() {
    out=$1
    shift
    rm -f /tmp/spawn.pid
    sh -c '"$@" >"$0" 2>&1 & echo $! >/tmp/spawn.pid; exec sleep 1000000' \
        "$out" "$@" &
    keeper=$!
    until [ -s /tmp/spawn.pid ]; do sleep 0.1; done
    pid=$(cat /tmp/spawn.pid)
}

# finish: waits until pid has exited; rchar = the bytes its read calls
# returned over its whole life (every thread's), rc = its exit status
# (128 + the signal that ended it); then lets init reap it
finish() {
    while [ "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ]; do sleep 0.2; done
    rchar=$(sed -n 's/^rchar: //p' "/proc/$pid/io")
    code=$(awk '{ print $NF }' "/proc/$pid/stat")
    rc=$(( code & 127 ? 128 + (code & 127) : code >> 8 ))
    { kill "$keeper" && wait "$keeper"; } 2>/dev/null || true
}

# launch RUN MARK OUT CMD...: spawn OUT CMD (pid, keeper) with the layer
# loaded (RUN's statistics and 1 s interval rows); MARK=1: phase-RUN-begin
# just before CMD starts, and where the workload is traced (trace=1) CMD
# is held on a FIFO until tdm-syscalls -p pid (tracer) has attached, so
# that it sees every file CMD opens
launch() {
    lrun=$1 lmark=$2 lout=$3
    shift 3
    set -- env LD_PRELOAD=$lib TDM_STATS=/tmp/tdm-$lrun.csv \
        TDM_STATS_INTERVALS=/tmp/iv-$lrun.csv TDM_STATS_INTERVAL_MS=1000 "$@"
    tracer=""
    if [ "$lmark" = 0 ] || [ "$trace" = 0 ]; then
        [ "$lmark" = 0 ] || phase "$lrun-begin"
        spawn "$lout" "$@"
        return
    fi
    rm -f /tmp/go /tmp/attached /tmp/landed && mkfifo /tmp/go
    spawn "$lout" sh -c 'read -r _ <"$0"; exec "$@"' /tmp/go "$@"
    # launch mode: its command runs once bpftrace has attached and ends
    # at land, and tdm-syscalls then stops bpftrace itself (stopped by a
    # TERM instead, one test boot hung after a traced run with the guest
    # idle: the trapped signal seemingly lost while tdm-syscalls waited)
    /tmp/tracing/tdm-syscalls -p "$pid" -o "/tmp/sys-$lrun.csv" \
        --timeout 900 -- sh -c 'touch "$0"; until [ -e "$1" ]; do sleep 0.2; done' \
        /tmp/attached /tmp/landed >"/tmp/trace-$lrun.txt" 2>&1 &
    tracer=$!
    until [ -e /tmp/attached ]; do
        kill -0 "$tracer" 2>/dev/null || { tracer=""; break; }
        sleep 0.2
    done
    phase "$lrun-begin"
    echo go >/tmp/go
}

# land RUN DIR: after the run's process has exited (finish), the
# phase-RUN-end marker; a traced run's tracer ended (its CSV written),
# the extents of the files under DIR (the workload's) and DIR as cwd= (where
# tdm-syscalls' relative paths start: mariadbd's cwd is its datadir;
# db_bench names its files absolute)
land() {
    phase "$1-end"
    [ "$trace" = 1 ] || return 0
    touch /tmp/landed
    stop_tracer "$1" || return 1
    echo "cwd=$2" >>"/tmp/trace-$1.txt"
    find "$2" -type f -exec /tmp/tdm-extents {} + >"/tmp/extents-$1.csv" ||
        echo "tdm-extents failed" >>"/tmp/trace-$1.txt"
}

# stop_tracer RUN: waits for the tracer (tdm-syscalls ends bpftrace once
# the run has landed) at most TRACER_STOP_SECS and notes the wait in
# trace-RUN.txt (tracer_stop_s=).  Two test boots hung at this wait
# (bench/tdm/README.md); whatever the cause, the job must not wait
# forever.  A tracer still running then is killed with its children;
# what each was doing (state, wchan, kernel stack per thread) is emitted
# as tracer-hung-RUN.txt and goes to the console, and stop_tracer fails:
# the caller runs RUN again
stop_tracer() {
    [ -n "$tracer" ] || return 0
    n=0
    while kill -0 "$tracer" 2>/dev/null && [ "$n" -lt $((TRACER_STOP_SECS * 5)) ]; do
        sleep 0.2
        n=$((n + 1))
    done
    if ! kill -0 "$tracer" 2>/dev/null; then
        wait "$tracer" || true
        echo "tracer_stop_s=$((n / 5)).$((n % 5 * 2))" >>"/tmp/trace-$1.txt"
        return 0
    fi
    hung=/tmp/tracer-hung-$1.txt
    procs="$(awk -v t="$tracer" '$4 == t { print $1 }' /proc/[0-9]*/stat 2>/dev/null || true) $tracer"
    { echo "tracer_hung=$1: tdm-syscalls (pid $tracer) still ran $TRACER_STOP_SECS s after the run landed"
      for p in $procs; do
          echo "pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
          for t in /proc/$p/task/*; do
              echo "  task ${t##*/}: state $(cut -d' ' -f3 "$t/stat" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
              sed 's/^/    /' "$t/stack" 2>/dev/null || true
          done
      done
      cat "/tmp/trace-$1.txt" 2>/dev/null || true
    } >"$hung"
    sed 's/^/tdm-job: /' "$hung" >/dev/kmsg 2>/dev/null || true
    for p in $procs; do
        kill -KILL "$p" 2>/dev/null || true
    done
    wait "$tracer" 2>/dev/null || true
    emit "tracer-hung-$1.txt" "$hung"
    return 1
}

# mysqld_start LAYER RUN MARK: mariadbd (pid) with TDM=LAYER (launch),
# until its socket answers
mysqld_start() {
    rm -f "$sock"
    launch "$2" "$3" "/tmp/mysqld-$2.err" env TDM=$1 $MYSQLD
    until [ -S "$sock" ]; do
        [ "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ] ||
            { cat "/tmp/mysqld-$2.err" >&2; return 1; }
        sleep 0.5
    done
}

# bytes DIR PATTERN: the size of DIR's files matching PATTERN
bytes() { (cd "$1" && ls -l $2) | awk '{ s += $5 } END { print s + 0 }'; }

setup_mariadb() {
    mkdir -p "$data"
    { echo "create database if not exists mysql;"
      echo "use mysql;"
      echo "SET @auth_root_socket='root';"
      cat /usr/share/mysql/mysql_system_tables.sql \
          /usr/share/mysql/mysql_system_tables_data.sql
      echo "create database sbtest;"
    } | $MYSQLD --bootstrap --enforce-storage-engine="" \
        --max-allowed-packet=8M --net-buffer-length=16K >/tmp/bootstrap.log 2>&1 ||
        { cat /tmp/bootstrap.log >&2; return 1; }
    mysqld_start off prepare 0
    sysbench oltp_read_write $SB --threads="$SB_TABLES" prepare >/tmp/prepare.log 2>&1 ||
        { cat /tmp/prepare.log >&2; return 1; }
    kill -TERM "$pid"
    finish
    echo "mariadb_dataset_bytes=$(bytes "$data/sbtest" '*.ibd')" >>/tmp/dataset
}

setup_rocksdb() {
    db_bench $DB --benchmarks=fillseq,compact --use_existing_db=0 --threads=1 \
        >/tmp/fill.log 2>&1 || { cat /tmp/fill.log >&2; return 1; }
    echo "rocksdb_dataset_bytes=$(bytes "$rocks" '*.sst')" >>/tmp/dataset
}

# record RUN WORKLOAD LAYER OPS ERRORS RCHAR RC
record() {
    echo "$1,$2,$3,${4:-0},${5:-0},${6:-0},$7" >>"$runs"
    emit "out-$1.txt" "/tmp/out-$1.txt"
    for f in tdm-$1.csv iv-$1.csv sys-$1.csv trace-$1.txt extents-$1.csv; do
        [ ! -f "/tmp/$f" ] || emit "$f" "/tmp/$f"
    done
}

# run_sysbench and run_dbbench WORKLOAD LAYER RUN SECS [warm-up]: one run;
# a warm-up run has no markers and no record
run_sysbench() {
    mysqld_start "$2" "$3" "$([ -n "$5" ] && echo 0 || echo 1)"
    sbrc=0
    sysbench "$1" $SB --threads="$TDM_THREADS" --time="$4" \
        --events=0 run >"/tmp/out-$3.txt" 2>&1 || sbrc=$?
    kill -TERM "$pid"
    finish
    [ -z "$5" ] || return 0
    land "$3" "$data" || { rerun=1; return 0; }
    [ "$sbrc" = 0 ] || rc=$sbrc
    cat "/tmp/mysqld-$3.err" >>"/tmp/out-$3.txt"
    record "$3" "$1" "$2" \
        "$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "/tmp/out-$3.txt")" \
        "$(sed -n 's/.*ignored errors: *\([0-9]*\).*/\1/p' "/tmp/out-$3.txt")" "$rchar" "$rc"
}

run_dbbench() {
    b=${1#dbbench_}
    launch "$3" "$([ -n "$5" ] && echo 0 || echo 1)" "/tmp/out-$3.txt" \
        env TDM=$2 db_bench $DB --benchmarks="$b" \
        --use_existing_db=1 --threads="$TDM_THREADS" --duration="$4"
    finish
    [ -z "$5" ] || return 0
    land "$3" "$rocks" || { rerun=1; return 0; }
    record "$3" "$1" "$2" \
        "$(sed -n "s/^$b *:.* \([0-9]*\) ops\/sec.*/\1/p" "/tmp/out-$3.txt")" 0 "$rchar" "$rc"
}

# namespace.txt: dev_offset_bytes= the device byte of the fsdax block
# device's byte 0 (tracing/README.md "TDM tooling", per file): the
# namespace's data start (its pfn device's resource, past the info block
# and the memmap) minus its region's start, the device's DPA 0 (one
# device, interleave 1: docs/persistence.md)
namespace_offset() {
    for p in /sys/bus/nd/devices/pfn*; do
        [ -n "$(cat "$p/namespace" 2>/dev/null)" ] || continue
        reg=$(dirname "$(readlink -f "$p")")
        echo "pfn=${p##*/} pfn_resource=$(cat "$p/resource")"
        echo "region=${reg##*/} region_resource=$(cat "$reg/resource")"
        echo "dev_offset_bytes=$(($(cat "$p/resource") - $(cat "$reg/resource")))"
    done >/tmp/namespace.txt
    emit namespace.txt /tmp/namespace.txt
}

# extent_check MIB: a file of MIB MiB (over the device's cache) written,
# then read once between the extentcheck markers: its reads miss, and the
# pages they fill must be its extents' (extents-check.csv) plus the
# namespace's offset (checked on the host)
extent_check() {
    f=$dir/extent-check
    dd if=/dev/zero of="$f" bs=1M count="$1" 2>/dev/null
    sync
    /tmp/tdm-extents "$f" >/tmp/extents-check.csv
    phase extentcheck-begin
    cat "$f" >/dev/null
    phase extentcheck-end
    rm -f "$f"
    emit extents-check.csv /tmp/extents-check.csv
}

: >/tmp/dataset
trace=0
case " $TDM_WORKLOADS" in *" oltp_"*) setup_mariadb ;; esac
case " $TDM_WORKLOADS" in *" dbbench_"*) setup_rocksdb ;; esac
emit dataset.txt /tmp/dataset
[ -z "$TDM_TRACE" ] || namespace_offset
[ "$TDM_EXTENT_CHECK_MIB" = 0 ] || extent_check "$TDM_EXTENT_CHECK_MIB"
# the layer off then on, and the other way round for the next workload
order="off on"
for w in $TDM_WORKLOADS; do
    case $w in
        oltp_*) run=run_sysbench ;;
        *) run=run_dbbench ;;
    esac
    case " $TDM_TRACE " in *" $w "*) trace=1 ;; *) trace=0 ;; esac
    [ "$TDM_WARMUP_SECS" = 0 ] || $run "$w" off "$w-warmup" "$TDM_WARMUP_SECS" warm-up
    for layer in $order; do
        # once more when its tracer had to be killed (stop_tracer)
        rerun=0
        $run "$w" "$layer" "$w-$layer" "$TDM_SECS"
        [ "$rerun" = 0 ] || $run "$w" "$layer" "$w-$layer" "$TDM_SECS"
    done
    [ "$order" = "off on" ] && order="on off" || order="off on"
done
emit runs.csv "$runs"
emit marks.csv "$marks"
