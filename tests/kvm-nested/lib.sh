# Helpers of the nested-KVM rig's host side (sourced after tests/e2e/lib.sh).
# An L1 "plan" is a shell script for L1's init: for each L2 guest, its QEMU
# argv (vm-images/boot-guest --print-args with L1's paths), its job, and an
# l2-run call.  L1 sends back every L2 file as NAME.FILE.
GUEST_KERNEL=${GUEST_KERNEL:-$BUILD/guest/vmlinux}
GUEST_INITRAMFS=${GUEST_INITRAMFS:-$BUILD/guest/initramfs.cpio.gz}
L1_INITRD=${KVM_NESTED_INITRAMFS:-$BUILD/kvm-nested/initramfs.cpio}
L2_ROOT=/l2              # where make-l1-initramfs puts the L2 side in L1

# l2_args NAME [boot-guest options...] [-- QEMU-ARGS...]: L2's QEMU argv
# with L1's paths, one per line (-accel kvm; a pipe monitor for l2-qmp and
# -no-shutdown so the counters can be read after power-off).  Arguments
# named in L2_DROP_ARGS (space-separated) are left out (-no-reboot, for a
# guest that must really reset).  L2_INITRD names L2's initramfs in L1's
# $L2_ROOT (default initramfs.cpio.gz; initramfs-apps.cpio.gz for the
# applications image).
l2_args() {
    local name=$1 d=$L2_ROOT/runs/$1 args opts=() extra=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    [ $# -eq 0 ] || { shift; extra=("$@"); }
    args=$(QEMU=$QEMU QEMU_FIRMWARE_ARGS="-L $L2_ROOT/firmware" "$BOOT" --print-args \
               --accel kvm --kernel "$GUEST_KERNEL" \
               --initrd "$GUEST_INITRAMFS" --job "$d/job" --results "$d" \
               "${opts[@]}" -- "${extra[@]}" \
               -chardev "pipe,id=rigqmp,path=$d/qmp" -mon chardev=rigqmp,mode=control \
               -no-shutdown) || return 1
    awk -v root="$L2_ROOT" -v drop=" ${L2_DROP_ARGS:-} " \
        -v initrd="${L2_INITRD:-initramfs.cpio.gz}" '
        NR == 1 { print root "/qemu"; next }
        index(drop, " " $0 " ") { next }
        prev == "-kernel" { $0 = root "/vmlinux" }
        prev == "-initrd" { $0 = root "/" initrd }
        { print; prev = $0 }' <<<"$args" >"$out/$name.args"
    if grep -qF -e "$TOP" -e "$BUILD" "$out/$name.args"; then
        echo "kvm-nested: $name: host paths left in L2's command line:" >&2
        grep -F -e "$TOP" -e "$BUILD" "$out/$name.args" >&2
        return 1
    fi
    cat "$out/$name.args"
}

# plan_run PLAN NAME TIMEOUT TRACE JOBFILE NDEV [boot-guest options...]
#          [-- QEMU-ARGS...]:
# append one L2 guest with NDEV cxl-ssd devices (--device options) to the
# L1 plan.  TRACE=1 records L1's kvm/sched tracepoints (l2-run), TRACE=all
# every kvm_exit too (not only NPF exits).
# $out/NAME.hmp, if present, lists HMP commands run after the guest powered
# off; $out/NAME.inflight makes l2-qmp reset the guest at that many misses.
# L2_PRELUDE: a command line the run needs first (in its block).  Each
# block is skipped when its name is in the plan's SKIP_RUNS (plan_skipping).
plan_run() {
    local plan=$1 name=$2 secs=$3 trace=$4 job=$5 ndev=$6 d=$L2_ROOT/runs/$2
    shift 6
    local args ids f
    args=$(l2_args "$name" --devices "$ndev" "$@") || return 1
    ids=$(for ((i = 0; i < ndev; i++)); do printf ' cxl-vmem%d' "$i"; done)
    {
        echo "case \" \${SKIP_RUNS:-} \" in *' $name '*) echo 'plan: $name done in an earlier boot' ;; *)"
        [ -z "${L2_PRELUDE:-}" ] || echo "$L2_PRELUDE"
        echo "mkdir -p $d"
        echo "cat >$d/qemu.args <<'EOF_RIG_ARGS'"
        printf '%s\n' "$args"
        echo "EOF_RIG_ARGS"
        echo "cat >$d/job <<'EOF_RIG_JOB'"
        cat "$job"
        echo "EOF_RIG_JOB"
        for f in hmp inflight; do
            [ -f "$out/$name.$f" ] || continue
            echo "cat >$d/$f <<'EOF_RIG_FILE'"
            cat "$out/$name.$f"
            echo "EOF_RIG_FILE"
        done
        # KVM_NESTED_L2_START_TIMEOUT: l2-run's L2_START_TIMEOUT (checks)
        local start=${KVM_NESTED_L2_START_TIMEOUT:+L2_START_TIMEOUT=$KVM_NESTED_L2_START_TIMEOUT }
        if [ "$trace" = all ]; then
            echo "${start}TRACE=1 TRACE_EXITS=all l2-run $name $secs$ids"
        else
            echo "${start}TRACE=$trace l2-run $name $secs$ids"
        fi
        echo "esac"
        # KVM_NESTED_CRASH_AFTER=NAME crashes L1 once NAME is done, in the
        # first boot only (a check of the retry: boot again, skip NAME);
        # KVM_NESTED_RESET_AFTER=NAME resets it at once, no panic (what a
        # triple fault looks like from the host); KVM_NESTED_STALL_AFTER=NAME
        # silences it instead (heartbeat stopped, the plan asleep: what the
        # host sees of an L1 whose vCPUs all stopped).
        if [ "${KVM_NESTED_CRASH_AFTER:-}" = "$name" ]; then
            echo "[ -n \"\${SKIP_RUNS+retry}\" ] || echo c >/proc/sysrq-trigger"
        fi
        if [ "${KVM_NESTED_RESET_AFTER:-}" = "$name" ]; then
            echo "[ -n \"\${SKIP_RUNS+retry}\" ] || echo b >/proc/sysrq-trigger"
        fi
        if [ "${KVM_NESTED_STALL_AFTER:-}" = "$name" ]; then
            echo "[ -n \"\${SKIP_RUNS+retry}\" ] || { kill -STOP \"\$(cat /tmp/heartbeat.pid)\"; sleep 100000; }"
        fi
    } >>"$plan"
}

# plan_skipping PLAN RUNS...: PLAN with its blocks for RUNS skipped.
plan_skipping() {
    local plan=$1
    shift
    printf "SKIP_RUNS='%s'\n" "$*"
    cat "$plan"
}

# l1_done_runs DIR: the L2 runs whose files all came back from L1 (l2-run
# sends NAME.done last), in the boot DIR/l1 and the kept attempts.  A run
# whose state in L1 a later run reads (L1_RUN_CHAINS, "FIRST:THEN" words:
# media2 reads the file media left on L1's tmpfs, lost when L1 boots
# again) counts as done only when THEN is done too.
l1_done_runs() {
    local f pair done_runs
    done_runs=" $(for f in "$1"/l1/*.done "$1"/l1.fail*/*.done; do
        [ -f "$f" ] || continue
        f=${f##*/}
        echo "${f%.done}"
    done | sort -u | paste -sd " " -) "
    for pair in ${L1_RUN_CHAINS:-}; do
        case $done_runs in
        *" ${pair#*:} "*) ;;
        *) done_runs=${done_runs/ ${pair%%:*} / } ;;
        esac
    done
    # shellcheck disable=SC2086  # trims the padding spaces
    echo $done_runs
}

