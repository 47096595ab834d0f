# Sourced by boot-guest: the CXL topology of the boot (memdevs, label
# areas, host bridge, root ports, devices, fixed memory window) and the
# guest's size for it.  Uses boot-guest's option variables (devices,
# specs, mode, mem_size, mem_file, lsa_file, results, ram, cpu) and qpath,
# die.

# bytes SIZE: SIZE (K/M/G/T suffix) in bytes.
bytes() {
    local n=${1%[KkMmGgTt]} u=${1: -1}
    [[ $n =~ ^[0-9]+$ ]] || die "bad size: $1"
    case $u in
        [Kk]) echo $((n << 10)) ;; [Mm]) echo $((n << 20)) ;;
        [Gg]) echo $((n << 30)) ;; [Tt]) echo $((n << 40)) ;; *) echo "$n" ;;
    esac
}

# size_guest: guest RAM and physical address bits for the devices.  A
# device onlined as system RAM needs its memmap (struct page, 64 bytes per
# 4 KiB page) in guest RAM; the CXL window sits above RAM, PCI holes and
# hotplug space, so a large device needs more than qemu64's 40 phys bits.
size_guest() {
    local per i nsys=0 memmap need top bits=40
    per=$(bytes "$mem_size")
    for ((i = 0; i < devices; i++)); do
        [ "$(device_mode "$i")" = system-ram ] && nsys=$((nsys + 1))
    done
    memmap=$(( nsys * per / 64 ))
    need=$(( ((1 << 30) + memmap + (256 << 20) - 1) / (256 << 20) * (256 << 20) ))
    if [ -z "$ram" ] && [ "$nsys" -eq 0 ]; then
        ram=1G
    elif [ -z "$ram" ]; then
        ram=$(( need >> 20 ))M
    elif [ "$nsys" -gt 0 ] && [ "$(bytes "$ram")" -lt $(( memmap + (512 << 20) )) ]; then
        die "--ram $ram is too small for $nsys system-ram device(s) of $mem_size: their memmap takes $((memmap >> 20)) MiB (--ram $((need >> 20))M or more)"
    fi
    # RAM above 4G, 1 GiB-aligned hotplug space and the window, with slack.
    top=$(( (4 << 30) + $(bytes "$ram") + (2 << 30) + devices * per + (256 << 30) ))
    while [ $(( top >> bits )) -gt 0 ] && [ "$bits" -lt 52 ]; do bits=$((bits + 1)); done
    if [ "$bits" -gt 40 ] && [[ ,$cpu, != *,phys-bits=* ]]; then
        cpu+=",phys-bits=$bits"
    fi
}

# device_mode I: the --mode entry of device I (the last one repeats).
device_mode() {
    local modes
    IFS=, read -r -a modes <<<"$mode"
    echo "${modes[$(($1 < ${#modes[@]} ? $1 : ${#modes[@]} - 1))]}"
}

# persistent I: 0 if device I is a persistent one (a pmem mode).
persistent() {
    case $(device_mode "$1") in fsdax | sector | pmem-devdax) return 0 ;; esac
    return 1
}

# any_persistent: 0 if some device is persistent.
any_persistent() {
    local i
    for ((i = 0; i < devices; i++)); do
        persistent "$i" && return 0
    done
    return 1
}

# lsa_path I: device I's label storage area: --lsa-file, else next to its
# --mem-file (the labels live as long as the data), else in the results
# folder (labels for this boot only).
lsa_path() {
    if [ -n "$lsa_file" ]; then
        echo "${lsa_file//\{i\}/$1}"
    elif [ -n "$mem_file" ]; then
        echo "${mem_file//\{i\}/$1}.lsa"
    else
        echo "${results:-.}/lsa$1.raw"
    fi
}

# cxl_args: the CXL topology (memdevs, label areas, host bridge, root
# ports, devices, fixed memory window) in the array cxl.  One volatile
# device keeps the historical command line exactly.  A persistent device
# gets persistent-memdev= and lsa= (an LSA_SIZE file) instead of
# volatile-memdev=.
LSA_SIZE=1M
cxl_args() {
    local i spec memdev per win objs=() rps=() devs=() capacity
    for ((i = 0; i < devices; i++)); do
        spec=${specs[$((i < ${#specs[@]} ? i : ${#specs[@]} - 1))]}
        spec=${spec//\{i\}/$i}
        # serial numbers order the devices in the guest; a persistent
        # device needs a nonzero one (its labels are keyed on it): with
        # any persistent device they start at 1
        if ! [[ ,$spec, == *,sn=* ]]; then
            if any_persistent; then
                spec+=",sn=$((i + 1))"
            elif [ "$devices" -gt 1 ]; then
                spec+=",sn=$i"
            fi
        fi
        if [ -n "$mem_file" ]; then
            memdev="memory-backend-file,id=vmem$i,share=on,mem-path=$(qpath "${mem_file//\{i\}/$i}"),size=$mem_size"
        else
            memdev="memory-backend-memfd,id=vmem$i,share=on,size=$mem_size"
        fi
        objs+=(-object "$memdev")
        capacity="volatile-memdev=vmem$i"
        if persistent "$i"; then
            objs+=(-object "memory-backend-file,id=lsa$i,share=on,mem-path=$(qpath "$(lsa_path "$i")"),size=$LSA_SIZE")
            capacity="persistent-memdev=vmem$i,lsa=lsa$i"
        fi
        rps+=(-device "cxl-rp,port=$i,bus=cxl.1,id=root_port$((13 + i)),chassis=0,slot=$((2 + i))")
        devs+=(-device "$spec,bus=root_port$((13 + i)),$capacity,id=cxl-vmem$i")
    done
    [ "$devices" -gt 0 ] || return 0    # an NVDIMM-only boot
    # The window must hold every device's region (4G: the historical size).
    per=$(bytes "$mem_size")
    win=$(( (devices * per + (256 << 20) - 1) / (256 << 20) * 256 ))
    if [ "$win" -le 4096 ]; then win=4G; else win=${win}M; fi
    cxl=("${objs[@]}" -device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1 "${rps[@]}"
         "${devs[@]}" -M "cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=$win")
}

