# Sourced by boot-guest: KVM on this host.  kvm_works decides whether KVM
# can run the guest, from a probe boot whose verdict is cached;
# kvm_fallback swaps the TCG-only deliveries for --kvm-delivery under KVM.
# Uses boot-guest's settings (qemu, kernel, initrd, cpu, kvm_device,
# kvm_probe, kvm_delivery, accel, specs, build) and its helpers (log,
# qpath, accel_arg, kernel_args, firmware).

# A minimal boot with -accel kvm that must reach the guest's init quickly:
# on some hosts /dev/kvm exists but cannot run ordinary guests.  The probe
# is its own QEMU with nothing the run has: no QMP socket, no devices, no
# caller arguments, its own temporary folder (console, log).

# probe_key: what the verdict depends on, as one line.
probe_key() {
    printf '%s|' "$(stat -L -c '%n %s %Y %i' "$qemu" "$kernel")" \
        "$kvm_device" "$cpu" "$(uname -srv)" \
        "$(grep -m1 '^model name' /proc/cpuinfo)" \
        "$(grep -m1 '^flags' /proc/cpuinfo | sha256sum | cut -c1-16)"
}

# kvm_probe_boot: 0 if the probe guest reached init; sets probe_reason.
kvm_probe_boot() {
    local dir pid n=$((${PROBE_SECS:-15} * 5)) ok=1 exited=0 err
    dir=$(mktemp -d "${TMPDIR:-/tmp}/cxlssd-kvm-probe.XXXXXX")
    "$qemu" "${firmware[@]}" -M q35 -accel "$(accel_arg kvm)" -m 512M -cpu "$cpu" \
        -nodefaults -nographic -no-reboot \
        -chardev "file,id=console,path=$(qpath "$dir/console.log")" -serial chardev:console \
        -kernel "$kernel" -initrd "$initrd" -append "$kernel_args" \
        </dev/null >"$dir/qemu.log" 2>&1 &
    pid=$!
    while [ "$n" -gt 0 ]; do
        if grep -qs 'cxl-ssd-init: started' "$dir/console.log"; then
            ok=0
            break
        fi
        grep -qs 'KVM internal error' "$dir/qemu.log" && break
        kill -0 "$pid" 2>/dev/null || { exited=1; break; }
        sleep 0.2
        n=$((n - 1))
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    err=$(grep -m1 -iE 'error|abort|failed|could not' "$dir/qemu.log" | tr -d '\r' | cut -c1-200)
    if [ "$ok" -eq 0 ]; then
        probe_reason="guest reached init under KVM"
    elif [ "$exited" -eq 1 ]; then
        probe_reason="QEMU exited before the guest's init: ${err:-no message}"
    elif [ -n "$err" ]; then
        probe_reason="guest stopped before its init: $err"
    else
        probe_reason="guest did not reach its init within ${PROBE_SECS:-15} s under KVM (no error from QEMU: this KVM cannot run it)"
    fi
    rm -rf "$dir"
    return "$ok"
}

# kvm_works: 0 if KVM can run the guest; sets probe_reason.  Uses the
# cached verdict unless --kvm-probe fresh.
kvm_works() {
    if [ "$kvm_device" = /dev/kvm ] && [ ! -w /dev/kvm ]; then
        probe_reason="no usable /dev/kvm"
        return 1
    fi
    local cache_dir=${CXLSSD_KVM_PROBE_DIR:-$build/kvm-probe} cache verdict
    cache=$cache_dir/$(probe_key | sha256sum | cut -c1-32)
    if [ "$kvm_probe" = cached ] && [ -f "$cache" ]; then
        verdict=$(sed -n 's/^verdict=//p' "$cache")
        probe_reason="$(sed -n 's/^reason=//p' "$cache") (cached verdict of $(sed -n 's/^probed_utc=//p' "$cache"), $cache; --kvm-probe fresh probes again)"
        [ "$verdict" = kvm ]
        return
    fi
    log "probing KVM ($kvm_device): a minimal boot must reach the guest's init within ${PROBE_SECS:-15} s"
    if kvm_probe_boot; then verdict=kvm; else verdict=tcg; fi
    if mkdir -p "$cache_dir" 2>/dev/null; then
        printf 'verdict=%s\nreason=%s\nprobed_utc=%s\nkey=%s\n' "$verdict" "$probe_reason" \
            "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(probe_key)" >"$cache.tmp" &&
            mv "$cache.tmp" "$cache"
    fi
    [ "$verdict" = kvm ]
}

# kvm_fallback FILE: under KVM, --kvm-delivery replaces TCG-only deliveries
# (the device refuses them under KVM) and says so, in the log and in FILE.
kvm_fallback() {
    local i s was
    [ "$accel" = kvm ] && [ -n "$kvm_delivery" ] || return 0
    for i in "${!specs[@]}"; do
        s=${specs[$i]}
        if [[ $s == cxl-ssd,* ]] && [[ ,$s, =~ ,delivery=(tlb|sigbus), ]]; then
            was=${BASH_REMATCH[1]}
            specs[$i]=$(sed -E "s/(^|,)delivery=$was(,|$)/\1delivery=$kvm_delivery\2/" <<<"$s")
            log "delivery: $kvm_delivery instead of $was (delivery=$was needs TCG; the accelerator is kvm)"
            printf 'delivery_fallback=%s->%s (delivery=%s needs TCG)\n' "$was" "$kvm_delivery" \
                "$was" >>"$1"
        fi
    done
    device=${specs[0]}
}