# boot_l1 PLAN DIR TIMEOUT: boot L1 under TCG (-cpu max: SVM + NPT) with the
# plan as its job; its files in DIR/l1.
# L1 starts its job (the plan) within seconds of guest time; one that has
# not after KVM_NESTED_L1_START_TIMEOUT (300 s) hung while booting.  Once
# it runs the plan, its init prints a heartbeat every 15 s: a console
# silent for KVM_NESTED_L1_PROGRESS_TIMEOUT (120 s) means every vCPU
# stopped.  An RCU stall in L1 (one vCPU that no longer runs, not even its
# timer) panics it, and so does a soft lockup (a vCPU that waits in the
# kernel for another one that no longer answers its interrupts).  Each
# counts as a rig failure instead of hanging until the timeout.
boot_l1() {
    local plan=$1 dir=$2 secs=$3
    "$BOOT" --accel tcg --cpu max --ram "${KVM_NESTED_L1_RAM:-3G}" \
        --smp "${KVM_NESTED_L1_SMP:-2}" --timeout "$secs" \
        --start-timeout "${KVM_NESTED_L1_START_TIMEOUT:-300}" \
        --progress-timeout "${KVM_NESTED_L1_PROGRESS_TIMEOUT:-120}" \
        --append "sysctl.kernel.panic_on_rcu_stall=1 softlockup_panic=1" \
        --kernel "$GUEST_KERNEL" --initrd "$L1_INITRD" \
        --job "$plan" --results "$dir/l1" \
        -- -d cpu_reset -D "$dir/l1/cpu-resets.log" >"$dir/l1.boot.log" 2>&1
}

