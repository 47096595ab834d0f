"""bench-floor's (c): the device in TCG boots of vm-images/boot-guest, each
case the chase on one of the boot's cxl-ssd devices, run in turn round
by round; and the thread scaling from those boots."""

import json
import os
import subprocess

import tables
import vcpu_switch
from chase import CACHE_BYTES, CHASE, fmt, overlapped_ratio

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

VM_DEVICE = f"cxl-ssd,cache-size={CACHE_BYTES >> 20}M,precondition=on,"
# The delivery boot's eviction per delivery (one thread missing): tlb at
# sync, where a miss evicts its victim inside its own NAND wait and clean
# victims stay mapped (P50 6.66-6.67 us at sync and at batch, P99 6.9-7.2
# against 8.7-9.8 us); the host-fault deliveries at batch, where a miss
# unmaps a batch inside its wait now and then and no worker's unmaps shoot
# down the spinning vCPU (one boot, P50 / mean: sigbus 8.90-8.92 / 11.9-12.1
# us at batch against 18.0-19.5 / 25.9-29.5 at background; busy 32.3-33.0
# / 32.7-33.3 against 33.4-34.6 / 56.6-57.7; poll alike).
VM_EVICTION = {"poll": "batch", "busy": "batch",
               "sigbus": "batch", "tlb": "sync"}
# the scaling boot's devices: bql=on needs a handler thread (poll: it
# sleeps, so both vCPUs can run on the 2 cores), bql=off the in-thread path;
# and both with tlb (make run's TCG default), whose misses are served on the
# vCPU threads with the BQL taken there for bql=on
SCALING = (("on", "poll"), ("off", "sigbus"), ("on", "tlb"), ("off", "tlb"))
# ... each at the eviction its two threads overlap best with: not sync,
# where each host unmap's shootdown waits for the other vCPU's CPU (25-35
# us a miss); background, but batch for the bql=on poll device, whose
# misses one at a time leave no CPU for the worker: its 2-thread runs had
# overlap_fraction 0.81-0.97 at background (2 and 0 of 5 rounds >= 0.9 in
# two boots) against 0.986-0.998 at batch (5 of 5 in both).  sigbus at
# batch loses it (0.56-0.89: a batch's scattered unmaps shoot down the
# other vCPU, mean 2t/1t 4.1-4.4 against 1.9-2.4), tlb keeps clean victims
# mapped (bench/floor/README.md).
SCALING_EVICTION = {("on", "poll"): "batch", ("off", "sigbus"): "background",
                    ("on", "tlb"): "background", ("off", "tlb"): "background"}
# ... and the tlb pair at sync, in a boot of their own: every miss evicts
# its own victim on its vCPU thread, where at background the evictor does
# it on the CPU a lone vCPU leaves free (bench/floor/README.md)
SCALING_SYNC = (("on", "tlb"), ("off", "tlb"))


def scaling_key(bql, delivery):
    """The scaling line's key: the first two keep their historical names."""
    return f"bql_{bql}" + ("_tlb" if delivery == "tlb" else "")


