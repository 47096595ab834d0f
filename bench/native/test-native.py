#!/usr/bin/env python3
"""TAP test of cxlssd-native (the host-native comparator), tiny runs:
- usage: --help lists the device properties; bad values are rejected with
  the property named, as -device cxl-ssd would;
- integrity: MIO --verify over 4x the cache (2 threads, 2 passes, new data
  every pass, so pages are evicted dirty and refilled) with 0 mismatches,
  for every delivery mode (sigbus, busy, poll), and with --verify-overlap
  (threads share pages); misses counted (stats json and misses.csv agree);
- chase: random chase over 1.5x the cache per delivery mode: one breakdown
  row per miss sample, components summing to the total exactly, totals equal
  to MIO's samples, no miss faster than the configured NAND read, the VM
  runner's summarize_point() reads the folder unchanged;
- overlap: two threads over 1.5x the cache chase through one window (it
  holds 90% of the samples, rates within 2:1) and hit no more than one
  thread does;
- the plain-memory baseline (--ram-baseline): chased in the same MIO run as
  the device, samples interleaved; writes mio-ram-*.csv with as many samples
  as mio-dax-*.csv and the same chain.
Needs root (userfaultfd); SKIPs otherwise.  NATIVE=path of the binary.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [os.path.join(TOP, "bench", "lib"), os.path.join(TOP, "tests")]
import manifest  # noqa: E402
import stats  # noqa: E402
import tables  # noqa: E402
import tap  # noqa: E402
from components import NATIVE_COMPONENTS  # noqa: E402
from tap import diag, ok  # noqa: E402

NATIVE = os.environ.get("NATIVE", os.path.join(TOP, "build", "bench", "cxlssd-native"))


def run(args, timeout=300):
    """(status, stdout, stderr) of one cxlssd-native run; a run takes
    seconds, and the timeout only catches a hang: a clean-clone CI run with
    the host's 2 CPUs shared by other jobs (load average 11) took over 50 s
    for one 20000-sample chase pinned to a CPU."""
    try:
        p = subprocess.run([NATIVE] + args, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return -1, e.stdout or "", f"timed out after {timeout} s: {e.stderr or ''}"
    return p.returncode, p.stdout, p.stderr


def uneven_cpus(device, chase):
    """Why two threads cannot progress at one rate on this host, or None:
    the same 1-thread chase pinned to each of the first two CPUs, twice
    each, interleaved.  On some virtual hosts of the project's kind one
    vCPU runs it 25% slower than the other (mean 9.3 against 11.8 us a
    sample), and in a 2-thread run the shared cache then widens the gap
    (the faster thread keeps more of its pages resident: 0.76 against
    0.57 hit fraction, 20000 against 7900 samples)."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        return None
    means = {c: [] for c in cpus}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(2):
            for c in cpus:
                rc, out, _ = run(device + ["--out", os.path.join(tmp, f"cpu{c}"), "--"]
                                 + chase + ["--threads", "1", f"--pin={c}"])
                m = lines_with(out, "mio:")
                if rc or not m:
                    return None
                means[c].append(float(m[0]["mean_ns"]))
    slow, fast = max(min(v) for v in means.values()), min(min(v) for v in means.values())
    if slow <= fast * 1.15:
        return None
    return ("this host's CPUs run the same 1-thread chase at different rates ("
            + ", ".join(f"CPU {c} mean {min(v) / 1000:.1f} us" for c, v in means.items())
            + ", best of 2 runs each): two threads cannot sample at one rate")


def lines_with(text, prefix):
    return [tables.parse_kv(l) for l in text.splitlines() if l.startswith(prefix)]