# split_l2_results DIR: every L2's files (from DIR/l1, and those of runs
# done in the kept attempts DIR/l1.failN) into DIR/runs/NAME/.
split_l2_results() {
    local dir=$1 f g name kept
    # the newest attempt first: a run done twice (a chain's FIRST) comes
    # from the boot that ran its THEN
    while IFS= read -r kept; do
        [ -d "$kept" ] || continue
        for f in "$kept"*.done; do
            [ -f "$f" ] || continue
            name=${f##*/}
            name=${name%.done}
            [ -e "$dir/l1/$name.done" ] && continue
            cp -p "$kept$name".* "$dir/l1/"
        done
    done < <(printf '%s\n' "$dir"/l1.fail*/ | sort -rV)
    for f in "$dir"/l1/*.results.raw; do
        [ -f "$f" ] || continue
        name=${f##*/}
        name=${name%.results.raw}
        mkdir -p "$dir/runs/$name"
        for g in "$dir/l1/$name".*; do
            cp "$g" "$dir/runs/$name/${g##*/"$name".}"
        done
        "$TOP/vm-images/split-results" "$f" "$dir/runs/$name" >/dev/null 2>&1 || true
    done
}

# l1_rig_failure DIR: why L1's boot in DIR/l1 failed, if it was the rig's
# fault (a kernel panic, a hang before the plan started, a silent console
# while it ran, or L1 resetting itself: boot-guest's guest-ended, with the
# triple faults QEMU's -d cpu_reset logged); else nothing.  A device bug
# cannot do any of these: the device runs in L2's QEMU, a process in L1.
l1_rig_failure() {
    local panic triple
    panic=$(grep -a -m1 'Kernel panic' "$1/l1/console.log" 2>/dev/null | tr -d '\r')
    if [ -n "$panic" ]; then
        echo "L1's kernel panicked: $panic"
    elif [ -f "$1/l1/start-timeout" ]; then
        echo "L1 hung before its plan started (no 'running job' after $(cat "$1/l1/start-timeout") s; console's last line: $(tail -n 1 "$1/l1/console.log" 2>/dev/null | tr -d '\r'))"
    elif [ -f "$1/l1/progress-timeout" ]; then
        echo "L1 stopped while it ran its plan (console silent for $(cat "$1/l1/progress-timeout") s, its heartbeat included; console's last line: $(tail -n 1 "$1/l1/console.log" 2>/dev/null | tr -d '\r'))"
    elif [ -f "$1/l1/guest-ended" ]; then
        triple=$(grep -c 'Triple fault' "$1/l1/cpu-resets.log" 2>/dev/null) || true
        echo "L1 reset itself while it ran its plan, without a panic (${triple:-0} triple faults in QEMU's reset log; console's last line: $(tail -n 1 "$1/l1/console.log" 2>/dev/null | tr -d '\r'))"
    fi
}

# boot_l1_retrying PLAN DIR TIMEOUT: boot_l1, and again if the rig failed
# (l1_rig_failure), up to L1_BOOTS boots in all; then split_l2_results.
# L1's kernel, on TCG's emulated SVM, now and then panics while it runs an
# L2 guest, on a corrupted or overflowed kernel stack ("corrupted stack end
# detected inside scheduler" in the idle task, "stack guard page was hit",
# "Fatal exception in interrupt" in exc_general_protection), before L2 has
# touched the device; and once L1 hung for good while it onlined its
# second vCPU (README.md, "Limits").  L1 then boots again, said on a "#"
# line (attempt N kept in DIR/l1.failN), with a plan that skips the L2 runs
# already done (their files are taken from the attempt that ran them); a
# rig failure on the last boot fails.  Sets l1_retries (0 .. L1_BOOTS - 1).
L1_BOOTS=3
boot_l1_retrying() {
    local plan=$1 dir=$2 secs=$3 rc=0 why done_runs
    l1_retries=0
    rm -rf "$dir"/l1.fail* "$dir/runs"
    boot_l1 "$plan" "$dir" "$secs" || rc=$?
    while [ "$rc" -ne 0 ] && [ $((l1_retries + 1)) -lt "$L1_BOOTS" ] &&
          why=$(l1_rig_failure "$dir") && [ -n "$why" ]; do
        l1_retries=$((l1_retries + 1))
        local keep="$dir/l1.fail$l1_retries"
        mv "$dir/l1" "$keep"
        mv "$dir/l1.boot.log" "$keep.boot.log"
        done_runs=$(l1_done_runs "$dir")
        echo "# $why; L1 boots again, $((l1_retries + 1)) of $L1_BOOTS, skipping the L2 runs done: ${done_runs:-none} (this attempt in $keep)"
        # shellcheck disable=SC2086  # done_runs: a word list
        plan_skipping "$plan" $done_runs >"$dir/plan.boot$((l1_retries + 1))"
        rc=0
        boot_l1 "$dir/plan.boot$((l1_retries + 1))" "$dir" "$secs" || rc=$?
    done
    split_l2_results "$dir"
    return "$rc"
}
