"""Part fig1 of bench/breakdown/fig1: traced points joined
(tracing/join.py) into per-miss breakdowns, extended with the guest's own
sample, stacked at P50..P99.99 -> fig1.csv, fig1.png, fig1-points.json."""

import os
import shutil
import subprocess
import sys

import components
import gnuplot
import manifest
import stats
import tables
from runs import TOP, aligned, guest_samples, load_records, points_of, \
    run_spec, say

JOIN = os.path.join(TOP, "tracing", "join.py")
# the joiner's components, nand_wait_ns split at the deadline: the modeled
# wait, and the overshoot past it (the waiting thread ran late: preempted
# or descheduled); guest_other_ns: the guest-observed latency outside the
# joined host interval (fig1's doc)
_AFTER_WAIT = components.COMPONENTS.index("nand_wait_ns") + 1
COMPONENTS = (components.COMPONENTS[:_AFTER_WAIT] + ["wait_overshoot_ns"] +
              components.COMPONENTS[_AFTER_WAIT:] + ["guest_other_ns"])
FIG1_HEADER = (["profile_read_ns", "configured_ns", "mode", "bql",
                "percentile", "n"] + COMPONENTS +
               ["total_ns", "guest_observed_pct_ns", "aligned"])
TITLES = dict(components.TITLES,
              wait_overshoot_ns="wait overshoot (late)",
              guest_other_ns="TCG/guest (not host-traced)")
COLORS = {"delivery_ns": "#7b2cbf", "bql_wait_ns": "#2a9d8f",
          "model_ns": "#8ecae6", "unmap_ns": "#f4a261",
          "nand_wait_ns": "#f1e05a", "wait_overshoot_ns": "#b08900",
          "map_ns": "#1f78b4", "resume_ns": "#e63946",
          "guest_other_ns": "#333333"}


def panel_mode(point):
    """The miss path a point ran: mmio, or uffd with its delivery
    (uffd-poll, uffd-tlb)."""
    mode = point["device.mode"]
    delivery = point.get("device.delivery")
    return f"{mode}-{delivery}" if delivery else mode


def nand_component(recs):
    """Modeled NAND time per filled miss: t_deadline_model - t_decision_start
    (tR + transfer + queueing on the LUN/channel timelines)."""
    return sorted(int(r["t_deadline_model_ns"]) - int(r["t_decision_start_ns"])
                  for r in recs
                  if r["waited_loading"] == "0" and r["t_deadline_model_ns"]
                  and int(r["t_deadline_model_ns"]) > 0)


def analyze_fig1_point(pname, point, pdir):
    """Join one traced point; returns a dict of results."""
    res = {"point": pname, "profile_read_ns": int(point["device.nand-read-ns"]),
           "mode": panel_mode(point), "bql": point["device.bql"]}
    if not manifest.is_ok(pdir):
        res["error"] = "point failed"
        return res
    bd = os.path.join(pdir, "breakdown.csv")
    proc = subprocess.run([sys.executable, JOIN, "--device",
                           os.path.join(pdir, "misses.csv"), "--host",
                           os.path.join(pdir, "host-events.csv"), "-o", bd],
                          capture_output=True, text=True)
    with open(os.path.join(pdir, "join.out"), "w") as f:
        f.write(proc.stdout + proc.stderr)
    if proc.returncode:
        res["error"] = "join failed: " + proc.stderr.strip()
        return res
    kv = tables.parse_kv(proc.stdout)
    res["rows"] = int(kv["breakdown_rows"])
    res["unmatched"] = int(kv["breakdown_unmatched"])
    res["sum_error_max_pct"] = float(kv["breakdown_sum_error_max_pct"])

    recs = load_records(pdir)
    cfg = stats.configured_read_ns(point)
    res["configured_ns"] = cfg
    nc = nand_component(recs)
    res["nand_component_p50_ns"] = stats.percentile(nc, 50)
    res["nand_component_p50_error_pct"] = (abs(stats.percentile(nc, 50) - cfg) * 100.0
                                           / cfg)

    by_seq = {r["seq"]: r for r in tables.read_csv(bd)}
    guest = guest_samples(pdir)
    res["samples"] = len(guest)
    res["guest_p50_ns"] = stats.percentile(sorted(guest), 50)
    res["aligned"] = aligned(pdir, point, recs, guest)
    tail = recs[-len(guest):] if guest else []
    # every matched row of the tail, extended with guest_other
    rows, neg, unmatched_tail = [], 0, 0
    for rec, g in zip(tail, guest):
        b = by_seq.get(rec["seq"])
        if not b or b["matched"] != "1":
            unmatched_tail += 1
            continue
        comp = {c: int(b[c]) for c in components.COMPONENTS}
        total = int(b["total_ns"])
        over = min(max(int(b["wait_overshoot_ns"] or 0), 0),
                   comp["nand_wait_ns"])
        comp["nand_wait_ns"] -= over
        comp["wait_overshoot_ns"] = over
        comp["guest_other_ns"] = g - total if res["aligned"] else 0.0
        if comp["guest_other_ns"] < 0:
            neg += 1
        rows.append([comp[c] for c in COMPONENTS] +
                    [total + comp["guest_other_ns"]])
    res["guest_other_negative"] = neg
    res["tail_unmatched"] = unmatched_tail
    res["table"] = stats.at_total(rows, len(COMPONENTS) + 1)
    if rows:
        s = [sum(r[:-1]) for r in rows]
        res["ext_sum_error_max_pct"] = max(
            abs(a - r[-1]) * 100.0 / r[-1] if r[-1] else 0.0
            for a, r in zip(s, rows))
        for j, c in enumerate(COMPONENTS):
            res["p50_" + c] = stats.percentile(sorted(r[j] for r in rows), 50)
    return res


