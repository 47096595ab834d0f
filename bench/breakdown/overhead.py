"""Part overhead of bench/breakdown/fig1: the cost of per-miss recording,
measured inside one run (record-ab: the device records only alternate
runs of N served misses; fig1's doc)."""

import os
import statistics

import manifest
import stats
from runs import guest_samples, load_records, points_of, run_spec, say, \
    untimed_misses

SPEC = "breakdown-overhead.spec"


def recorded_split(pname, point, pdir):
    """(guest samples whose miss was recorded, those whose miss was not,
    device stats), or None when the samples do not line up with the
    misses' ordinals (said why)."""
    n_ab = int(point["device.record-ab"])
    guest = guest_samples(pdir)
    recs = load_records(pdir)
    first = untimed_misses(pdir)
    st = stats.summarize_point(pdir, point).get("device_stats") or {}
    thr = stats.miss_threshold_ns(point)
    if not guest or first is None or any(g < thr for g in guest):
        say(f"overhead_point={pname} not_aligned")
        return None
    total = first + len(guest)
    # ordinals 0..total-1; those in even runs of n_ab were recorded
    want = sum(1 for o in range(total) if not (o // n_ab) & 1)
    if len(recs) != want or st.get("misses") != total:
        say(f"overhead_point={pname} not_aligned records={len(recs)} "
            f"expected={want} misses={st.get('misses')} ordinals={total}")
        return None
    on = [g for i, g in enumerate(guest) if not ((first + i) // n_ab) & 1]
    off = [g for i, g in enumerate(guest) if ((first + i) // n_ab) & 1]
    return on, off, st


def point_overhead(pname, point, pdir):
    """(overhead % of the mean below the run's P99, of the full mean, of
    the P50) of one run, printed; None if it does not line up."""
    split = recorded_split(pname, point, pdir)
    if split is None:
        return None
    on, off, st = split
    p99 = stats.percentile(sorted(on + off), 99)
    m = {}
    for name, v in (("on", on), ("off", off)):
        b = [x for x in v if x <= p99]
        m[name] = (sum(v) / len(v), sum(b) / len(b))
    p50_on = stats.percentile(sorted(on), 50)
    p50_off = stats.percentile(sorted(off), 50)
    full = (m["on"][0] / m["off"][0] - 1) * 100.0
    trim = (m["on"][1] / m["off"][1] - 1) * 100.0
    say(f"overhead_point={pname} record_ab={point['device.record-ab']} "
        f"samples_on={len(on)} samples_off={len(off)} "
        f"mean_us_on={m['on'][0] / 1000:.3f} mean_us_off={m['off'][0] / 1000:.3f} "
        f"mean_below_p99_us_on={m['on'][1] / 1000:.3f} "
        f"mean_below_p99_us_off={m['off'][1] / 1000:.3f} "
        f"p50_us_on={p50_on / 1000:.3f} "
        f"p50_us_off={p50_off / 1000:.3f} "
        f"overhead_pct={trim:.2f} overhead_pct_full_mean={full:.2f} "
        f"records_written={st.get('records_written')} "
        f"records_dropped={st.get('records_dropped')}")
    return trim, full, (p50_on / p50_off - 1) * 100.0


def part_overhead(out, args):
    reps = "|".join(str(i) for i in range(1, args.overhead_repeats + 1))
    sets = [f"run.repeat={reps}"]
    if args.samples:
        sets.append(f"mio.samples={args.samples}")
    odir = os.path.join(out, "overhead")
    rc = run_spec(SPEC, odir, sets)
    runs = []
    for pname, point in points_of(SPEC, sets):
        pdir = os.path.join(odir, pname)
        if manifest.is_ok(pdir):
            r = point_overhead(pname, point, pdir)
            if r is not None:
                runs.append(r)
    if not runs:
        say("record_overhead_pct=missing")
        return rc, None
    trim_r, full_r, p50_r = zip(*runs)
    say(f"record_overhead_runs={len(trim_r)} "
        f"record_overhead_pct_full_mean={statistics.median(full_r):.2f} "
        f"record_overhead_pct_p50={statistics.median(p50_r):.2f} "
        f"record_overhead_pct_runs={','.join('%.2f' % v for v in trim_r)} "
        "record_overhead_stat=median_over_runs_of_paired_in_run_ratio_of_"
        "mean_miss_below_run_p99")
    v = statistics.median(trim_r)
    say(f"record_overhead_pct={v:.2f}")
    return rc, v
