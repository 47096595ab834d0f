"""Part compensate of bench/breakdown/fig1: compensate=on measured, then
compensate-ns calibrated per delivery mode over rounds (fig1's doc)."""

import os
import statistics

import manifest
import stats
from runs import aligned, guest_samples, load_records, points_of, \
    run_spec, say

SPEC = "breakdown-compensate.spec"


def unmeasured_per_miss(pdir, point):
    """x = guest sample - (t_wait_end - host fault) per aligned miss: what
    no device clock saw (the fault's entry before the tracepoint, the way
    back to the guest, TCG's own part).  The host fault time is the record's
    t_host_fault_ns (compensate=on), else the handler's t_fault_ns."""
    recs = load_records(pdir)
    guest = guest_samples(pdir)
    if not aligned(pdir, point, recs, guest):
        return None
    tail = recs[-len(guest):]
    out = []
    for r, g in zip(tail, guest):
        if r["t_wait_end_ns"] == "0":
            continue
        start = int(r.get("t_host_fault_ns") or 0) or int(r["t_fault_ns"])
        out.append(g - (int(r["t_wait_end_ns"]) - start))
    return sorted(out)


def compensate_runs(root, sets, cfg, phase):
    """Run the compensate spec with @sets; per delivery mode, the guest P50
    miss of every run and the pooled unmeasured part x."""
    rc = run_spec(SPEC, root, sets)
    by = {}
    for pn, pt in points_of(SPEC, sets):
        pdir = os.path.join(root, pn)
        s = stats.summarize_point(pdir, pt) if manifest.read(pdir) else {}
        if not s.get("miss_ns_count"):
            continue
        d = by.setdefault(pt["device.delivery"], {"p50": [], "x": []})
        d["p50"].append(s["miss_ns_p50"])
        xi = unmeasured_per_miss(pdir, pt) or []
        d["x"] += xi
        recs = load_records(pdir)
        fills = [r for r in recs if r["waited_loading"] == "0"]
        clocked = sum(1 for r in fills if r.get("t_host_fault_ns", "0") != "0")
        deliv = sorted(int(r["t_decision_start_ns"]) - int(r["t_host_fault_ns"])
                       for r in fills if r.get("t_host_fault_ns", "0") != "0")
        shift = sorted(int(r["t_deadline_model_ns"]) - int(r["t_deadline_ns"])
                       for r in fills)
        say(f"compensate_{phase}_point={pn} "
            f"observed_miss_p50_us={s['miss_ns_p50'] / 1000:.2f} "
            f"observed_miss_p90_us={s['miss_ns_p90'] / 1000:.2f} "
            f"error_pct={abs(s['miss_ns_p50'] - cfg) * 100.0 / cfg:.2f} "
            f"host_fault_clocked={clocked}/{len(fills)} "
            f"measured_delivery_p50_us={stats.percentile(deliv, 50) / 1000:.2f} "
            f"deadline_shift_p50_us={stats.percentile(shift, 50) / 1000:.2f} "
            f"unmeasured_p50_us={stats.percentile(xi, 50) / 1000:.2f}")
    return rc, by


def part_compensate(out, args):
    """Phase "measured": compensate=on, compensate-ns=0 (the per-miss
    measured delivery only); then --calibration-rounds phases with
    compensate-ns = the median unmeasured part x of the previous phase, per
    delivery mode.  x depends on the wait it follows (a shorter NAND wait
    leaves the vCPU's CPU less time to go idle, so its way back is
    cheaper), hence the rounds: each calibrates in the regime the last one
    produced."""
    sets = [f"mio.samples={args.samples}"] if args.samples else []
    cdir = os.path.join(out, "compensate")
    reps = "|".join(str(i) for i in range(1, args.repeats + 1))
    point = next(pt for _, pt in points_of(SPEC, sets))
    cfg = stats.configured_read_ns(point)
    say(f"compensate_configured_us={cfg / 1000:.2f}")
    m_sets = sets + ["device.compensate=on", "device.compensate-ns=0",
                     f"run.repeat={reps}"]
    rc, prev = compensate_runs(os.path.join(cdir, "measured"), m_sets,
                               cfg, "measured")
    for delivery, d in prev.items():
        say(f"observed_miss_p50_error_pct_measured_only_{delivery}="
            f"{abs(statistics.median(d['p50']) - cfg) * 100.0 / cfg:.2f}")
    errors = {}
    for rnd in range(1, args.calibration_rounds + 1):
        cur = {}
        for delivery, d in sorted(prev.items()):
            if not d["x"]:
                continue
            cal = int(round(stats.percentile(sorted(d["x"]), 50)))
            say(f"compensate_ns_round{rnd}_{delivery}={cal}")
            c_sets = sets + ["device.compensate=on",
                             f"device.compensate-ns={cal}",
                             f"device.delivery={delivery}",
                             f"run.repeat={reps}"]
            r, by = compensate_runs(
                os.path.join(cdir, f"round{rnd}-{delivery}-{cal}ns"), c_sets,
                cfg, f"round{rnd}")
            rc |= r
            if by.get(delivery):
                cur[delivery] = by[delivery]
                p50 = statistics.median(by[delivery]["p50"])
                errors[delivery] = abs(p50 - cfg) * 100.0 / cfg
                say(f"observed_miss_p50_us_round{rnd}_{delivery}="
                    f"{p50 / 1000:.2f} observed_miss_p50_error_pct_round{rnd}_"
                    f"{delivery}={errors[delivery]:.2f}")
        prev = cur
    for delivery in sorted(errors):
        say(f"observed_miss_p50_error_pct_{delivery}={errors[delivery]:.2f}")
    if not errors:
        say("observed_miss_p50_error_pct=missing")
        return rc, None
    best = min(errors, key=errors.get)
    say(f"observed_miss_p50_error_delivery={best}")
    return rc, errors[best]
