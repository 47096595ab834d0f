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
# and passes libtdm.so through fw_cfg.  Per run (a process started for it
# and ended after it: the layer's statistics are written at exit) it emits
# phase-RUN-begin/-end markers around the process's whole life, appends
# "run,workload,layer,ops_per_s,errors,rchar_bytes,rc" to runs.csv and emits
# the layer's statistics tdm-RUN.csv and the tool's output out-RUN.txt.
set -e
: >/tmp/empty
dir=${MNT0:-$NVDIMM_MNT}
[ -d "$dir" ] || { echo "no DAX filesystem (MNT0, NVDIMM_MNT)" >&2; exit 1; }
lib=/tmp/libtdm.so
cp /sys/firmware/qemu_fw_cfg/by_name/opt/cxlssd/libtdm.so/raw "$lib"
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

phase() { emit "phase-$1" /tmp/empty; sleep "$PHASE_PAUSE"; }

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

# mysqld_start LAYER RUN: mariadbd (pid) with the layer loaded and
# TDM=LAYER, until its socket answers
mysqld_start() {
    rm -f "$sock"
    spawn "/tmp/mysqld-$2.err" env LD_PRELOAD=$lib TDM=$1 \
        TDM_STATS=/tmp/tdm-$2.csv $MYSQLD
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
    mysqld_start off prepare
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
    [ ! -f "/tmp/tdm-$1.csv" ] || emit "tdm-$1.csv" "/tmp/tdm-$1.csv"
}

# run_sysbench and run_dbbench WORKLOAD LAYER RUN SECS [warm-up]: one run;
# a warm-up run has no markers and no record
run_sysbench() {
    [ -n "$5" ] || phase "$3-begin"
    mysqld_start "$2" "$3"
    sbrc=0
    sysbench "$1" $SB --threads="$TDM_THREADS" --time="$4" \
        --events=0 run >"/tmp/out-$3.txt" 2>&1 || sbrc=$?
    kill -TERM "$pid"
    finish
    [ -z "$5" ] || return 0
    phase "$3-end"
    [ "$sbrc" = 0 ] || rc=$sbrc
    cat "/tmp/mysqld-$3.err" >>"/tmp/out-$3.txt"
    record "$3" "$1" "$2" \
        "$(sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' "/tmp/out-$3.txt")" \
        "$(sed -n 's/.*ignored errors: *\([0-9]*\).*/\1/p' "/tmp/out-$3.txt")" "$rchar" "$rc"
}

run_dbbench() {
    b=${1#dbbench_}
    [ -n "$5" ] || phase "$3-begin"
    spawn "/tmp/out-$3.txt" env LD_PRELOAD=$lib TDM=$2 \
        TDM_STATS=/tmp/tdm-$3.csv db_bench $DB --benchmarks="$b" \
        --use_existing_db=1 --threads="$TDM_THREADS" --duration="$4"
    finish
    [ -z "$5" ] || return 0
    phase "$3-end"
    record "$3" "$1" "$2" \
        "$(sed -n "s/^$b *:.* \([0-9]*\) ops\/sec.*/\1/p" "/tmp/out-$3.txt")" 0 "$rchar" "$rc"
}

: >/tmp/dataset
case " $TDM_WORKLOADS" in *" oltp_"*) setup_mariadb ;; esac
case " $TDM_WORKLOADS" in *" dbbench_"*) setup_rocksdb ;; esac
emit dataset.txt /tmp/dataset
# the layer off then on, and the other way round for the next workload
order="off on"
for w in $TDM_WORKLOADS; do
    case $w in
        oltp_*) run=run_sysbench ;;
        *) run=run_dbbench ;;
    esac
    [ "$TDM_WARMUP_SECS" = 0 ] || $run "$w" off "$w-warmup" "$TDM_WARMUP_SECS" warm-up
    for layer in $order; do
        $run "$w" "$layer" "$w-$layer" "$TDM_SECS"
    done
    [ "$order" = "off on" ] && order="on off" || order="off on"
done
emit runs.csv "$runs"