def vm_stats(outdir, dev):
    """Device @dev's stats from a --collect boot ({} if missing)."""
    try:
        with open(os.path.join(outdir, f"stats-cxl-vmem{dev}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def vm_one_boot(outdir, devices, cases, samples, rounds, log_path, smp=2):
    """(c) one TCG guest with one cxl-ssd device per entry of @devices
    (extra properties); @cases: [(label, device index, threads)], each the
    same all-miss chase on that device, run in turn, @rounds times
    (interleaved, so every case sees the same drift of the boot).  Returns
    {label: [mio summary line dicts]}, empty lists on a failed boot."""
    os.makedirs(outdir, exist_ok=True)        # boot-guest wants it empty
    job = outdir + "-job.sh"
    chase = " ".join(CHASE)
    with open(job, "w") as f:
        f.write(f"set -e\nfor r in $(seq 1 {rounds}); do\n")
        for label, dev, threads in cases:
            f.write(f"  mio --target \"$DAX{dev}\" {chase} --cache-bytes {CACHE_BYTES} "
                    f"--samples {samples} --warmup-passes 1 --threads {threads} "
                    f"| sed -n \"s/^mio: /mio-{label}: /p\"\n")
        f.write("done\n")
    cmd = [os.path.join(TOP, "vm-images", "boot-guest"), "--job", job, "--results", outdir,
           "--smp", str(smp), "--timeout", "900", "--collect"]
    for props in devices:
        cmd += ["--device", VM_DEVICE + props]
    with open(log_path, "a") as f:
        subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    res = {label: [] for label, _, _ in cases}
    path = os.path.join(outdir, "job.log")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                for label in res:
                    tag = f"mio-{label}: "
                    if line.startswith(tag):
                        res[label].append(tables.parse_kv(line[len(tag):]))
    return res


def vm_scaling_boot(args, lines, devices, evictions, suffix, scaling, vmlog):
    """Thread scaling in one boot: one device per (bql, delivery) of
    @devices at its eviction in @evictions, 1 and N threads on each in
    turn; per round Nt/1t of the P50 and of the mean, median over the rounds whose N-thread
    run overlapped, and from the per-miss records the switch fraction and
    the waits' overrun.  Appends the lines (keys ending in @suffix) and
    returns the N-thread runs' overlap fractions."""
    thread_counts = [1] + scaling
    cases = [(f"bql{bql}-{d}-t{t}", i, t) for i, (bql, d) in enumerate(devices)
             for t in thread_counts]
    name = "vm-scaling" + suffix.replace("_", "-")
    scdir = os.path.join(args.out, name)
    records = [os.path.join(args.out, f"{name}-records-{i}.csv") for i in range(len(devices))]
    per = vm_one_boot(scdir, [f"bql={bql},delivery={d},eviction={evictions[(bql, d)]},"
                              f"record={rec}"
                              for (bql, d), rec in zip(devices, records)], cases,
                      args.scaling_samples, args.vm_rounds, vmlog, smp=scaling[-1])
    vm_overlap = []
    for i, ((bql, delivery), rec) in enumerate(zip(devices, records)):
        key = scaling_key(bql, delivery) + suffix
        one = per[f"bql{bql}-{delivery}-t1"]
        for n in scaling:
            many = per[f"bql{bql}-{delivery}-t{n}"]
            ofs = [float(b.get("overlap_fraction", 0)) for b in many]
            vm_overlap += ofs
            ratio, rounds = overlapped_ratio([float(a["p50_ns"]) for a in one],
                                             [float(b["p50_ns"]) for b in many], ofs)
            lines.append(f"vm_scaling_{n}t_over_1t_p50_{key}={fmt(ratio)} "
                         f"(delivery={delivery}, eviction={evictions[(bql, delivery)]}, "
                         f"{rounds})")
            # the mean weighs the waits for the BQL the P50 can miss
            # when half the misses wait and half do not
            ratio, rounds = overlapped_ratio([float(a["mean_ns"]) for a in one],
                                             [float(b["mean_ns"]) for b in many], ofs)
            lines.append(f"vm_scaling_{n}t_over_1t_mean_{key}={fmt(ratio)} ({rounds})")
        if scaling != [2]:
            continue        # the records' lines are for two vCPUs
        # whether the two vCPUs really missed at the same time
        # (bench/floor/vcpu_switch.py): ~0.5 if so, near 0 taking turns
        # (only from complete records: a dropped record is a hole)
        dropped = vm_stats(scdir, i).get("records_dropped", -1)
        complete = dropped == 0 and os.path.exists(rec)
        sw, n = vcpu_switch.vcpu_switch_fraction(rec) if complete else (float("nan"), 0)
        lines.append(f"vm_scaling_vcpu_switch_fraction_{key}={fmt(sw)} "
                     f"(share of consecutive misses of the 2-thread phases taken by the "
                     f"other vCPU, {n} misses, records dropped {dropped}; ~0.5: both vCPUs "
                     f"missed at once, near 0: they took turns)")
        # the 1-thread baseline's waits against the 2-thread phases'
        alone, together = (vcpu_switch.wait_overrun_us_p50(rec) if complete
                           else (float("nan"), float("nan")))
        lines.append(f"vm_scaling_wait_overrun_us_p50_{key}={fmt(alone)} (NAND waits' end "
                     f"after their deadline, clean reads, one vCPU missing; {fmt(together)} "
                     f"with both)")
    return vm_overlap