def main():
    if os.geteuid() != 0 and not os.access("/dev/userfaultfd", os.R_OK | os.W_OK):
        tap.skip_all("needs root or /dev/userfaultfd")
    if not os.access(NATIVE, os.X_OK):
        tap.skip_all(f"{NATIVE} not built")
    tmp = tempfile.mkdtemp(prefix="cxlssd-native-test-")

    # --- usage ---
    rc, out, _ = run(["--help"])
    ok(rc == 0 and "delivery" in out and "cache-size" in out and "nand-read-ns" in out,
       "--help lists native and model properties")
    rc, _, err = run(["--device", "nand-channels=0", "--", "--samples", "10"])
    ok(rc == 2 and "nand-channels=0" in err, f"nand-channels=0 rejected: {err.strip()}")
    rc, _, err = run(["--device", "delivery=carrier-pigeon"])
    ok(rc == 2 and "delivery=carrier-pigeon" in err, "unknown delivery rejected")
    rc, _, err = run(["--device", "bql=on"])
    ok(rc == 2 and "bql" in err, "bql=on rejected natively")

    small = ["--size", "16M", "--device", "cache-size=1M,nand-prog-ns=20000"]

    # --- integrity over 4x the cache ---
    cases = [("sigbus", []), ("busy", []), ("poll", []),
             ("sigbus", ["--verify-overlap"])]
    for delivery, extra in cases:
        name = f"verify-{delivery}{'-overlap' if extra else ''}"
        outdir = os.path.join(tmp, name)
        rc, out, err = run(small + ["--delivery", delivery, "--out", outdir, "--",
                                    "--verify", "--wss-bytes", "4M", "--threads", "2",
                                    "--verify-passes", "2", "--quiet"] + extra)
        v = lines_with(out, "mio-verify:")
        nat = lines_with(out, "native:")
        if not ok(rc == 0 and v and v[0].get("mismatches") == "0" and nat,
                  f"{name}: 0 mismatches over 4x the cache (rc={rc})"):
            diag(out[-2000:] + err[-2000:])
            continue
        nat = nat[0]
        st = tables.read_json(os.path.join(outdir, "stats-cxl-vmem0.json"))
        recs = tables.read_csv(os.path.join(outdir, "misses.csv"))
        ok(st["misses"] >= 1024 and st["evictions_dirty"] > 0 and
           len(recs) == int(nat["records"]) and len(recs) >= st["misses"] and
           st["records_dropped"] == 0 and st["faults"] >= st["misses"],
           f"{name}: misses counted: misses={st['misses']} records={len(recs)} "
           f"faults={st['faults']} dirty_evictions={st['evictions_dirty']} "
           f"sigbus={st['sigbus_faults']}")
        ok((st["sigbus_faults"] > 0) == (delivery == "sigbus"),
           f"{name}: served by the {delivery} path")

    # --- chase with breakdown, per delivery mode ---
    for delivery in ("sigbus", "busy", "poll"):
        outdir = os.path.join(tmp, f"chase-{delivery}")
        rc, out, err = run(["--size", "16M", "--device",
                            "cache-size=1M,precondition=on,eviction=background",
                            "--delivery", delivery, "--out", outdir, "--",
                            "--pattern", "rand", "--stride", "4096",
                            "--wss-ratio", "1.5", "--samples", "2000", "--quiet"])
        bdl = lines_with(out, "native-breakdown:")
        if not ok(rc == 0 and bdl, f"chase-{delivery}: ran (rc={rc})"):
            diag(out[-2000:] + err[-2000:])
            continue
        rows = tables.read_csv(os.path.join(outdir, "breakdown.csv"))
        comps = NATIVE_COMPONENTS
        bad_sum = [r for r in rows
                   if sum(int(r[c]) for c in comps) != int(r["total_ns"])]
        neg = [r for r in rows if any(int(r[c]) < 0 for c in comps)]
        ok(len(rows) > 1000 and not bad_sum and not neg,
           f"chase-{delivery}: {len(rows)} breakdown rows, components sum to "
           f"the total in every row ({len(bad_sum)} do not)")
        raw = tables.read_column(os.path.join(outdir, "mio-dax-raw.csv"), "ns_per_load")
        worst = max((abs(int(r["total_ns"]) - raw[int(r["sample"])]) /
                     raw[int(r["sample"])] for r in rows), default=1)
        ok(worst < 0.02, f"chase-{delivery}: totals match MIO's samples "
           f"(worst relative difference {worst:.4f})")
        misses = [v for v in raw if v >= 3100]
        ok(len(rows) == len(misses) and int(bdl[0]["unmatched_slow_samples"]) == 0,
           f"chase-{delivery}: one row per miss sample ({len(rows)} rows, "
           f"{len(misses)} samples >= 3.1 us)")
        fills = [int(r["total_ns"]) for r in rows if r["waited_loading"] == "0"]
        ok(fills and min(fills) >= 6200,
           f"chase-{delivery}: no miss faster than tR + transfer "
           f"(min {min(fills) if fills else 'n/a'} ns)")
        point = {"device.nand-read-ns": "3000", "device.nand-xfer-ns": "3200"}
        s = stats.summarize_point(outdir, point)
        man = manifest.read(outdir)
        ok(s.get("miss_ns_count") == len(misses) and s.get("device_records", 0) > 0 and
           s.get("device_misses", 0) > 0 and man["status"] == "ok" and
           man["device_properties"]["delivery"] == delivery,
           f"chase-{delivery}: summarize_point reads the folder "
           f"(miss p50 {s.get('miss_ns_p50', 0):.0f} ns, overhead p50 "
           f"{s.get('miss_overhead_us_p50', 0):.2f} us)")
        diag(" ".join(f"{k}={v}" for k, v in bdl[0].items() if k.startswith("p50_")))

    # --- two threads over 1.5x the cache: they sample over one window ---
    # With both threads chasing through one window, each 0.75x-cache region
    # competes with the other and the hit fraction stays that of one thread
    # chasing the whole 1.5x (about 1/WSS, as a chase visits each page's
    # lines without repeats within a cycle).  Synchronous eviction: no
    # evictor thread competes with the two chasers for these 2 cores, so
    # both progress at one rate (measured with a compile running on both
    # cores: overlap_fraction 0.89-0.97, hit fraction 0.651-0.672 against
    # one thread's 0.665).  A run counts when the window holds at least 90%
    # of the samples taken (the threads started together) and the slower
    # thread took at least a third of them (up to 3 tries for one), and
    # fails above one thread's fraction + 0.05.  Uneven rates raise the hit
    # fraction (the faster thread's pages stay longer): Che's approximation
    # for FIFO gives 0.667 at equal rates, 0.680 at 62:38, 0.692 at 2:1,
    # inside the 0.05, and 0.726 at 3:1.  Measured alone on this host's 2
    # cores: 12 runs in a row gave shares 0.31-0.50 (median 0.49; one
    # below 1/3) at hit fractions 0.660-0.697, the window always all of the
    # samples; the 3 tries of a clean-clone CI run gave 0.38-0.43
    # (overlap_fraction 0.76-0.86, which the former count at 0.9 refused).
    # Threads that did not chase together, the failure this catches, gave
    # 0.70-1.00: MIO's threads, when each waited at the barrier after its
    # own warm-up, left the cache to the last one (20000 samples at 0.98
    # against 500: a share of 0.02).
    chase = ["--pattern", "rand", "--stride", "64", "--wss-ratio", "1.5",
             "--samples", "20000", "--quiet"]
    device = ["--size", "64M", "--device",
              "cache-size=8M,precondition=on,eviction=sync",
              "--delivery", "sigbus", "--no-breakdown"]

    def hit_fraction(outdir):
        raw = tables.read_column(os.path.join(outdir, "mio-dax-raw.csv"),
                                 "ns_per_load")
        return raw, (sum(1 for v in raw if v < 3100) / len(raw) if raw else 1.0)

    def min_thread_share(outdir):
        """The smaller thread's share of the window's samples: threads that
        progress at equal rates each take about half."""
        th = tables.read_column(os.path.join(outdir, "mio-dax-raw.csv"), "thread")
        return min(th.count(t) for t in (0, 1)) / len(th) if th else 0.0

    outdir = os.path.join(tmp, "overlap-1t")
    rc, out, err = run(device + ["--out", outdir, "--"] + chase + ["--threads", "1"])
    hf1 = hit_fraction(outdir)[1] if rc == 0 else 1.0
    bound = hf1 + 0.05
    if not ok(rc == 0 and 0.55 <= hf1 <= 0.8,
              f"overlap: one thread over 1.5x the cache hits {hf1:.3f} (about 1/WSS)"):
        diag(out[-2000:] + err[-2000:])
    overlapped = None
    tries = []
    counted_run = ("a 2-thread run whose window holds >= 90% of the samples "
                   "taken, each thread >= 1/3 of them, in 3 tries")
    for attempt in range(3):
        outdir = os.path.join(tmp, f"overlap{attempt}")
        rc, out, err = run(device + ["--out", outdir, "--"] + chase + ["--threads", "2"])
        m = lines_with(out, "mio:")
        raw, hf = hit_fraction(outdir) if rc == 0 else ([], 1.0)
        if not ok(rc == 0 and m and len(raw) == int(m[0]["samples_total"]),
                  f"overlap try {attempt}: 2 threads ran, the raw file holds the "
                  f"{len(raw)} samples of the overlap window"):
            diag(out[-2000:] + err[-2000:])
            break
        of = float(m[0]["overlap_fraction"])
        taken = int(m[0]["samples_taken"])
        ok(0 <= of <= len(raw) / taken + 1e-3 and 20000 <= taken <= 40000,
           f"overlap try {attempt}: overlap_fraction={of} ({len(raw)} of {taken} "
           f"samples taken in the window)")
        share = min_thread_share(outdir)
        tries.append(f"overlap_fraction={of} window={len(raw) / taken:.2f} "
                     f"share={share:.2f} hit_fraction={hf:.3f}")
        if len(raw) >= 0.9 * taken and share >= 1 / 3:
            overlapped = hf
            break
    for t in tries:
        diag(t)
    uneven = None if overlapped is not None else uneven_cpus(device, chase)
    if uneven:
        for what in (counted_run,
                     "a 2-thread run chasing together hits no more than one thread"):
            tap.skip(f"overlap: {what}", uneven)
    else:
        ok(overlapped is not None, f"overlap: {counted_run}")
        ok(overlapped is not None and overlapped <= bound,
           f"overlap: a 2-thread run chasing together hits "
           f"{overlapped if overlapped is not None else float('nan'):.3f} "
           f"<= {bound:.3f}, one thread's {hf1:.3f} + 0.05")

    # --- plain-memory baseline, interleaved with the device in one MIO run ---
    outdir = os.path.join(tmp, "wss035")
    rc, out, err = run(["--size", "16M", "--device", "cache-size=1M", "--ram-baseline",
                        "--out", outdir, "--", "--pattern", "rand", "--stride", "64",
                        "--wss-ratio", "0.35", "--loads-per-sample", "100",
                        "--samples", "200", "--quiet"])
    ram = tables.read_csv(os.path.join(outdir, "mio-ram-summary.csv"))
    dax = tables.read_csv(os.path.join(outdir, "mio-dax-summary.csv"))
    ok(rc == 0 and ram and dax and ram[0]["chain_check"] == "ok" and
       ram[0]["target"] == "memfd" and dax[0]["target"] == "cxl-ssd-native",
       f"--ram-baseline writes mio-ram-*.csv (dax mean {dax[0]['mean_ns'] if dax else '?'} "
       f"ns, ram mean {ram[0]['mean_ns'] if ram else '?'} ns per load)")
    if not (ram and dax):
        diag(out[-2000:] + err[-2000:])
    t, b = lines_with(out, "mio:"), lines_with(out, "mio-baseline:")
    pair = lines_with(out, "mio-interleave:")
    ok(t and b and pair and t[0]["chain_hash"] == b[0]["chain_hash"] and
       b[0].get("interleaved_with") == "cxl-ssd-native" and
       pair[0].get("order") == "abba",
       f"one MIO run, the same chain on both sides, interleaved "
       f"(ratio_p50={pair[0].get('ratio_p50') if pair else '?'})")
    rraw = tables.read_column(os.path.join(outdir, "mio-ram-raw.csv"), "ns_per_load")
    draw = tables.read_column(os.path.join(outdir, "mio-dax-raw.csv"), "ns_per_load")
    ok(len(rraw) == len(draw) == 200 and ram[0]["samples"] == dax[0]["samples"] == "200",
       f"same number of samples on both sides ({len(draw)}, {len(rraw)})")
    man = manifest.read(outdir)
    ok(man.get("ram_baseline") == "interleaved" and man["status"] == "ok" and
       os.path.exists(os.path.join(outdir, "mio-ram.out")) and
       all(os.path.exists(os.path.join(outdir, f"mio-ram-{k}.csv"))
           for k in ("cdf", "hist")),
       "manifest says interleaved; mio-ram.out, -cdf, -hist written")
    rc, out, err = run(["--size", "16M", "--device", "cache-size=1M", "--ram-baseline",
                        "--", "--verify", "--wss-bytes", "1M", "--quiet"])
    ok(rc == 2 and "--baseline" in err, "--ram-baseline with --verify is a usage error")
    rc = tap.done()
    if rc:
        diag(f"outputs kept in {tmp}")
    else:
        shutil.rmtree(tmp)
    return rc


if __name__ == "__main__":
    sys.exit(main())