def fig1_rows(results):
    """The rows of fig1.csv (FIG1_HEADER): per point and percentile, the
    at_total stack and the guest's own percentile."""
    out = []
    for r in results:
        if "table" not in r:
            continue
        gs = sorted(guest_samples(r["pdir"]))
        for p, n, vals in r["table"]:
            out.append([r["profile_read_ns"], r["configured_ns"], r["mode"],
                        r["bql"], p, n] + ["%.1f" % v for v in vals] +
                       ["%.1f" % stats.percentile(gs, p), int(r["aligned"])])
    return out


def panel_rows(rows, key):
    """Datablock rows of one panel: label (percentile and total), then each
    component's share of the total in %."""
    out = []
    for r in rows:
        if (r["profile_read_ns"], r["mode"], r["bql"]) != key:
            continue
        tot = float(r["total_ns"])
        out.append([f"P{r['percentile']}\\n{fmt_us(tot)}"] +
                   [100.0 * float(r[c]) / tot if tot > 0 else 0
                    for c in COMPONENTS])
    return out


def plot(rows, fdir):
    """fig1.png: 2 x 6 panels (profile x mode-delivery/bql), 5 stacked bars each
    (P50 .. P99.99) as shares of the total; x labels carry the absolute
    total.  @rows: fig1.csv's rows as dicts."""
    if not shutil.which("gnuplot"):
        say("fig1: gnuplot missing (bench/breakdown/install-deps.sh)")
        return None
    panels = []
    for r in rows:
        k = (r["profile_read_ns"], r["mode"], r["bql"])
        if k not in panels:
            panels.append(k)
    rows_ = 2 if len(panels) > 1 else 1
    cols_ = max(1, (len(panels) + rows_ - 1) // rows_)
    key_h, top = 0.08, 0.94     # key strip at the bottom, title on top
    w, h = 1.0 / cols_, (top - key_h) / rows_
    gp = [gnuplot.preamble(os.path.join(fdir, "fig1.png"), max(1800, 450 * cols_), 950,
                           font=",9")]
    gp += [gnuplot.datablock(f"p{i}", panel_rows(rows, k),
                             f"{k[0]} {k[1]} bql={k[2]}: label "
                             + " ".join(COMPONENTS))
           for i, k in enumerate(panels)]
    gp += ["unset grid", "set key nobox", "set style data histograms",
           "set style histogram rowstacked",
           "set style fill solid 0.9 border -1", "set boxwidth 0.7",
           "set key off", "set xtics font ',8'",
           "set multiplot title 'cxl-ssd Fig. 1: miss latency breakdown at "
           "P50..P99.99, share of the guest-observed miss (sequential chase "
           "over 1.5x the cache, one thread, TCG; bar label = total)'"]
    for i, k in enumerate(panels):
        row, col = divmod(i, cols_)
        gp.append(f"set origin {col * w:.4f},{key_h + (rows_ - 1 - row) * h:.4f}")
        gp.append(f"set size {w:.4f},{h:.4f}")
        gp += ["set yrange [0:100]", 'set ylabel "share (%)"']
        cfg = int(k[0]) + 3200
        gp.append(f'set title "tR {int(k[0]) / 1000:g} us ({cfg / 1000:g} us '
                  f'configured), {k[1]}, bql={k[2]}"')
        plots = []
        for j, c in enumerate(COMPONENTS):
            xt = ":xtic(1)" if j == 0 else ""
            plots.append(f"$p{i} using {j + 2}{xt} "
                         f"notitle lc rgb '{COLORS[c]}'")
        gp.append("plot " + ", ".join(plots))
    # the key: an empty plot across the bottom strip
    gp += ["set origin 0,0", f"set size 1,{key_h}", "unset title",
           "unset border", "unset xtics", "unset ytics", "unset ylabel",
           "set yrange [0:1]", "set xrange [0:1]",
           "set key horizontal center center maxrows 1 font ',10' "
           "samplen 2 width 1",
           "set style fill solid 0.9 border -1",
           "plot " + ", ".join(f"NaN with boxes lc rgb '{COLORS[c]}' "
                               f"title '{TITLES[c]}'" for c in COMPONENTS)]
    gp.append("unset multiplot")
    try:
        return gnuplot.save_plot(fdir, "fig1", "\n".join(gp) + "\n")
    except RuntimeError as e:
        say(f"fig1: {e}")
        return None


def fmt_us(ns):
    us = ns / 1000.0
    return "%.0f us" % us if us >= 100 else "%.1f us" % us


def part_fig1(out, args):
    sets = [f"mio.samples={args.samples}"] if args.samples else []
    if args.quick:
        # compensate=on: the records then carry the device's own host
        # fault time, which test-breakdown compares with the tracer's
        sets += ["device.nand-read-ns=3000", "device.mode=uffd|mmio",
                 "device.bql=off", "device.compensate=on"]
    fdir = os.path.join(out, "fig1")
    rc = run_spec("breakdown-fig1.spec", fdir, sets)
    results = []
    for pname, point in points_of("breakdown-fig1.spec", sets):
        pdir = os.path.join(fdir, pname)
        r = analyze_fig1_point(pname, point, pdir)
        r["pdir"] = pdir
        results.append(r)
    csv_path = os.path.join(fdir, "fig1.csv")
    tables.write_csv(csv_path, FIG1_HEADER, fig1_rows(results))
    png = plot(tables.read_csv(csv_path), fdir)
    tables.write_json(os.path.join(fdir, "fig1-points.json"),
                      [{k: v for k, v in r.items() if k != "table"}
                       for r in results])
    good = [r for r in results if "rows" in r]
    for r in results:
        if "error" in r:
            say(f"point={r['point']} error={r['error'].replace(' ', '_')}")
            continue
        say(f"point={r['point']} rows={r['rows']} unmatched={r['unmatched']} "
            f"sum_error_max_pct={r['sum_error_max_pct']:.6f} "
            f"aligned={int(r['aligned'])} "
            f"guest_p50_us={r['guest_p50_ns'] / 1000:.2f} "
            f"nand_component_p50_us={r['nand_component_p50_ns'] / 1000:.2f} "
            f"configured_us={r['configured_ns'] / 1000:.2f} " +
            " ".join(f"p50_{c[:-3]}_us={r['p50_' + c] / 1000:.2f}"
                     for c in COMPONENTS if "p50_" + c in r))
    say(f"fig1_csv={csv_path}")
    say(f"fig1_png={png or 'not_drawn'}")
    summary = {
        "breakdown_rows": sum(r["rows"] for r in good),
        "breakdown_unmatched": sum(r["unmatched"] for r in good),
        "breakdown_sum_error_max_pct": max(
            [r["sum_error_max_pct"] for r in good] +
            [r.get("ext_sum_error_max_pct", 0.0) for r in good] or [float("nan")]),
        "nand_component_p50_error_pct": max(
            [r["nand_component_p50_error_pct"] for r in good] or [float("nan")]),
        "points_failed": len(results) - len(good),
        "results": results,
    }
    say(f"breakdown_points={len(good)} breakdown_points_failed="
        f"{summary['points_failed']}")
    return rc, summary
